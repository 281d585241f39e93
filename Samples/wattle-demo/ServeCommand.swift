import ArgumentParser
import Foundation
import Wattle
import WattleDemoServer

/// `wattle serve`: the demo API alone, for trying commands.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the demo API over HTTPS on 127.0.0.1 with a fresh self-signed certificate.")

    @Option(help: "The port (0 picks a free one).")
    var port: Int = 8443

    @Flag(help: "Serve plain HTTP instead of HTTPS.")
    var http = false

    @Option(name: .customLong("token-lifetime"), help: "Seconds an access token lives.")
    var tokenLifetime: Int = 300

    func run() async throws {
        let identity = try TLSIdentity.selfSigned(names: ["localhost"], addresses: ["127.0.0.1"])
        let server = try await DemoServer.start(port: port, tls: http ? nil : identity)
        server.api.configure { $0.accessTokenLifetime = .seconds(tokenLifetime) }
        print("Demo API on \(server.baseURL.absoluteString)  (user demo, password wattle)")
        if !http {
            print("Self-signed certificate pin: \(try PublicKeyPin.pin(forCertificatePEM: identity.certificatePEM))")
            print(
                "Try: wattle --allow-self-signed 127.0.0.1 POST \(server.url("api/login").absoluteString) username=demo password=wattle"
            )
        }
        print("Press Ctrl-C to stop.")
        // Flush so scripts reading our stdout see the URL at once.
        fflush(nil)
        while true { try await Task.sleep(for: .seconds(3600)) }
    }
}
