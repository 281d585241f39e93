import Foundation
import Testing
import Wattle
import WattleDemoServer

@Suite("The wattle CLI: --cert, --cert-key and --cert-name (wattle cert import) present a client certificate to the URL's origin", .serialized)
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

    @Test("cert import keeps a certificate sealed in the keychain: --cert-name presents it with the key file gone; list and remove; bad names and flags exit 1")
    func keptCertificate() async throws {
        let authority = try TLSIdentity.certificateAuthority(name: "CLI test client CA (kept)")
        let client = try authority.issuedClientCertificate(commonName: "cli-kept")
        let server = try await DemoServer.start(
            tls: try TLSIdentity.selfSigned(names: ["localhost"], addresses: ["127.0.0.1"]),
            clientCertificateAuthority: authority.certificatePEM)
        defer { Task { try? await server.stop() } }
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let certificate = folder.appendingPathComponent("client.pem")
        let key = folder.appendingPathComponent("client.key")
        try Data(client.certificatePEM.utf8).write(to: certificate)
        try Data(client.privateKeyPEM.utf8).write(to: key)
        let keychain = folder.appendingPathComponent("cli.keychain").path
        let store = ["--keychain", keychain]
        let url = "https://127.0.0.1:\(server.port)/echo"
        let trust = ["--allow-self-signed", "127.0.0.1"]

        // Nothing kept yet: no keychain file is made by asking.
        let none = try await CLI.run(trust + store + ["--cert-name", "work", url])
        #expect(none.status == 1 && none.stderr.contains("no client certificate named \"work\""), "\(none.stderr)")
        let emptyList = try await CLI.run(["cert", "list"] + store)
        #expect(emptyList.status == 1 && emptyList.stderr.contains("no client certificates"), "\(emptyList.stderr)")
        #expect(!FileManager.default.fileExists(atPath: keychain))

        let imported = try await CLI.run(["cert", "import", "work", certificate.path, key.path] + store)
        #expect(imported.status == 0, "\(imported.stderr)")
        let pin = try PublicKeyPin.pin(forCertificatePEM: client.certificatePEM)
        #expect(imported.text.contains("Kept client certificate work (1 certificate, key \(pin))"), "\(imported.text)")
        try FileManager.default.removeItem(at: key)

        let presented = try await CLI.run(trust + store + ["--cert-name", "work", url])
        #expect(presented.status == 0, "\(presented.stderr)")
        let listed = try await CLI.run(["cert", "list"] + store)
        #expect(listed.status == 0 && listed.text == "work  1 certificate  \(pin)\n", "\(listed.text)\(listed.stderr)")

        // The key is sealed: neither the keychain file nor its WAL holds any line of it.
        let keyLines = client.privateKeyPEM.split(separator: "\n").filter { !$0.hasPrefix("-----") }
        for file in try FileManager.default.contentsOfDirectory(atPath: folder.path) where file.hasPrefix("cli.keychain") {
            let bytes = try Data(contentsOf: folder.appendingPathComponent(file))
            #expect(!keyLines.contains { bytes.range(of: Data($0.utf8)) != nil }, "\(file) holds the key in the clear")
        }

        let both = try await CLI.run(trust + store + ["--cert-name", "work", "--cert", certificate.path, url])
        #expect(both.status == 1 && both.stderr.contains("not both"), "\(both.stderr)")
        let withKey = try await CLI.run(trust + store + ["--cert-name", "work", "--cert-key", certificate.path, url])
        #expect(withKey.status == 1 && withKey.stderr.contains("--cert-key goes with --cert"), "\(withKey.stderr)")
        let other = try await CLI.run(trust + store + ["--cert-name", "home", url])
        #expect(other.status == 1 && other.stderr.contains("wattle cert import home"), "\(other.stderr)")
        let badImport = try await CLI.run(["cert", "import", "bad", certificate.path] + store)
        #expect(badImport.status == 1 && badImport.stderr.contains("not a PEM private key"), "\(badImport.stderr)")

        let removed = try await CLI.run(["cert", "remove", "work"] + store)
        #expect(removed.status == 0 && removed.text.contains("Forgot client certificate work"), "\(removed.stderr)")
        let again = try await CLI.run(["cert", "remove", "work"] + store)
        #expect(again.status == 1 && again.stderr.contains("no client certificate named \"work\""), "\(again.stderr)")
        var refused = try await CLI.run(trust + store + ["--cert-name", "work", url])
        #expect(refused.status == 1, "\(refused.stderr)")
        // Without one, the server's refusal (up to 3 runs, as above).
        refused = try await CLI.run(trust + store + [url])
        for _ in 0..<2 where !refused.stderr.contains("none is configured") { refused = try await CLI.run(trust + store + [url]) }
        #expect(refused.status == 2 && refused.stderr.contains("none is configured"), "\(refused.stderr)")
        let keyBody = client.privateKeyPEM.split(separator: "\n")[1]
        for result in [none, imported, presented, listed, both, withKey, other, badImport, removed] {
            #expect(!result.text.contains(keyBody) && !result.stderr.contains(keyBody))
        }
    }
}
