import Foundation
import Testing
import Wattle
import WattleDemoServer

@Suite("The wattle CLI: --cert and --cert-key present a client certificate to the URL's origin", .serialized)
struct CLIClientCertificateTests {
    @Test("a certificate the server's authority issued opens it, from two files or one; without it, exit 2 saying so; bad files exit 1")
    func clientCertificate() async throws {
        let authority = try TLSIdentity.certificateAuthority(name: "CLI test client CA")
        let client = try authority.issuedClientCertificate(commonName: "cli")
        let server = try await DemoServer.start(
            tls: try TLSIdentity.selfSigned(names: ["localhost"], addresses: ["127.0.0.1"]),
            clientCertificateAuthority: authority.certificatePEM)
        defer { Task { try? await server.stop() } }
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let certificate = folder.appendingPathComponent("client.pem").path
        let key = folder.appendingPathComponent("client.key").path
        let both = folder.appendingPathComponent("both.pem").path
        try Data(client.certificatePEM.utf8).write(to: URL(fileURLWithPath: certificate))
        try Data(client.privateKeyPEM.utf8).write(to: URL(fileURLWithPath: key))
        try Data((client.certificatePEM + "\n" + client.privateKeyPEM).utf8).write(to: URL(fileURLWithPath: both))
        let url = "https://127.0.0.1:\(server.port)/echo"
        let trust = ["--allow-self-signed", "127.0.0.1"]

        let separate = try await CLI.run(trust + ["--cert", certificate, "--cert-key", key, url])
        #expect(separate.status == 0, "\(separate.stderr)")
        let combined = try await CLI.run(trust + ["--cert", both, url])
        #expect(combined.status == 0, "\(combined.stderr)")

        // (Under TLS 1.3 a client slow to send may find the connection closed before it reads
        // the server's alert: up to 3 runs.)
        var without = try await CLI.run(trust + [url])
        for _ in 0..<2 where !without.stderr.contains("none is configured") { without = try await CLI.run(trust + [url]) }
        #expect(without.status == 2)
        #expect(without.stderr.contains("Client certificate for 127.0.0.1") && without.stderr.contains("none is configured"), "\(without.stderr)")

        let keyBody = client.privateKeyPEM.split(separator: "\n")[1]
        let keyOnly = try await CLI.run(trust + ["--cert", key, url])
        #expect(keyOnly.status == 1 && keyOnly.stderr.contains("not a PEM certificate"), "\(keyOnly.stderr)")
        let missing = try await CLI.run(trust + ["--cert", folder.appendingPathComponent("none.pem").path, url])
        #expect(missing.status == 1 && missing.stderr.contains("none.pem"), "\(missing.stderr)")
        let lone = try await CLI.run(trust + ["--cert-key", key, url])
        #expect(lone.status == 1 && lone.stderr.contains("--cert-key goes with --cert"), "\(lone.stderr)")
        for result in [separate, combined, without, keyOnly, missing, lone] {
            #expect(!result.stderr.contains(keyBody))
        }
    }
}
