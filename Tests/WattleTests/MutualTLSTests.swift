import Foundation
import TestProxies
import Testing
import WattleDemoServer
import WattleKeychain
import WattleTesting

@testable import Wattle

/// A server that requires a client certificate from `authority`, and the certificates to try.
enum MutualTLS {
    static let authority = Result { try TLSIdentity.certificateAuthority(name: "Wattle test client CA") }
    static let alice = Result { try authority.get().issuedClientCertificate(commonName: "alice") }
    /// Issued by another authority: the server refuses it.
    static let stranger = Result {
        try TLSIdentity.certificateAuthority(name: "Another CA").issuedClientCertificate(commonName: "mallory")
    }
    static let serverIdentity = Result {
        try TLSIdentity.selfSigned(names: ["localhost", "a.api.test"], addresses: ["127.0.0.1"])
    }
    private static let server = Task {
        try await DemoServer.start(
            tls: try serverIdentity.get(), clientCertificateAuthority: try authority.get().certificatePEM)
    }

    static func start() async throws -> DemoServer { try await server.value }

    static func certificate(_ identity: Result<TLSIdentity, any Error>) throws -> ClientCertificate {
        let identity = try identity.get()
        return try ClientCertificate(certificatePEM: identity.certificatePEM, privateKeyPEM: identity.privateKeyPEM)
    }

    /// A session trusting the server's certificate, its names reaching it on 127.0.0.1. With
    /// `allowlisted`, through ``TrustPolicy/selfSignedHosts`` instead: a trusted certificate
    /// has every handle reset after use, which would hide a client certificate left on one.
    static func session(
        _ server: DemoServer, allowlisted: Bool = false, _ configure: (inout TrustPolicy) -> Void = { _ in }
    ) throws -> Session {
        var configuration = testConfiguration()
        for name in ["localhost", "a.api.test", "127.0.0.1"] {
            if allowlisted {
                configuration.trust.selfSignedHosts.append(name)
            } else {
                configuration.trust.trust(certificatePEM: try serverIdentity.get().certificatePEM, for: name)
            }
            if name != "127.0.0.1" {
                configuration.hostOverrides.append(.init(host: name, port: server.port, address: "127.0.0.1"))
            }
        }
        configure(&configuration.trust)
        return Session(configuration: configuration)
    }

    /// `openssl ARGUMENTS` reading `input`, with `passphrase` in `WATTLE_TEST_PASS` (for
    /// `-passout env:WATTLE_TEST_PASS`, out of the process list): its standard output.
    static func openssl(_ arguments: [String], input: String, passphrase: String) throws -> String {
        // posix_spawn, not Foundation's Process (see ChildProcess: Process.run() crashed here).
        let process = try ChildProcess(
            "/usr/bin/env", ["openssl"] + arguments,
            environment: ["PATH": "/usr/bin:/bin", "WATTLE_TEST_PASS": passphrase], input: .data(Data(input.utf8)))
        let (output, _) = process.readToEnd()
        guard process.waitForExit() == 0 else { throw CocoaError(.fileReadUnknown) }
        return String(decoding: output, as: UTF8.self)
    }

    static func url(_ server: DemoServer, host: String = "localhost") -> String {
        "https://\(host):\(server.port)/echo"
    }

    /// The reason of the `clientCertificate` error a refused request fails with. Under TLS 1.3
    /// the server's alert comes after the client's handshake has finished; a client slow to
    /// send its request (a loaded machine) may find the connection closed instead, with no
    /// alert to read: such an attempt is made again, up to 3 in all. Nil when none was refused so.
    static func refusal(_ session: Session, _ url: String) async -> String? {
        for _ in 0..<3 {
            do {
                _ = try await session.get(url)
                return nil
            } catch .clientCertificate(_, let reason) {
                return reason
            } catch .connectionLost {
                continue
            } catch {
                return nil
            }
        }
        return nil
    }
}

@Suite("Mutual TLS: a client certificate presented to the hosts it is for, from PEM or a keychain, its key never shown")
struct MutualTLSTests {
    @Test(
        "the certificate the server's authority issued opens it; none, or another authority's, is refused with clientCertificate"
    )
    func presented() async throws {
        let server = try await MutualTLS.start()
        let alice = try MutualTLS.certificate(MutualTLS.alice)
        let session = try MutualTLS.session(server) { $0.present(alice, to: "localhost") }
        #expect(try await session.get(MutualTLS.url(server)).statusCode == 200)

        let without = try MutualTLS.session(server)
        let none = await MutualTLS.refusal(without, MutualTLS.url(server))
        #expect(none?.contains("none is configured") == true, "\(none ?? "not refused")")
        let strangerCertificate = try MutualTLS.certificate(MutualTLS.stranger)
        let stranger = try MutualTLS.session(server) { $0.present(strangerCertificate, to: "localhost") }
        let refused = await MutualTLS.refusal(stranger, MutualTLS.url(server))
        #expect(refused?.contains("refused the one sent") == true, "\(refused ?? "not refused")")
    }

    @Test("a redirect from a host the certificate is presented to, to another host, does not take it along")
    func redirectLeavesItBehind() async throws {
        let server = try await MutualTLS.start()
        let alice = try MutualTLS.certificate(MutualTLS.alice)
        var configuration = testConfiguration()
        configuration.trust.selfSignedHosts = ["localhost", "127.0.0.1"]
        configuration.hostOverrides = [.init(host: "localhost", port: server.port, address: "127.0.0.1")]
        configuration.trust.present(alice, to: "localhost")
        configuration.redirects = .follow(maximumHops: 3)
        let session = Session(configuration: configuration)
        let hop = "https://localhost:\(server.port)/redirect/302?to=" + MutualTLS.url(server, host: "127.0.0.1")
        let reason = await MutualTLS.refusal(session, hop)
        #expect(reason?.contains("none is configured") == true, "\(reason ?? "not refused")")
    }

    @Test("specificity: a port, then an exact name, then a wildcard; a bare IPv6 address has no port")
    func specificity() {
        let ranked = ["*.api.test", "a.api.test", "a.api.test:443", "fd00::1", "[fd00::1]:8443", "[::1]"].map(
            HostPattern.specificity)
        #expect(ranked.map { [$0.0, $0.1] } == [[0, 0], [0, 1], [1, 1], [0, 1], [1, 1], [0, 1]])
    }

    @Test(
        "one PEM text holding both: the certificate part holds no key, the key part one key; OpenSSH keys and encrypted ones without a passphrase are refused"
    )
    func combinedText() async throws {
        let server = try await MutualTLS.start()
        let alice = try MutualTLS.alice.get()
        let both = alice.certificatePEM + "\n" + alice.privateKeyPEM
        let identity = try ClientCertificate(certificatePEM: both, privateKeyPEM: both)
        #expect(!identity.certificatePEM.contains("PRIVATE KEY") && identity.certificateCount == 1)
        var dumped = ""
        dump(identity, to: &dumped)
        #expect(!dumped.contains("PRIVATE KEY"))
        let session = try MutualTLS.session(server) { $0.present(identity, to: "localhost") }
        #expect(try await session.get(MutualTLS.url(server)).statusCode == 200)
        let encrypted =
            alice.certificatePEM
            + "\n-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIs3cret\n-----END ENCRYPTED PRIVATE KEY-----\n"
        let openSSH = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Bs3cret\n-----END OPENSSH PRIVATE KEY-----\n"
        for (key, expected) in [
            (encrypted, "is encrypted"), (openSSH, "OPENSSH PRIVATE KEY"),
            (alice.privateKeyPEM + "\n" + alice.privateKeyPEM, "2 private keys"),
        ] {
            #expect {
                _ = try ClientCertificate(certificatePEM: alice.certificatePEM, privateKeyPEM: key)
            } throws: { error in
                guard case .invalidRequest(let reason) = error as? WattleError else { return false }
                return reason.contains(expected) && !reason.contains("s3cret")
            }
        }
    }

    @Test(
        "a certificate goes to the hosts its pattern matches only, the most specific pattern winning; connections are not shared across"
    )
    func scopedByHost() async throws {
        let server = try await MutualTLS.start()
        let alice = try MutualTLS.certificate(MutualTLS.alice)
        let stranger = try MutualTLS.certificate(MutualTLS.stranger)
        let session = try MutualTLS.session(server, allowlisted: true) {
            $0.present(alice, to: "localhost")
            $0.present(stranger, to: "*.api.test")
            $0.present(alice, to: "a.api.test")
        }
        // Alternating on one session: a connection made with the certificate never carries a
        // request for a host without one, and the other way round.
        for _ in 0..<3 {
            #expect(try await session.get(MutualTLS.url(server)).statusCode == 200)
            await #expect(throws: WattleError.self) {
                _ = try await session.get(MutualTLS.url(server, host: "127.0.0.1"))
            }
            #expect(try await session.get(MutualTLS.url(server, host: "a.api.test")).statusCode == 200)
        }
    }

    @Test("a key that does not match its certificate fails the request with clientCertificate, naming neither key")
    func mismatchedKey() async throws {
        let server = try await MutualTLS.start()
        let alice = try MutualTLS.alice.get()
        let mismatched = try ClientCertificate(
            certificatePEM: alice.certificatePEM, privateKeyPEM: try MutualTLS.stranger.get().privateKeyPEM)
        let session = try MutualTLS.session(server) { $0.present(mismatched, to: "localhost") }
        await #expect {
            _ = try await session.get(MutualTLS.url(server))
        } throws: { error in
            guard case .clientCertificate(_, let reason) = error as? WattleError else { return false }
            return reason.contains("could not be used") && !"\(error)".contains("PRIVATE KEY")
        }
    }

    @Test(
        "PEM that is not a certificate or a key (an encrypted one with its passphrase) is refused up front; no description or dump shows the key"
    )
    func checkedAndHidden() throws {
        let alice = try MutualTLS.alice.get()
        let cases: [(String, String, String)] = [
            ("not a certificate", alice.privateKeyPEM, "not a PEM certificate"),
            (alice.certificatePEM, "s3cret", "not a PEM private key"),
            (
                alice.certificatePEM,
                "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIs3cret\n-----END ENCRYPTED PRIVATE KEY-----\n",
                "is encrypted"
            ),
        ]
        for (certificate, key, expected) in cases {
            #expect {
                _ = try ClientCertificate(certificatePEM: certificate, privateKeyPEM: key)
            } throws: { error in
                guard case .invalidRequest(let reason) = error as? WattleError else { return false }
                return reason.contains(expected) && !reason.contains("s3cret")
            }
        }
        let identity = try MutualTLS.certificate(MutualTLS.alice)
        var dumped = ""
        dump(identity, to: &dumped)
        var trust = TrustPolicy()
        trust.present(identity, to: "localhost")
        let keyBody = alice.privateKeyPEM.split(separator: "\n")[1]
        for text in [identity.description, "\(identity)", dumped, "\(trust)", String(reflecting: trust)] {
            #expect(!text.contains(keyBody) && !text.contains("PRIVATE KEY"), "\(text)")
        }
        #expect(identity.description == "ClientCertificate(1 certificate, private key hidden)")
        #expect {
            _ = try ClientCertificate(
                certificateFile: URL(fileURLWithPath: "/nonexistent-wattle/c.pem"),
                privateKeyFile: URL(fileURLWithPath: "/nonexistent-wattle/k.pem"))
        } throws: { error in
            guard case .fileError(let path, let reason) = error as? WattleError else { return false }
            return path == "/nonexistent-wattle/c.pem" && reason.contains("No such file")
        }
    }

    @Test("kept sealed in a keychain file, the certificate opens the server from a later store; the file holds no key")
    func keptInKeychain() async throws {
        let server = try await MutualTLS.start()
        let alice = try MutualTLS.alice.get()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("wattle-mtls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let certificateFile = folder.appendingPathComponent("client.pem")
        let keyFile = folder.appendingPathComponent("client.key")
        try Data(alice.certificatePEM.utf8).write(to: certificateFile)
        try Data(alice.privateKeyPEM.utf8).write(to: keyFile)

        let temporary = try TemporaryKeychain()
        try ClientCertificate(certificateFile: certificateFile, privateKeyFile: keyFile)
            .save(in: Keychain(service: "mtls", store: temporary.store), forKey: "client")
        let loaded = try #require(
            try ClientCertificate.load(from: Keychain(service: "mtls", store: try temporary.reopen()), forKey: "client")
        )
        #expect(
            try ClientCertificate.load(from: Keychain(service: "mtls", store: temporary.store), forKey: "none") == nil)
        let session = try MutualTLS.session(server) { $0.present(loaded, to: "localhost") }
        #expect(try await session.get(MutualTLS.url(server)).statusCode == 200)
        let keyBody = alice.privateKeyPEM.split(separator: "\n")[1]
        for path in [temporary.fileURL.path, temporary.fileURL.path + "-wal"]
        where FileManager.default.fileExists(atPath: path) {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            #expect(bytes.range(of: Data(keyBody.utf8)) == nil && bytes.range(of: Data("PRIVATE KEY".utf8)) == nil)
        }
    }

    @Test(
        "an encrypted key, PKCS#8 or OpenSSL's legacy form, opens the server with its passphrase; none is refused up front, a wrong one at the handshake; kept with it in a keychain; neither shown"
    )
    func encryptedKey() async throws {
        let server = try await MutualTLS.start()
        let alice = try MutualTLS.alice.get()
        let passphrase = "correct horse s3cret"
        let pkcs8 = try MutualTLS.openssl(
            ["pkcs8", "-topk8", "-v2", "aes-256-cbc", "-passout", "env:WATTLE_TEST_PASS"], input: alice.privateKeyPEM,
            passphrase: passphrase)
        let legacy = try MutualTLS.openssl(
            ["ec", "-aes256", "-passout", "env:WATTLE_TEST_PASS"], input: alice.privateKeyPEM, passphrase: passphrase)
        #expect(pkcs8.contains("-----BEGIN ENCRYPTED PRIVATE KEY-----"))
        #expect(legacy.contains("Proc-Type: 4,ENCRYPTED") && legacy.contains("-----BEGIN EC PRIVATE KEY-----"))
        #expect(!ClientCertificate.isEncryptedPrivateKey(pem: alice.privateKeyPEM))
        // OpenSSL reads `Proc-Type:` however it is spaced, and CRLF lines: so does Wattle.
        let unspaced = legacy.replacingOccurrences(of: "Proc-Type: 4,ENCRYPTED", with: "Proc-Type:4,ENCRYPTED")
        let crlf = legacy.replacingOccurrences(of: "\n", with: "\r\n")
        for key in [pkcs8, legacy, unspaced, crlf] {
            #expect(ClientCertificate.isEncryptedPrivateKey(pem: alice.certificatePEM + "\n" + key))
            for missing in [nil, ""] {
                #expect {
                    _ = try ClientCertificate(
                        certificatePEM: alice.certificatePEM, privateKeyPEM: key, passphrase: missing)
                } throws: { error in
                    guard case .invalidRequest(let reason) = error as? WattleError else { return false }
                    return reason.contains("is encrypted: give its passphrase")
                }
            }
            let identity = try ClientCertificate(
                certificatePEM: alice.certificatePEM, privateKeyPEM: key, passphrase: passphrase)
            #expect(identity.isPrivateKeyEncrypted)
            let session = try MutualTLS.session(server) { $0.present(identity, to: "localhost") }
            #expect(try await session.get(MutualTLS.url(server)).statusCode == 200)

            let wrong = try ClientCertificate(
                certificatePEM: alice.certificatePEM, privateKeyPEM: key, passphrase: "not-it-9Q")
            let wrongSession = try MutualTLS.session(server) { $0.present(wrong, to: "localhost") }
            await #expect {
                _ = try await wrongSession.get(MutualTLS.url(server))
            } throws: { error in
                guard case .clientCertificate(_, let reason) = error as? WattleError else { return false }
                return reason.contains("could not be used") && reason.contains("passphrase right")
                    && !"\(error)".contains("not-it-9Q")
            }

            let keychain = Keychain.inMemory(service: "mtls")
            try identity.save(in: keychain, forKey: "client")
            let loaded = try #require(try ClientCertificate.load(from: keychain, forKey: "client"))
            #expect(loaded == identity && loaded.isPrivateKeyEncrypted)
            let reloaded = try MutualTLS.session(server) { $0.present(loaded, to: "localhost") }
            #expect(try await reloaded.get(MutualTLS.url(server)).statusCode == 200)

            var dumped = ""
            dump(identity, to: &dumped)
            var trust = TrustPolicy()
            trust.present(identity, to: "localhost")
            for text in [identity.description, dumped, "\(trust)", String(reflecting: trust)] {
                #expect(!text.contains(passphrase) && !text.contains("PRIVATE KEY"), "\(text)")
            }
        }
        // A certificate block with headers (OpenSSL would ask for a passphrase for it) is refused.
        let lines = alice.certificatePEM.split(separator: "\n", omittingEmptySubsequences: false)
        let headed =
            ([lines[0], "Proc-Type: 4,ENCRYPTED", "DEK-Info: AES-256-CBC,00112233445566778899AABBCCDDEEFF", ""]
            + lines.dropFirst())
            .joined(separator: "\n")
        #expect {
            _ = try ClientCertificate(certificatePEM: headed, privateKeyPEM: alice.privateKeyPEM)
        } throws: { error in
            guard case .invalidRequest(let reason) = error as? WattleError else { return false }
            return reason.contains("has headers")
        }
        // A passphrase for a key in the clear is not kept (nor sent).
        let clear = try ClientCertificate(
            certificatePEM: alice.certificatePEM, privateKeyPEM: alice.privateKeyPEM, passphrase: "unused")
        let plain = try MutualTLS.certificate(MutualTLS.alice)
        #expect(!clear.isPrivateKeyEncrypted && clear == plain)
        // An item kept before passphrases were (certificate and key only) still loads.
        struct Earlier: Codable {
            var certificatePEM: String
            var privateKeyPEM: String
        }
        let keychain = Keychain.inMemory(service: "mtls")
        try keychain.setCodable(
            Earlier(certificatePEM: alice.certificatePEM, privateKeyPEM: alice.privateKeyPEM), forKey: "old")
        #expect(try ClientCertificate.load(from: keychain, forKey: "old") == clear)
    }
}
