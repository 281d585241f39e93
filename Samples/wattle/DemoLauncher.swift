import ArgumentParser

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// `wattle demo`: runs the demo, in the `wattle-demo` program beside this one.
struct DemoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract:
            "Run the demo: HTTPS with a self-signed certificate, login, keychain, refresh, client credentials, refusal.",
        discussion: "Runs `wattle-demo demo`; `wattle demo --help` lists its options.")

    @Argument(parsing: .captureForPassthrough, help: "Options for the demo (see `wattle demo --help`).")
    var arguments: [String] = []

    func run() throws { try DemoLauncher.replaceProcess(subcommand: "demo", arguments: arguments) }
}

/// `wattle serve`: runs the demo API server, in the `wattle-demo` program beside this one.
struct ServeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the demo API over HTTPS on 127.0.0.1 with a fresh self-signed certificate.",
        discussion: "Runs `wattle-demo serve`; `wattle serve --help` lists its options.")

    @Argument(parsing: .captureForPassthrough, help: "Options for the server (see `wattle serve --help`).")
    var arguments: [String] = []

    func run() throws { try DemoLauncher.replaceProcess(subcommand: "serve", arguments: arguments) }
}

/// Starts `wattle-demo`, which holds the demo and its server (SwiftNIO, BoringSSL and the
/// certificate libraries), so that they stay out of the `wattle` binary every request starts.
enum DemoLauncher {
    /// The program's file name; it is looked for beside the running `wattle`.
    static let programName = "wattle-demo"

    /// Replaces this process with `wattle-demo <subcommand> <arguments>` (`execv`): same pid,
    /// same terminal, its exit code is ours. Returns only by throwing, when it cannot start.
    static func replaceProcess(subcommand: String, arguments: [String]) throws {
        let path = try programPath()
        var cArguments = [strdup(path), strdup(subcommand)] + arguments.map { strdup($0) }
        cArguments.append(nil)
        fflush(nil)
        execv(path, cArguments)
        let reason = String(cString: strerror(errno))
        for argument in cArguments { free(argument) }
        throw CLIError.failed("cannot start \(display(path)): \(reason)")
    }

    /// A C path for a message (bytes that are not UTF-8 shown as U+FFFD).
    static func display(_ path: [CChar]) -> String {
        String(decoding: path.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `wattle-demo` in the folder of the running executable, as the bytes of a C path (a
    /// folder's name need not be UTF-8).
    static func programPath() throws -> [CChar] {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, buffer.count)
        guard length > 0 else {
            throw CLIError.failed(
                "cannot find the running program (/proc/self/exe): \(String(cString: strerror(errno)))")
        }
        guard length < buffer.count else { throw CLIError.failed("the path of the running program is too long") }
        guard let slash = buffer[0..<length].lastIndex(of: CChar(UInt8(ascii: "/"))) else {
            throw CLIError.failed("cannot find the folder of the running program")
        }
        let path = Array(buffer[...slash]) + programName.utf8CString
        guard access(path, X_OK) == 0 else {
            throw CLIError.failed(
                "\(programName) was not found beside wattle (\(display(path))); build it with `swift build --product \(programName)`"
            )
        }
        return path
    }
}
