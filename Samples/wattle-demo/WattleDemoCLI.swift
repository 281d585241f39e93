import ArgumentParser

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
}
