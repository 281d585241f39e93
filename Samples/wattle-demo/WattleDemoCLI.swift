import ArgumentParser
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// `wattle-demo`: the demo and the demo server, kept out of the `wattle` binary.
///
/// The demo server brings SwiftNIO, BoringSSL, swift-crypto and swift-certificates; in the
/// `wattle` binary they would be loaded (and relocated) by every `wattle GET`. `wattle demo` and
/// `wattle serve` replace their process with this program (`exec`), so users type the same
/// commands as before.
@main
struct WattleDemoCLI: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "wattle-demo",
        abstract: "The Wattle demo and the demo API server (run as `wattle demo` and `wattle serve`).",
        subcommands: [DemoCommand.self, ServeCommand.self],
        defaultSubcommand: DemoCommand.self
    )

    /// Runs the command; an error is one line on stderr and exit 1, as `wattle`'s own (ArgumentParser
    /// would print its usage block and exit 64 for a bad option, naming `wattle-demo`). Help and
    /// an `ExitCode` leave as ArgumentParser has them.
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            if error is ExitCode || exitCode(for: error) == .success { exit(withError: error) }
            let lines = message(for: error).split(whereSeparator: \.isNewline)
                .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            var text = lines.joined(separator: "; ")
            if text.hasPrefix("Error: ") { text.removeFirst("Error: ".count) }
            FileHandle.standardError.write(
                Data("wattle: \(text) (see wattle demo --help or wattle serve --help)\n".utf8))
            Glibc.exit(1)
        }
    }
}
