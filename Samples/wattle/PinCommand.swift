import ArgumentParser
import Wattle

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `wattle pin HOST[:PORT]` or `wattle pin --pem FILE`: prints a `sha256//` pin.
struct PinCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pin",
        abstract: "Print the sha256// public-key pin of a server or a PEM certificate file, for --pin.")

    @Argument(help: "HOST or HOST:PORT (port 443 by default).")
    var server: String?

    @Option(help: "A PEM certificate file instead of a server.")
    var pem: String?

    func run() async throws {
        try await AuthCommand.reporting {
            if let pem {
                let text = try String(contentsOfFile: pem, encoding: .utf8)
                for pin in try PublicKeyPin.pins(forPEM: text) { print(pin) }
                return
            }
            guard let server else { throw CLIError.usage("give HOST[:PORT] or --pem FILE") }
            var host = server
            var port = 443
            if let colon = server.lastIndex(of: ":"), let parsed = Int(server[server.index(after: colon)...]) {
                host = String(server[..<colon])
                port = parsed
            }
            print(try await PublicKeyPin.pin(ofServer: host, port: port))
        }
    }
}
