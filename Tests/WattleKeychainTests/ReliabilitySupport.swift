import Foundation
import TestProxies
import Testing

@testable import WattleKeychain

#if canImport(Glibc)
import Glibc
#endif

/// Knobs and figures of the reliability suite (RELIABILITY.md).
///
/// `make test` runs short versions; `make soak` sets the environment for the long ones:
/// `WATTLE_KILL_ROUNDS`, `WATTLE_CONTENTION_SECONDS`, `WATTLE_CONTENTION_PROCESSES`,
/// `WATTLE_TAMPER=full`. Each test prints one `[reliability]` line with what it measured, and
/// appends it to `$WATTLE_RELIABILITY_REPORT` when that is set.
enum Reliability {
    static func integer(_ name: String, default value: Int) -> Int {
        ProcessInfo.processInfo.environment[name].flatMap { Int($0) } ?? value
    }

    static func double(_ name: String, default value: Double) -> Double {
        ProcessInfo.processInfo.environment[name].flatMap { Double($0) } ?? value
    }

    static var isFullTamper: Bool { ProcessInfo.processInfo.environment["WATTLE_TAMPER"] == "full" }

    static func report(_ line: String) {
        let text = "[reliability] \(line)"
        print(text)
        if let path = ProcessInfo.processInfo.environment["WATTLE_RELIABILITY_REPORT"] {
            let descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND, 0o644)
            guard descriptor >= 0 else { return }
            defer { close(descriptor) }
            let bytes = Array((text + "\n").utf8)
            _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        }
    }

    /// `KeychainError.decode`, `KeychainFileError.cannotCreate`...: an error's type and case.
    static func name(_ error: any Error) -> String {
        if let error = error as? KeychainError {
            let cases: [(KeychainError, String)] = [
                (.decode, "decode"), (.authFailed, "authFailed"), (.unimplemented, "unimplemented"), (.io, "io"),
                (.notAvailable, "notAvailable"), (.readOnly, "readOnly"), (.diskFull, "diskFull"), (.param, "param"),
                (.allocate, "allocate"), (.itemNotFound, "itemNotFound"), (.duplicateItem, "duplicateItem"),
                (.interactionNotAllowed, "interactionNotAllowed"), (.dataTooLarge, "dataTooLarge"),
            ]
            return "KeychainError." + (cases.first { $0.0 == error }?.1 ?? "status \(error.status)")
        }
        if let error = error as? KeychainFileError {
            return "KeychainFileError.\(error.reason)" + (error.errno.map { " (errno \($0))" } ?? "")
        }
        return "\(type(of: error))"
    }

    /// A new empty folder under the temporary directory.
    static func temporaryFolder(_ prefix: String) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// `PRAGMA integrity_check` of a keychain file.
    static func integrity(_ path: String) throws -> [String] {
        try SQLiteConnection(path: path, create: false).strings("PRAGMA integrity_check")
    }

    /// Runs a program and returns its exit status and combined output.
    @discardableResult
    static func run(_ executable: String, _ arguments: [String]) -> (status: Int32, output: String) {
        var environment = ProcessInfo.processInfo.environment
        environment["SWIFT_BACKTRACE"] = "enable=no"  // a crash reports at once, without the backtracer
        // posix_spawn, not Foundation's Process (see ChildProcess).
        let process: ChildProcess
        do { process = try ChildProcess(executable, arguments, environment: environment) } catch {
            return (-1, "\(error)")
        }
        let (output, errors) = process.readToEnd()
        let status = process.waitForExit()
        return (status, String(decoding: output + errors, as: UTF8.self))
    }
}

/// Mounting file systems for the disk-full and read-only tests: needs root (or CAP_SYS_ADMIN)
/// and a sandbox that allows `mount`; otherwise those tests are skipped with the reason.
enum Mounting {
    /// Why mounting is impossible here, or nil when a probe mount worked.
    static let unavailableReason: String? = {
        guard geteuid() == 0 else { return "mounting a tmpfs needs root; running as uid \(geteuid())" }
        guard FileManager.default.isExecutableFile(atPath: "/bin/mount") else { return "/bin/mount is missing" }
        guard let folder = try? Reliability.temporaryFolder("wattle-mount-probe") else {
            return "cannot create a temporary folder"
        }
        defer { try? FileManager.default.removeItem(at: folder) }
        let result = Reliability.run("/bin/mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", folder.path])
        guard result.status == 0 else {
            return
                "mount -t tmpfs failed (status \(result.status)): \(result.output.trimmingCharacters(in: .whitespacesAndNewlines))"
        }
        Reliability.run("/bin/umount", [folder.path])
        return nil
    }()

    static var isAvailable: Bool { unavailableReason == nil }

    static func mountTmpfs(_ folder: URL, size: String) throws {
        let result = Reliability.run(
            "/bin/mount", ["-t", "tmpfs", "-o", "size=\(size),mode=0700", "tmpfs", folder.path])
        try #require(result.status == 0, "mount tmpfs: \(result.output)")
    }

    /// Makes `folder` read-only in place (a read-only bind mount of itself).
    static func makeReadOnly(_ folder: URL) throws {
        let bind = Reliability.run("/bin/mount", ["--bind", folder.path, folder.path])
        try #require(bind.status == 0, "mount --bind: \(bind.output)")
        let remount = Reliability.run("/bin/mount", ["-o", "remount,bind,ro", folder.path])
        if remount.status != 0 { unmount(folder) }
        try #require(remount.status == 0, "remount read-only: \(remount.output)")
    }

    static func unmount(_ folder: URL) {
        if Reliability.run("/bin/umount", [folder.path]).status != 0 {
            Reliability.run("/bin/umount", ["-l", folder.path])
        }
    }
}
