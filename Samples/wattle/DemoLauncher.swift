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
        abstract: "Run the demo: HTTPS with a self-signed certificate, login, keychain, refresh, refusal.",
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
        let argv = [path, subcommand] + arguments
        var cArguments = argv.map { strdup($0) }
        cArguments.append(nil)
        fflush(nil)
        execv(path, cArguments)
        let reason = String(cString: strerror(errno))
        for argument in cArguments { free(argument) }
        throw CLIError.failed("cannot start \(path): \(reason)")
    }

    /// `wattle-demo` in the folder of the running executable.
    static func programPath() throws -> String {
        var buffer = [CChar](repeating: 0, count: 4096)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard length > 0 else {
            throw CLIError.failed("cannot find the running program (/proc/self/exe): \(String(cString: strerror(errno)))")
        }
        let executable = String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let folder = executable.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        let path = folder + "/" + programName
        guard access(path, X_OK) == 0 else {
            throw CLIError.failed(
                "\(programName) was not found beside wattle (\(path)); build it with `swift build --product \(programName)`")
        }
        return path
    }
}
