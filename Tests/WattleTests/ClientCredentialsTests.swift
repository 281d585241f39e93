import Foundation
import Testing
import WattleDemoServer

@testable import Wattle

/// A session whose authenticator obtains its tokens with the client-credentials grant from the
/// demo API's `/api/token`.
private func clientSession(
    _ server: DemoServer, store: InMemoryTokenStore, clientID: String = "demo-client",
    clientSecret: String = "demo-client-secret", scope: String? = nil,
    clientAuthentication: Authenticator.ClientAuthentication = .basic, encoding: ParameterEncoding = .form,
    additionalParameters: Parameters = [:], refresh: Authenticator.Refresh? = nil,
    configure: (inout Authenticator) -> Void = { _ in }
) -> Session {
    makeSession(server) {
        var authenticator = Authenticator(
            store: store, refresh: refresh,
            obtain: Authenticator.postClientCredentials(
                to: "api/token", clientID: clientID, clientSecret: clientSecret, scope: scope,
                clientAuthentication: clientAuthentication, encoding: encoding,
                additionalParameters: additionalParameters))
        configure(&authenticator)
        $0.authenticator = authenticator
    }
}

/// `GET /api/whoami` from `count` concurrent requests: each one's user, or its error.
private func concurrentWhoami(_ session: Session, count: Int) async -> [Result<String, WattleError>] {
    await withTaskGroup(of: Result<String, WattleError>.self) { group in
        for _ in 0..<count {
            group.addTask {
                do throws(WattleError) {
                    let body = try await session.get("api/whoami").decode([String: String].self)
                    return .success(body["user"] ?? "")
                } catch {
                    return .failure(error)
                }
            }
        }
        return await group.reduce(into: []) { $0.append($1) }
    }
}

@Suite("Client credentials: a token obtained without a sign-in, and obtained again when it expires or is refused")
struct ClientCredentialsTests {
    @Test(
        "20 concurrent requests with no token obtain one (once, with Basic client authentication, identifier and secret form-encoded) and all succeed"
    )
    func obtainsBeforeTheFirstRequest() async throws {
        let server = try await DemoServer.start()
        // Characters the form-encoding of RFC 6749 section 2.3.1 changes: a colon in the
        // identifier would otherwise end the Basic username early.
        let clientID = "reports:cli tool"
        let clientSecret = "s3cr+t/é%:x"
        server.api.configure {
            $0.clientID = clientID
            $0.clientSecret = clientSecret
            $0.refreshDelay = .milliseconds(200)
        }
        let store = InMemoryTokenStore()
        let session = clientSession(server, store: store, clientID: clientID, clientSecret: clientSecret)
        #expect(try await session.isSignedIn == false)

        let users = await concurrentWhoami(session, count: 20)
        #expect(users.map { try? $0.get() } == Array(repeating: "client:\(clientID)", count: 20))
        #expect(server.stats.hits("/api/token") == 1)
        #expect(server.stats.hits("/api/whoami") == 20)  // none was sent without the token first
        let stored = try #require(try await store.load())
        #expect(stored.refreshToken == nil)
        #expect(stored.expiresAt != nil)
        #expect(try await session.isSignedIn)

        // After a sign-out, the next request obtains a new token.
        try await session.signOut()
        #expect(try await store.load() == nil)
        #expect(try await session.get("api/whoami").decode([String: String].self)["user"] == "client:\(clientID)")
        #expect(server.stats.hits("/api/token") == 2)
        let second = try #require(try await store.load())
        #expect(second.accessToken != stored.accessToken)
        try await server.stop()
    }

    @Test("the identifier and secret can go in a JSON body, with a scope and more fields")
    func bodyAuthenticationAsJSON() async throws {
        let server = try await DemoServer.start()
        let session = clientSession(
            server, store: InMemoryTokenStore(), scope: "reports:read", clientAuthentication: .body, encoding: .json,
            additionalParameters: ["audience": "https://api.example.test/"])
        let body = try await session.get("api/whoami").decode([String: String].self)
        #expect(body == ["user": "client:demo-client", "scope": "reports:read"])
        #expect(server.stats.hits("/api/token") == 1)
        try await server.stop()
    }

    @Test("a token expired on the client is replaced before it is sent: one token call for 10 concurrent requests")
    func expiredTokenIsReplacedBeforeSending() async throws {
        let server = try await DemoServer.start()
        server.api.configure { $0.refreshDelay = .milliseconds(200) }
        // Valid on the server (a user's token), expired on the client, no refresh token.
        let issued = server.api.issueTokens()
        let store = InMemoryTokenStore(
            AuthToken(accessToken: issued.access, expiresAt: Date(timeIntervalSinceNow: -60)))
        let session = clientSession(server, store: store)
        let users = await concurrentWhoami(session, count: 10)
        #expect(users.map { try? $0.get() } == Array(repeating: "client:demo-client", count: 10))
        #expect(server.stats.hits("/api/token") == 1)
        #expect(server.stats.hits("/api/whoami") == 10)
        #expect(try await store.load()?.accessToken != issued.access)
        try await server.stop()
    }

    @Test("a token the server refuses is replaced: one token call, then each of 10 requests retries once")
    func refusedTokenIsReplaced() async throws {
        let server = try await DemoServer.start()
        server.api.configure { $0.refreshDelay = .milliseconds(200) }
        let issued = server.api.issueTokens()
        let store = InMemoryTokenStore(
            AuthToken(accessToken: issued.access, expiresAt: Date(timeIntervalSinceNow: 3600)))
        let session = clientSession(server, store: store)
        server.api.expireAccessTokens()  // the client still believes its token is valid
        let users = await concurrentWhoami(session, count: 10)
        #expect(users.map { try? $0.get() } == Array(repeating: "client:demo-client", count: 10))
        #expect(server.stats.hits("/api/token") == 1)
        #expect(server.stats.hits("/api/whoami") == 20)
        try await server.stop()
    }

    @Test(
        "a refused client secret fails every waiting request with authenticationFailed naming invalid_client, never the secret, and obtaining is capped"
    )
    func refusedSecretFails() async throws {
        let server = try await DemoServer.start()
        server.api.configure { $0.refreshDelay = .milliseconds(200) }
        let secret = "wrong-secret-0123456789"
        let store = InMemoryTokenStore()
        let session = clientSession(
            server, store: store, clientSecret: secret, configure: { $0.maximumRefreshesPerWindow = 2 })
        let outcomes = await concurrentWhoami(session, count: 5)
        #expect(outcomes.count == 5)
        for outcome in outcomes {
            guard case .failure(.authenticationFailed(let reason)) = outcome else {
                Issue.record("expected authenticationFailed, got \(outcome)")
                continue
            }
            #expect(reason.contains("obtaining a token failed"))
            #expect(reason.contains("invalid_client"))
            #expect(!reason.contains(secret))
        }
        #expect(server.stats.hits("/api/token") == 1)
        #expect(server.stats.hits("/api/whoami") == 0)
        #expect(try await store.load() == nil)

        // A second try calls the server again; a third is refused by the cap, unsent.
        await #expect(throws: WattleError.self) { try await session.get("api/whoami") }
        #expect(server.stats.hits("/api/token") == 2)
        do {
            _ = try await session.get("api/whoami")
            Issue.record("expected the cap to refuse a third token call")
        } catch {
            guard case .authenticationFailed(let reason) = error else {
                Issue.record("expected authenticationFailed, got \(error)")
                return
            }
            #expect(reason.contains("refused to obtain a token more than 2 times"))
        }
        #expect(server.stats.hits("/api/token") == 2)
        try await server.stop()
    }

    @Test("with both a refresh and an obtain, a token with a refresh token is refreshed, and one without is replaced")
    func refreshTokenStillRefreshes() async throws {
        let server = try await DemoServer.start()
        let issued = server.api.issueTokens()
        let store = InMemoryTokenStore(
            AuthToken(
                accessToken: issued.access, refreshToken: issued.refresh, expiresAt: Date(timeIntervalSinceNow: -60)))
        let session = clientSession(server, store: store, refresh: Authenticator.postRefreshToken(to: "api/refresh"))
        #expect(try await session.get("api/whoami").decode([String: String].self)["user"] == "demo")
        #expect(server.stats.hits("/api/refresh") == 1)
        #expect(server.stats.hits("/api/token") == 0)

        // The refreshed pair has a refresh token; a token without one is obtained afresh.
        try await session.signIn(
            with: AuthToken(accessToken: "at_unknown", expiresAt: Date(timeIntervalSinceNow: 3600)))
        #expect(try await session.get("api/whoami").decode([String: String].self)["user"] == "client:demo-client")
        #expect(server.stats.hits("/api/refresh") == 1)
        #expect(server.stats.hits("/api/token") == 1)
        try await server.stop()
    }

    @Test("a token another session saved to the shared store is taken up instead of obtaining one")
    func takesUpAnotherSessionsToken() async throws {
        let server = try await DemoServer.start()
        let store = InMemoryTokenStore()
        let first = clientSession(server, store: store)
        let second = clientSession(server, store: store)
        #expect(try await second.isSignedIn == false)  // has read the empty store
        _ = try await first.get("api/whoami")
        #expect(server.stats.hits("/api/token") == 1)
        let saved = try #require(try await store.load())
        let echoed = try await second.get("echo").decode(Echo.self)
        #expect(echoed.header("Authorization") == "Bearer \(saved.accessToken)")
        #expect(server.stats.hits("/api/token") == 1)
        try await server.stop()
    }

    @Test("client credentials in a query are refused, unsent")
    func queryEncodingIsRefused() async throws {
        let server = try await DemoServer.start()
        let session = clientSession(server, store: InMemoryTokenStore(), encoding: .query)
        do {
            _ = try await session.get("api/whoami")
            Issue.record("expected an error")
        } catch {
            guard case .authenticationFailed(let reason) = error else {
                Issue.record("expected authenticationFailed, got \(error)")
                return
            }
            #expect(reason.contains("never in the URL"))
        }
        #expect(server.stats.hits("/api/token") == 0)
        try await server.stop()
    }
}
