import Foundation
import Testing
import Wattle
import WattleDemoServer

@Suite(
    "The wattle CLI: --cert, --cert-key and --cert-name (wattle cert import) present a client certificate to the URL's origin",
    .serialized)
struct CLIClientCertificateTests {
    /// A server on 127.0.0.1 that asks for a client certificate issued by a new authority of
    /// that name, and the authority.
    static func server(authorityName: String) async throws -> (DemoServer, TLSIdentity) {
        let authority = try TLSIdentity.certificateAuthority(name: authorityName)
        let server = try await DemoServer.start(
            tls: try TLSIdentity.selfSigned(names: ["localhost"], addresses: ["127.0.0.1"]),
            clientCertificateAuthority: authority.certificatePEM)
        return (server, authority)
    }

    @Test(
        "a certificate the server's authority issued opens it, from two files or one; without it, exit 2 saying so; bad files exit 1"
    )
    func clientCertificate() async throws {
        let (server, authority) = try await Self.server(authorityName: "CLI test client CA")
        defer { Task { try? await server.stop() } }
        let client = try authority.issuedClientCertificate(commonName: "cli")
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let certificate = folder.appendingPathComponent("client.pem").path
        let key = folder.appendingPathComponent("client.key").path
        let both = folder.appendingPathComponent("both.pem").path
        try Data(client.certificatePEM.utf8).write(to: URL(fileURLWithPath: certificate))
        try Data(client.privateKeyPEM.utf8).write(to: URL(fileURLWithPath: key))
        try Data((client.certificatePEM + "\n" + client.privateKeyPEM).utf8).write(to: URL(fileURLWithPath: both))
        let url = "https://127.0.0.1:\(server.port)/echo"
        let trust = CLI.tlsTrust

        let separate = try await CLI.run(trust + ["--cert", certificate, "--cert-key", key, url])
        #expect(separate.status == 0, "\(separate.stderr)")
        let combined = try await CLI.run(trust + ["--cert", both, url])
        #expect(combined.status == 0, "\(combined.stderr)")

        // (Under TLS 1.3 a client slow to send may find the connection closed before it reads
        // the server's alert: up to 3 runs.)
        var without = try await CLI.run(trust + [url])
        for _ in 0..<2 where !without.stderr.contains("none is configured") {
            without = try await CLI.run(trust + [url])
        }
        #expect(without.status == 2)
        #expect(
            without.stderr.contains("Client certificate for 127.0.0.1")
                && without.stderr.contains("none is configured"), "\(without.stderr)")

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

    @Test(
        "cert import keeps a certificate sealed in the keychain: --cert-name presents it with the key file gone, beside a kept token; list, replace and remove; bad files, names and flags exit 1 and change nothing"
    )
    func keptCertificate() async throws {
        let (server, authority) = try await Self.server(authorityName: "CLI test client CA (kept)")
        defer { Task { try? await server.stop() } }
        let client = try authority.issuedClientCertificate(commonName: "cli-kept")
        let second = try authority.issuedClientCertificate(commonName: "cli-kept-2")
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let certificate = folder.appendingPathComponent("client.pem")
        let key = folder.appendingPathComponent("client.key")
        let both = folder.appendingPathComponent("both.pem")
        let bogus = folder.appendingPathComponent("bogus.pem")
        try Data(client.certificatePEM.utf8).write(to: certificate)
        try Data(client.privateKeyPEM.utf8).write(to: key)
        try Data((second.certificatePEM + "\n" + second.privateKeyPEM).utf8).write(to: both)
        // Labels right, contents not a certificate: only a parse finds out.
        try Data(("-----BEGIN CERTIFICATE-----\nTUlJ\n-----END CERTIFICATE-----\n" + client.privateKeyPEM).utf8).write(
            to: bogus)
        let keychain = folder.appendingPathComponent("cli.keychain").path
        let store = ["--keychain", keychain]
        let url = "https://127.0.0.1:\(server.port)/echo"
        let trust = CLI.tlsTrust
        var results: [CLI.Result] = []
        func run(_ arguments: [String]) async throws -> CLI.Result {
            let result = try await CLI.run(arguments)
            results.append(result)
            return result
        }

        // Nothing kept yet: asking makes no keychain file (nor its key file), nor does a bad import.
        let none = try await run(trust + store + ["--cert-name", "work", url])
        #expect(none.status == 1 && none.stderr.contains("no client certificate named \"work\""), "\(none.stderr)")
        let emptyList = try await run(["cert", "list"] + store)
        #expect(emptyList.status == 1 && emptyList.stderr.contains("no client certificates"), "\(emptyList.stderr)")
        let removeNone = try await run(["cert", "remove", "work"] + store)
        #expect(
            removeNone.status == 1 && removeNone.stderr.contains("no client certificate named \"work\""),
            "\(removeNone.stderr)")
        let bogusFirst = try await run(["cert", "import", "work", bogus.path] + store)
        #expect(bogusFirst.status == 1 && bogusFirst.stderr.contains("could not be parsed"), "\(bogusFirst.stderr)")
        #expect(
            !FileManager.default.fileExists(atPath: keychain)
                && !FileManager.default.fileExists(atPath: keychain + ".key"))

        let imported = try await run(["cert", "import", "work", certificate.path, key.path] + store)
        #expect(imported.status == 0, "\(imported.stderr)")
        let pin = try PublicKeyPin.pin(forCertificatePEM: client.certificatePEM)
        #expect(imported.text.contains("Kept client certificate work (1 certificate, key \(pin))"), "\(imported.text)")
        #expect(imported.text.contains("requests no longer read \(key.path)"), "\(imported.text)")
        try FileManager.default.removeItem(at: key)

        // A token kept in the same keychain goes with the request that presents the certificate.
        let token = try await run(["auth", "set-token", "kept-token-1", "--url", url] + trust + store)
        #expect(token.status == 0, "\(token.stderr)")
        let presented = try await run(trust + store + ["--cert-name", "work", url])
        #expect(presented.status == 0, "\(presented.stderr)")
        #expect(presented.text.contains("Bearer kept-token-1"), "\(presented.text)")

        // A file that only looks like a certificate does not replace the kept one.
        let bogusAgain = try await run(["cert", "import", "work", bogus.path] + store)
        #expect(bogusAgain.status == 1, "\(bogusAgain.stderr)")
        let listed = try await run(["cert", "list"] + store)
        #expect(listed.status == 0 && listed.text == "work  1 certificate  \(pin)\n", "\(listed.text)\(listed.stderr)")

        // The key is sealed: neither the keychain file nor its WAL holds any line of it.
        let keyLines = client.privateKeyPEM.split(separator: "\n").filter { !$0.hasPrefix("-----") }
        for file in try FileManager.default.contentsOfDirectory(atPath: folder.path)
        where file.hasPrefix("cli.keychain") {
            let bytes = try Data(contentsOf: folder.appendingPathComponent(file))
            #expect(!keyLines.contains { bytes.range(of: Data($0.utf8)) != nil }, "\(file) holds the key in the clear")
        }

        let bothFlags = try await run(trust + store + ["--cert-name", "work", "--cert", certificate.path, url])
        #expect(bothFlags.status == 1 && bothFlags.stderr.contains("not both"), "\(bothFlags.stderr)")
        let withKey = try await run(trust + store + ["--cert-name", "work", "--cert-key", certificate.path, url])
        #expect(withKey.status == 1 && withKey.stderr.contains("--cert-key goes with --cert"), "\(withKey.stderr)")
        let other = try await run(trust + store + ["--cert-name", "home", url])
        #expect(other.status == 1 && other.stderr.contains("wattle cert import home"), "\(other.stderr)")
        let empty = try await run(trust + store + ["--cert-name", "", url])
        #expect(empty.status == 1 && empty.stderr.contains("--cert-name needs a name"), "\(empty.stderr)")
        let noKey = try await run(["cert", "import", "bad", certificate.path] + store)
        #expect(noKey.status == 1 && noKey.stderr.contains("not a PEM private key"), "\(noKey.stderr)")
        let stray = try await run(["cert", "import", "bad", certificate.path, "--cert-key", certificate.path] + store)
        #expect(stray.status == 1, "\(stray.stderr)")

        // Replaced from one file holding both: the new certificate, under the same name.
        let replaced = try await run(["cert", "import", "work", both.path] + store)
        #expect(
            replaced.status == 0 && replaced.text.contains("requests no longer read \(both.path)"), "\(replaced.stderr)"
        )
        let secondPin = try PublicKeyPin.pin(forCertificatePEM: second.certificatePEM)
        let relisted = try await run(["cert", "list"] + store)
        #expect(relisted.text == "work  1 certificate  \(secondPin)\n", "\(relisted.text)")
        let presentedAgain = try await run(trust + store + ["--cert-name", "work", url])
        #expect(presentedAgain.status == 0, "\(presentedAgain.stderr)")

        let removed = try await run(["cert", "remove", "work"] + store)
        #expect(removed.status == 0 && removed.text.contains("Forgot client certificate work"), "\(removed.stderr)")
        let again = try await run(["cert", "remove", "work"] + store)
        #expect(again.status == 1 && again.stderr.contains("no client certificate named \"work\""), "\(again.stderr)")
        let gone = try await run(trust + store + ["--cert-name", "work", url])
        #expect(gone.status == 1, "\(gone.stderr)")
        // Without one, the server's refusal (up to 3 runs, as above).
        var refused = try await run(trust + store + [url])
        for _ in 0..<2 where !refused.stderr.contains("none is configured") {
            refused = try await run(trust + store + [url])
        }
        #expect(refused.status == 2 && refused.stderr.contains("none is configured"), "\(refused.stderr)")
        let secretLines = keyLines + second.privateKeyPEM.split(separator: "\n").filter { !$0.hasPrefix("-----") }
        for result in results {
            #expect(!secretLines.contains { result.text.contains($0) || result.stderr.contains($0) })
        }
    }

    @Test(
        "an encrypted key: --cert takes its passphrase from WATTLE_CERT_PASSWORD (none: exit 1 naming it; wrong: exit 2); cert import keeps it, read from standard input"
    )
    func encryptedKey() async throws {
        let (server, authority) = try await Self.server(authorityName: "CLI test client CA (encrypted)")
        defer { Task { try? await server.stop() } }
        let client = try authority.issuedClientCertificate(commonName: "cli-encrypted")
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let passphrase = "key pass s3cret"
        // openssl encrypts the key, the passphrase from its environment (out of the process list).
        let encrypted = try await CLI.run(
            ["pkcs8", "-topk8", "-v2", "aes-256-cbc", "-passout", "env:WATTLE_TEST_PASS"],
            environment: ["WATTLE_TEST_PASS": passphrase], input: .pipe(Data(client.privateKeyPEM.utf8)),
            binary: URL(fileURLWithPath: "/usr/bin/openssl"))
        #expect(encrypted.status == 0 && encrypted.text.contains("BEGIN ENCRYPTED PRIVATE KEY"), "\(encrypted.stderr)")
        let certificate = folder.appendingPathComponent("client.pem")
        let key = folder.appendingPathComponent("client.key")
        try Data(client.certificatePEM.utf8).write(to: certificate)
        try encrypted.stdout.write(to: key)
        let url = "https://127.0.0.1:\(server.port)/echo"
        let trust = CLI.tlsTrust
        let files = ["--cert", certificate.path, "--cert-key", key.path]

        let opened = try await CLI.run(trust + files + [url], environment: ["WATTLE_CERT_PASSWORD": passphrase])
        #expect(opened.status == 0, "\(opened.stderr)")
        // In a session of its own (setsid), with no terminal to ask on even when the tests run on one.
        let noTerminal = ["/usr/bin/setsid", "-w"]
        let none = try await CLI.run(trust + files + [url], wrapper: noTerminal)
        #expect(none.status == 1 && none.stderr.contains("is encrypted: set WATTLE_CERT_PASSWORD"), "\(none.stderr)")
        // Standard input that is a request's body is never read for the passphrase.
        let piped = try await CLI.run(
            trust + files + ["POST", url], input: .pipe(Data((passphrase + "\n").utf8)), wrapper: noTerminal)
        #expect(piped.status == 1 && piped.stderr.contains("is encrypted: set WATTLE_CERT_PASSWORD"), "\(piped.stderr)")
        let wrong = try await CLI.run(trust + files + [url], environment: ["WATTLE_CERT_PASSWORD": "not-it-9Q"])
        #expect(wrong.status == 2 && wrong.stderr.contains("could not be used"), "\(wrong.stderr)")

        let store = ["--keychain", folder.appendingPathComponent("cli.keychain").path]
        // (A line ending CRLF, as a file written on Windows would give it.)
        let imported = try await CLI.run(
            ["cert", "import", "enc", certificate.path, key.path] + store,
            input: .pipe(Data((passphrase + "\r\n").utf8)))
        #expect(imported.status == 0, "\(imported.stderr)")
        try FileManager.default.removeItem(at: key)
        let kept = try await CLI.run(trust + store + ["--cert-name", "enc", url])
        #expect(kept.status == 0, "\(kept.stderr)")
        for result in [opened, none, piped, wrong, imported, kept] {
            #expect(
                !result.text.contains(passphrase) && !result.stderr.contains(passphrase)
                    && !result.stderr.contains("not-it-9Q"))
        }
    }
}
