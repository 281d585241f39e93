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

    @Argument(help: "HOST, HOST:PORT (port 443 by default) or an https:// URL.")
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
            let (host, port) = try Self.hostAndPort(server)
            print(try await PublicKeyPin.pin(ofServer: host, port: port))
        }
    }

    /// The host and port of `HOST`, `HOST:PORT`, `[IPv6]:PORT` or an `https://` URL (whose
    /// path is ignored: the pin is the server's).
    static func hostAndPort(_ server: String) throws -> (host: String, port: Int) {
        let usage = CLIError.usage("wattle pin takes HOST, HOST:PORT or an https:// URL, not \"\(server)\"")
        if server.contains("://") {
            guard let url = URL(string: server), url.scheme?.lowercased() == "https", let host = url.host,
                !host.isEmpty
            else { throw usage }
            return (host, url.port ?? 443)
        }
        var host = Substring(server)
        var port = 443
        if let colon = server.lastIndex(of: ":"), !server[..<colon].contains(":") || server[..<colon].hasSuffix("]") {
            guard let parsed = Int(server[server.index(after: colon)...]), (1...65535).contains(parsed) else {
                throw usage
            }
            host = server[..<colon]
            port = parsed
        }
        if host.hasPrefix("["), host.hasSuffix("]") { host = host.dropFirst().dropLast() }
        guard !host.isEmpty, !host.contains("/"), !host.contains("@") else { throw usage }
        return (String(host), port)
    }
}
