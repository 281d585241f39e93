import ArgumentParser
import ExampleClient
import Foundation
import Wattle
import WattleCLIKit
import WattleDemoServer
import WattleKeychain

/// `wattle demo`: the whole story, offline, against the embedded demo API.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract:
            "Run the demo: HTTPS with a self-signed certificate, login, keychain, refresh, client credentials, refusal."
    )

    @Option(name: .customLong("token-lifetime"), help: "Seconds the demo's access tokens live.")
    var tokenLifetime: Int = 2

    func run() async throws {
        let started = ContinuousClock.now
        func step(_ text: String) { print("\n▸ \(text)") }
        func show(_ text: String) { print("  \(text)") }

        step("Starting the demo API over HTTPS on 127.0.0.1 with a certificate made just now")
        let identity = try TLSIdentity.selfSigned(names: ["localhost"], addresses: ["127.0.0.1"])
        let server = try await DemoServer.start(tls: identity)
        server.api.configure { $0.accessTokenLifetime = .seconds(tokenLifetime) }
        show("listening on \(server.baseURL.absoluteString)")
        show("its self-signed certificate is allowlisted for 127.0.0.1, for this run only")

        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("wattle-demo-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let keychain = try KeychainStore(directory: folder, name: "demo")
        // Offline, whatever the environment's proxy variables say: the server is on 127.0.0.1,
        // and libcurl would send even that through `https_proxy` unless `no_proxy` named it.
        let client = DemoClient(baseURL: server.baseURL, keychain: keychain) {
            $0.trust.selfSignedHosts = ["127.0.0.1"]
            $0.proxy = .none
        }

        step("Logging in as demo; the token goes into a throw-away keychain")
        try await client.logIn(username: "demo", password: "wattle")
        let token = try await client.tokens.load()
        show("token: \(token.map { "\($0)" } ?? "none")")
        show("keychain file: \(folder.appendingPathComponent("demo.keychain").path)")
        let fileBytes = try Data(contentsOf: folder.appendingPathComponent("demo.keychain"))
        let plaintext = token.map { fileBytes.firstRange(of: Data($0.accessToken.utf8)) != nil } ?? true
        show("the token in plaintext on disk: \(plaintext ? "FOUND (bug!)" : "no")")

        step("Calling protected endpoints (Authorization: Bearer … added by Wattle)")
        show("whoami: \(try await client.whoAmI())")
        let users = try await client.users()
        show("users: \(users.map(\.name).joined(separator: ", "))")
        let emojis = try await client.emojis()
        show("emojis: \(emojis.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: "  "))")
        let meta = try await client.meta(since: Date(timeIntervalSince1970: 1_700_000_000))
        show("meta: \(meta.server) v\(meta.version), \(meta.changes) changes since \(meta.since)")

        step("Waiting \(tokenLifetime + 1) s for the access token to expire on the server")
        try await Task.sleep(for: .seconds(tokenLifetime + 1))
        let before = server.stats.hits("/api/refresh")
        async let first = client.user(id: 1)
        async let second = client.user(id: 2)
        async let third = client.user(id: 3)
        let fetched = try await [first, second, third]
        let refreshes = server.stats.hits("/api/refresh") - before
        show("3 concurrent requests with the expired token: \(fetched.map(\.name).joined(separator: ", "))")
        show("refreshes made: \(refreshes) (one refresh, shared; the new token saved before retrying)")
        let renewed = try await client.tokens.load()
        show("new token: \(renewed.map { "\($0)" } ?? "none")")

        step("A service getting its own token (OAuth 2 client credentials), kept under a profile of its own")
        let service = Session(
            configuration: Configuration {
                $0.baseURL = server.baseURL
                $0.trust.selfSignedHosts = ["127.0.0.1"]
                $0.proxy = .none
                $0.authenticator = Authenticator.clientCredentials(
                    store: KeychainTokenStore(origin: server.baseURL, profile: "service", store: keychain),
                    endpoint: "api/token", clientID: "demo-client", clientSecret: "demo-client-secret")
            })
        let tokenCallsBefore = server.stats.hits("/api/token")
        let serviceUsers = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<3 {
                group.addTask { try await service.get("api/whoami").decode([String: String].self)["user"] ?? "" }
            }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        let tokenCalls = server.stats.hits("/api/token") - tokenCallsBefore
        let serviceOK = tokenCalls == 1 && serviceUsers == Array(repeating: "client:demo-client", count: 3)
        show("3 concurrent requests with no token, as: \(Set(serviceUsers).sorted().joined(separator: ", "))")
        show("token calls: \(tokenCalls) (the client's secret sent by HTTP Basic, never shown)")

        step("Downloading 20 MB to a file, streamed")
        let destination = folder.appendingPathComponent("download.bin")
        let downloadStart = ContinuousClock.now
        let download = try await client.session.download("api/download/20971520", to: destination)
        let seconds =
            Double((ContinuousClock.now - downloadStart).components.attoseconds) / 1e18
            + Double((ContinuousClock.now - downloadStart).components.seconds)
        show(
            "\(download.metrics.bytesReceived) bytes in \(Decimals.string(seconds, places: 2)) s (\(Decimals.string(20 / max(seconds, 0.001), places: 0)) MB/s)"
        )

        step("Resuming a download the network dropped (Range, with If-Range naming the file's ETag)")
        let resumable = folder.appendingPathComponent("resumable.bin")
        // The server drops the first answer after 3 MB of 8 MB.
        let dropped = "resource/8388608?cut=3000000"
        do {
            _ = try await client.session.download(dropped, to: resumable, resumable: true)
            show("unexpected: the first attempt was not dropped")
        } catch {
            show("first attempt: \(error)")
        }
        let resumed = try await client.session.download(dropped, to: resumable, resumable: true)
        let resumedSize = (try? FileManager.default.attributesOfItem(atPath: resumable.path)[.size] as? Int) ?? 0
        let resumedOK = resumed.statusCode == 206 && resumedSize == 8_388_608
        show(
            "second attempt: \(resumed.statusCode), asked for \(resumed.headers["X-Range-Received"] ?? "?"), "
                + "\(resumed.metrics.bytesReceived) bytes more; the file has \(resumedSize) bytes")

        step("Refusing a self-signed host that is not on the allowlist (fail closed)")
        let strict = Session(configuration: Configuration { $0.proxy = .none })
        var refused = false
        do {
            _ = try await strict.get(server.url("api/emojis", host: "localhost").absoluteString)
        } catch .untrustedCertificate(let host, let reason) {
            refused = true
            show("refused \(host): \(reason)")
        } catch {
            show("unexpected: \(error)")
        }

        let elapsed = ContinuousClock.now - started
        print("\nSummary")
        print("  HTTPS with a self-signed certificate, allowlisted for 127.0.0.1 only: ok")
        print("  login, token kept sealed in a keychain file: \(plaintext ? "FAILED" : "ok")")
        print("  protected endpoints with the token injected: ok (\(users.count) users, \(emojis.count) emojis)")
        print(
            "  automatic refresh after expiry: \(refreshes == 1 ? "ok, 1 refresh for 3 requests" : "FAILED (\(refreshes) refreshes)")"
        )
        print(
            "  a service's own token by client credentials: \(serviceOK ? "ok, 1 token call for 3 requests" : "FAILED (\(tokenCalls) token calls)")"
        )
        print("  dropped download resumed where it stopped: \(resumedOK ? "ok" : "FAILED")")
        print("  unlisted self-signed host refused: \(refused ? "ok" : "FAILED")")
        print(
            "  requests served: \(server.stats.hits(prefix: "/api/")) API calls, done in \(WattleDurations.format(elapsed))"
        )
        try await server.stop()
        if plaintext || refreshes != 1 || !refused || !resumedOK || !serviceOK { throw ExitCode.failure }
    }
}

enum WattleDurations {
    static func format(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        return Decimals.string(Double(seconds) + Double(attoseconds) / 1e18, places: 1) + " s"
    }
}
