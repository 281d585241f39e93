import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Splits a fuzzer's bytes into the pieces a target needs, deterministically.
public struct FuzzInput {
    private let bytes: [UInt8]
    private var index = 0

    /// Wraps one input.
    public init(_ buffer: UnsafeRawBufferPointer) { bytes = Array(buffer) }

    /// Wraps one input.
    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// Whether every byte was used.
    public var isAtEnd: Bool { index >= bytes.count }

    /// The next byte, or 0 at the end.
    public mutating func byte() -> UInt8 {
        guard index < bytes.count else { return 0 }
        defer { index += 1 }
        return bytes[index]
    }

    /// Bytes up to the next 0xFF separator (or the end); the separator is consumed.
    public mutating func field() -> [UInt8] {
        let start = index
        while index < bytes.count, bytes[index] != 0xFF { index += 1 }
        let result = Array(bytes[start..<index])
        if index < bytes.count { index += 1 }
        return result
    }

    /// ``field()`` as text (invalid UTF-8 repaired, as `String(decoding:)` does).
    public mutating func text() -> String { String(decoding: field(), as: UTF8.self) }

    /// Everything not used yet.
    public mutating func rest() -> [UInt8] {
        defer { index = bytes.count }
        return index < bytes.count ? Array(bytes[index...]) : []
    }
}

/// A fuzz target's input callback: libFuzzer's `LLVMFuzzerTestOneInput` signature.
public typealias FuzzCallback = @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt

#if WATTLE_FUZZ
    /// libFuzzer's driver, for programs that have their own `main` (libclang_rt.fuzzer_no_main).
    @_silgen_name("LLVMFuzzerRunDriver")
    private func LLVMFuzzerRunDriver(
        _ argc: UnsafeMutablePointer<CInt>,
        _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
        _ callback: FuzzCallback
    ) -> CInt
#endif

/// The `main` of every fuzz target.
///
/// Built by `make fuzz` (`-D WATTLE_FUZZ`, sanitizer coverage, ASan, and libFuzzer's
/// `fuzzer_no_main` runtime), it hands the command line to libFuzzer. Built normally, it runs
/// the target on every file named on the command line (files, or folders of files), which
/// makes the committed corpus a regression test. A broken property stops the process
/// (`fatalError`), which libFuzzer records as a crash with the input that caused it.
///
/// libFuzzer's own `main` (what `-sanitize=fuzzer` links) is not used: it collides with the
/// entry point SwiftPM gives executables on Linux (`--defsym main=<target>_main`).
public enum FuzzMain {
    /// Runs libFuzzer or the replay, then exits.
    public static func run(name: String, _ callback: FuzzCallback) -> Never {
        #if WATTLE_FUZZ
            var argc = CommandLine.argc
            var argv = CommandLine.unsafeArgv
            exit(LLVMFuzzerRunDriver(&argc, &argv, callback))
        #else
            replay(name: name, callback)
        #endif
    }

    /// Runs `callback` on each input file; prints how many ran. Exits 2 when a path is unreadable.
    static func replay(name: String, _ callback: FuzzCallback) -> Never {
        var files: [URL] = []
        for argument in CommandLine.arguments.dropFirst() {
            let url = URL(fileURLWithPath: argument)
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
                FileHandle.standardError.write(Data("\(name): no such file or folder: \(argument)\n".utf8))
                exit(2)
            }
            if isDirectory.boolValue {
                let names = (try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []
                files += names.sorted().map { url.appendingPathComponent($0) }
            } else {
                files.append(url)
            }
        }
        if files.isEmpty {
            FileHandle.standardError.write(
                Data("usage: \(name) FILE|FOLDER... (replays inputs; `make fuzz` builds the libFuzzer version)\n".utf8))
            exit(2)
        }
        for file in files {
            guard let data = try? Data(contentsOf: file) else {
                FileHandle.standardError.write(Data("\(name): cannot read \(file.path)\n".utf8))
                exit(2)
            }
            _ = data.withUnsafeBytes { callback($0.bindMemory(to: UInt8.self).baseAddress, $0.count) }
        }
        print("\(name): replayed \(files.count) inputs")
        exit(0)
    }
}

/// Stops the process with a message when a property the target checks does not hold (libFuzzer
/// then saves the input as a crash).
public func fuzzCheck(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError("fuzz property broken: \(message())") }
}
