import Foundation
import Testing
import WattleDemoServer

@testable import Wattle
@testable import WattleKeychain

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

/// A session whose authenticator is ``Authenticator/clientCredentials(store:endpoint:clientID:clientSecret:scope:clientAuthentication:encoding:additionalParameters:)``
/// for the demo API's `/api/token`: its stored tokens bound to the client.
private func boundClientSession(
    _ server: DemoServer, store: any TokenStore, scope: String? = nil, clientSecret: String = "demo-client-secret"
) -> Session {
    makeSession(server) {
        $0.authenticator = Authenticator.clientCredentials(
            store: store, endpoint: "api/token", clientID: "demo-client", clientSecret: clientSecret, scope: scope)
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

/// Whether `error` is ``WattleError/authenticationFailed(reason:)`` with `text` in its reason.
private func isAuthenticationFailed(_ error: WattleError, saying text: String) -> Bool {
    if case .authenticationFailed(let reason, _) = error { return reason.contains(text) }
    return false
}

@Suite("Client credentials: a token obtained without a sign-in, and obtained again when it expires or is refused")
struct ClientCredentialsTests {
    @Test(
        "a refresh the server refuses as a request (unsupported_grant_type, invalid_client) obtains a token instead, keeping nothing stale"
    )
    func refusedRefreshRequestObtains() async throws {
        let server = try await DemoServer.start()
        let expired = AuthToken(
            accessToken: "stale", refreshToken: "r-old", expiresAt: Date(timeIntervalSinceNow: -60))
        let store = InMemoryTokenStore(expired)
        // The token endpoint has no refresh grant: it answers 400 unsupported_grant_type.
        let session = clientSession(server, store: store, refresh: Authenticator.postRefreshToken(to: "api/token"))
        let body = try await session.get("api/whoami").decode([String: String].self)
        #expect(body["user"] == "client:demo-client")
        #expect(server.stats.hits("/api/token") == 2)
        let saved = try #require(try await store.load())
        #expect(saved.accessToken != "stale" && saved.refreshToken == nil)
        try await server.stop()
    }

    @Test("a refresh refused as a request whose obtain then cannot connect still counts against the cap")
    func refusedRefreshThenUnreachableObtainIsCounted() async throws {
        let server = try await DemoServer.start()
        let store = InMemoryTokenStore(
            AuthToken(accessToken: "stale", refreshToken: "r-old", expiresAt: Date(timeIntervalSinceNow: -60)))
        let session = makeSession(server) {
            var authenticator = Authenticator(
                store: store, refresh: Authenticator.postRefreshToken(to: "api/token"),
                obtain: Authenticator.postClientCredentials(
                    to: "http://127.0.0.1:\(try! refusedPort())/token", clientID: "demo-client",
                    clientSecret: "demo-client-secret"))
            authenticator.maximumRefreshesPerWindow = 2
            authenticator.refreshWindow = .seconds(3600)
            $0.authenticator = authenticator
        }
        for _ in 0..<4 {
            await expectWattleError({ _ = try await session.get("api/whoami") }) {
                if case .authenticationFailed = $0 { true } else { false }
            }
        }
        #expect(server.stats.hits("/api/token") == 2)
        try await server.stop()
    }

    @Test(
        "20 concurrent requests with no token obtain one (once, with Basic client authentication, identifier and secret form-encoded) and all succeed"
    )
    func obtainsBeforeTheFirstRequest() async throws {
        let server = try await DemoServer.start()
        // Characters the form-encoding of RFC 6749 section 2.3.1 changes: a colon in the
        // identifier would otherwise end the Basic username early, and the secret sent as it is
        // would decode to another ("a bAc:x/é").
        let clientID = "reports:cli tool"
        let clientSecret = "a+b%41c:x/é"
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
        let call = try #require(server.api.lastTokenRequest)
        #expect(call.clientAuthentication == "basic")
        #expect(call.contentType?.hasPrefix("application/x-www-form-urlencoded") == true)
        #expect(call.fields == ["grant_type": "client_credentials"])  // the secret only in the header
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
        let call = try #require(server.api.lastTokenRequest)
        #expect(call.clientAuthentication == "body")
        #expect(call.contentType?.hasPrefix("application/json") == true)
        #expect(
            call.fields == [
                "grant_type": "client_credentials", "scope": "reports:read", "client_id": "demo-client",
                "client_secret": "demo-client-secret", "audience": "https://api.example.test/",
            ])
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
            server, store: store, clientSecret: secret,
            configure: {
                $0.maximumRefreshesPerWindow = 2
                $0.refreshWindow = .seconds(3600)  // a TSan run took 100 s: past a 60 s window
            })
        let outcomes = await concurrentWhoami(session, count: 5)
        #expect(outcomes.count == 5)
        for outcome in outcomes {
            guard case .failure(.authenticationFailed(let reason, _)) = outcome else {
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
        await expectWattleError({ _ = try await session.get("api/whoami") }) {
            isAuthenticationFailed($0, saying: "refused to obtain a token more than 2 times")
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

    @Test(
        "with both a refresh and an obtain, a refused refresh token is cleared and a token obtained in the same renewal: the 10 waiting requests succeed"
    )
    func refusedRefreshTokenIsReplacedByAnObtainedToken() async throws {
        let server = try await DemoServer.start()
        server.api.configure { $0.refreshDelay = .milliseconds(200) }
        // Expired on the client, so it is renewed before sending; its refresh token is unknown
        // to the server, which refuses it (400 invalid_grant).
        let refused = AuthToken(
            accessToken: "at_unknown_0123456789", refreshToken: "rt_unknown_0123456789",
            expiresAt: Date(timeIntervalSinceNow: -60))
        let store = InMemoryTokenStore(refused)
        let session = clientSession(server, store: store, refresh: Authenticator.postRefreshToken(to: "api/refresh"))
        let results = await concurrentWhoami(session, count: 10)
        #expect(results.compactMap { try? $0.get() } == Array(repeating: "client:demo-client", count: 10))
        #expect(server.stats.hits("/api/refresh") == 1)
        #expect(server.stats.hits("/api/token") == 1)
        #expect(server.stats.hits("/api/whoami") == 10)
        let stored = try #require(try await store.load())
        #expect(stored.refreshToken == nil)
        #expect(!stored.isSameCredential(as: refused))
        try await server.stop()
    }

    @Test(
        "a refused refresh token whose replacement cannot be obtained fails the waiting requests saying both; the token is cleared, and the next request takes up a token stored meanwhile instead of obtaining one"
    )
    func refusedRefreshTokenAndFailedObtain() async throws {
        let server = try await DemoServer.start()
        let refused = AuthToken(
            accessToken: "at_unknown_0123456789", refreshToken: "rt_unknown_0123456789",
            expiresAt: Date(timeIntervalSinceNow: -60))
        let store = InMemoryTokenStore(refused)
        let session = clientSession(
            server, store: store, clientSecret: "wrong-secret-0123456789",
            refresh: Authenticator.postRefreshToken(to: "api/refresh"))
        await expectWattleError({ _ = try await session.get("api/whoami") }) {
            isAuthenticationFailed($0, saying: "rejected the refresh token, and obtaining a new token failed")
                && isAuthenticationFailed($0, saying: "invalid_client") && !"\($0)".contains("wrong-secret")
        }
        #expect(server.stats.hits("/api/refresh") == 1)
        #expect(server.stats.hits("/api/token") == 1)
        #expect(server.stats.hits("/api/whoami") == 0)
        #expect(try await store.load() == nil)
        // A sign-in elsewhere saves a token to the store: the next request reads it before
        // obtaining one, and sends it.
        let issued = server.api.issueTokens()
        try await store.save(AuthToken(accessToken: issued.access, expiresAt: Date(timeIntervalSinceNow: 3600)))
        #expect(try await session.get("api/whoami").decode([String: String].self)["user"] == "demo")
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

    @Test(
        "a mistaken call (credentials in a query, a field the call sets, a plain http endpoint elsewhere) fails each request unsent, naming the mistake, and is not capped",
        arguments: [
            ("never in the URL", ParameterEncoding.query, ["audience": "a"], "api/token"),
            ("cannot set \"client_secret\"", .form, ["client_secret": "x"], "api/token"),
            ("is not https", .form, [String: String](), "http://auth.example.test/oauth/token"),
        ])
    func mistakesAreRefusedUnsent(
        expected: String, encoding: ParameterEncoding, extra: [String: String], endpoint: String
    )
        async throws
    {
        let server = try await DemoServer.start()
        let session = makeSession(server) {
            var authenticator = Authenticator(
                store: InMemoryTokenStore(),
                obtain: Authenticator.postClientCredentials(
                    to: endpoint, clientID: "demo-client", clientSecret: "demo-client-secret", encoding: encoding,
                    additionalParameters: Parameters(extra)))
            authenticator.maximumRefreshesPerWindow = 1
            $0.authenticator = authenticator
        }
        for _ in 0..<3 {
            await expectWattleError({ _ = try await session.get("api/whoami") }) {
                isAuthenticationFailed($0, saying: expected)
            }
        }
        #expect(server.stats.totalRequests == 0)
        try await server.stop()
    }

    @Test("loopback hosts are told from others")
    func loopback() {
        for host in ["127.0.0.1", "127.255.0.9", "localhost", "LOCALHOST", "::1", "[::1]"] {
            #expect(Authenticator.isLoopback(host), "\(host)")
        }
        for host in [
            "128.0.0.1", "127.0.0.1.example.com", "127.1", "127.0.0.256", "127.0.0.+1", "example.com", "::2", "",
        ] {
            #expect(!Authenticator.isLoopback(host), "\(host)")
        }
    }

    @Test("a failed obtain keeps the token the session had; the store still holds it")
    func failedObtainKeepsTheToken() async throws {
        let server = try await DemoServer.start()
        let old = AuthToken(accessToken: "at_old_0123456789", expiresAt: Date(timeIntervalSinceNow: -60))
        let store = InMemoryTokenStore(old)
        let session = clientSession(server, store: store, clientSecret: "wrong")
        await #expect(throws: WattleError.self) { try await session.get("api/whoami") }
        #expect(server.stats.hits("/api/token") == 1)
        #expect(try await store.load() == old)
        #expect(try await session.isSignedIn)
        try await server.stop()
    }

    @Test("a token refused as soon as it is obtained: one more token call and one retry, then the 401 is the error")
    func refusedFreshTokenEndsAfterOneRetry() async throws {
        let server = try await DemoServer.start()
        server.api.configure { $0.accessTokenLifetime = .zero }  // dead on arrival
        let session = clientSession(server, store: InMemoryTokenStore())
        await expectWattleError({ _ = try await session.get("api/whoami") }) { $0.response?.statusCode == 401 }
        #expect(server.stats.hits("/api/token") == 2)
        #expect(server.stats.hits("/api/whoami") == 2)
        try await server.stop()
    }

    @Test("a sign-out while a token is obtained fails the waiting request, which is not sent; nothing is stored")
    func signOutWhileObtaining() async throws {
        let server = try await DemoServer.start()
        // Held until the sign-out is done: no delay promises that it comes first on a loaded machine.
        server.api.holdTokenAnswers()
        let store = InMemoryTokenStore()
        let session = clientSession(server, store: store)
        let request = Task { try await session.get("api/whoami") }
        while server.stats.hits("/api/token") == 0 { try await Task.sleep(for: .milliseconds(5)) }
        defer { server.api.releaseTokenAnswers() }  // also when the sign-out throws
        try await session.signOut()
        server.api.releaseTokenAnswers()
        await expectWattleError({ _ = try await request.value }) { isAuthenticationFailed($0, saying: "signed out") }
        #expect(server.stats.hits("/api/whoami") == 0)
        #expect(try await store.load() == nil)
        try await server.stop()
    }

    @Test(
        "Authenticator.clientCredentials binds the stored token to the client: another scope's or client's token, or a person's, is not sent; one is obtained in its place"
    )
    func storedTokenBoundToTheClient() async throws {
        let server = try await DemoServer.start()
        let store = InMemoryTokenStore()
        func session(scope: String?, secret: String = "demo-client-secret") -> Session {
            boundClientSession(server, store: store, scope: scope, clientSecret: secret)
        }
        func whoami(_ session: Session) async throws -> [String: String] {
            try await session.get("api/whoami").decode([String: String].self)
        }
        #expect(try await whoami(session(scope: "reports:read"))["scope"] == "reports:read")
        #expect(server.stats.hits("/api/token") == 1)
        let first = try #require(try await store.load())
        #expect(first.binding?.hasPrefix("cc1:") == true)

        // The same client and scope in a later session (a later run) takes the stored token up,
        // also with a changed secret (the token is the client's, whatever its secret).
        #expect(try await whoami(session(scope: "reports:read"))["scope"] == "reports:read")
        #expect(try await whoami(session(scope: "reports:read", secret: "rotated"))["scope"] == "reports:read")
        #expect(server.stats.hits("/api/token") == 1)

        // Another scope: the stored token is not sent; one is obtained and replaces it.
        #expect(try await whoami(session(scope: "reports:write"))["scope"] == "reports:write")
        #expect(server.stats.hits("/api/token") == 2)
        let second = try #require(try await store.load())
        #expect(second.accessToken != first.accessToken && second.binding != first.binding)
        #expect(second.binding?.hasPrefix("cc1:") == true)

        // A person's token kept in the same store is not sent for the client either.
        let issued = server.api.issueTokens()
        try await store.save(AuthToken(accessToken: issued.access, refreshToken: issued.refresh))
        #expect(try await whoami(session(scope: nil))["user"] == "client:demo-client")
        #expect(server.stats.hits("/api/token") == 3)
        #expect(try await store.load()?.accessToken != issued.access)

        // The plain obtain closure sends whatever is stored, as documented.
        try await store.save(AuthToken(accessToken: issued.access, refreshToken: issued.refresh))
        #expect(try await whoami(clientSession(server, store: store))["user"] == "demo")
        #expect(server.stats.hits("/api/token") == 3)
        try await server.stop()
    }

    @Test("a bound token round-trips through a keychain token store, binding and all")
    func boundTokenInAKeychain() async throws {
        let server = try await DemoServer.start()
        let keychain = KeychainStore.inMemory()
        let store = KeychainTokenStore(origin: server.baseURL, profile: "service", store: keychain)
        let first = boundClientSession(server, store: store)
        #expect(try await first.get("api/whoami").statusCode == 200)
        let kept = try #require(try await store.load())
        #expect(kept.binding?.hasPrefix("cc1:") == true)
        let later = boundClientSession(
            server, store: KeychainTokenStore(origin: server.baseURL, profile: "service", store: keychain))
        #expect(try await later.get("api/whoami").statusCode == 200)
        #expect(server.stats.hits("/api/token") == 1)
        try await server.stop()
    }

    @Test(
        "on a bound session, a sign-in is sent by that session only and a sign-out removes only the client's token"
    )
    func boundSessionSignInAndSignOut() async throws {
        let server = try await DemoServer.start()
        let store = InMemoryTokenStore()
        let issued = server.api.issueTokens()
        let person = boundClientSession(server, store: store)
        try await person.signIn(with: AuthToken(accessToken: issued.access, refreshToken: issued.refresh))
        #expect(try await person.get("api/whoami").decode([String: String].self)["user"] == "demo")
        #expect(try await store.load()?.binding == nil, "kept as the person's, not stamped as the client's")
        // A later session does not take the person's token up as the client's, and its
        // sign-out leaves it: the client had no token to forget.
        let later = boundClientSession(server, store: store)
        #expect(try await later.isSignedIn == false)
        try await later.signOut()
        #expect(try await store.load()?.accessToken == issued.access)
        #expect(try await later.get("api/whoami").decode([String: String].self)["user"] == "client:demo-client")
        // Now the client's token is kept; its sign-out removes it.
        #expect(try await store.load()?.binding != nil)
        try await later.signOut()
        #expect(try await store.load() == nil)
        try await server.stop()
    }

    @Test("a person's token signed in on a bound session is removed by that session's sign-out, not left in the store")
    func boundSessionSignOutClearsThePersonsToken() async throws {
        let server = try await DemoServer.start()
        let store = KeychainTokenStore(origin: server.baseURL, store: .inMemory())
        let issued = server.api.issueTokens()
        let person = boundClientSession(server, store: store)
        try await person.signIn(with: AuthToken(accessToken: issued.access, refreshToken: issued.refresh))
        #expect(try await store.load()?.accessToken == issued.access)
        try await person.signOut()
        #expect(try await store.load() == nil, "the signed-out token's secrets stayed in the keychain")
        #expect(try await person.isSignedIn == false)
        try await server.stop()
    }

    @Test(
        "a stored token item that cannot be read: a bound session obtains a token over it, and its sign-out removes it")
    func boundSessionReplacesAnUnreadableItem() async throws {
        let server = try await DemoServer.start()
        let store = KeychainTokenStore(origin: server.baseURL, store: .inMemory())
        try store.keychain.set(Data("not a token".utf8), forKey: store.key)
        await #expect(throws: KeychainError.decode) { _ = try await store.load() }
        let session = boundClientSession(server, store: store)
        #expect(try await session.get("api/whoami").decode([String: String].self)["user"] == "client:demo-client")
        #expect(server.stats.hits("/api/token") == 1)
        #expect(try await store.load()?.binding != nil, "the obtained token is stored over the unreadable item")

        // A sign-out with the item unreadable removes it (it cannot tell whose it is).
        try store.keychain.set(Data("not a token".utf8), forKey: store.key)
        try await boundClientSession(server, store: store).signOut()
        #expect(try await store.load() == nil)
        // A person's token signed in on a bound session, then damaged in the keychain (its
        // sealed secret no longer opens): that session's sign-out still removes it.
        let issued = server.api.issueTokens()
        let signedIn = boundClientSession(server, store: store)
        try await signedIn.signIn(with: AuthToken(accessToken: issued.access, refreshToken: issued.refresh))
        var row = try #require(try store.keychain.store.withStorage { try $0.allRows() }.first)
        row.secret[row.secret.count - 1] ^= 1
        try store.keychain.store.withStorage { storage in try storage.write { try storage.upsert(row) } }
        await #expect(throws: KeychainError.decode) { _ = try await store.load() }
        try await signedIn.signOut()
        #expect(try store.keychain.store.withStorage { try $0.allRows() }.isEmpty)
        // Without an obtain (a person's session), an unreadable item is the request's error.
        try store.keychain.set(Data("not a token".utf8), forKey: store.key)
        let person = makeSession(server) {
            $0.authenticator = Authenticator(store: store, refresh: Authenticator.postRefreshToken(to: "api/refresh"))
        }
        await expectWattleError({ _ = try await person.get("api/whoami") }) {
            guard case .authenticationFailed(let reason, _) = $0 else { return false }
            return reason.contains("cannot read the stored token")
        }
        try await server.stop()
    }

    @Test(
        "the binding is the same for the same fields however a dictionary was built, and leaves credential values out")
    func bindingIsCanonical() {
        func binding(_ fields: Parameters) -> String {
            Authenticator.clientBinding(
                endpoint: "oauth/token", clientID: "c", scope: nil, clientAuthentication: .basic, encoding: .json,
                additionalParameters: fields)
        }
        var roomy = [String: any Sendable](minimumCapacity: 256)
        var tight: [String: any Sendable] = [:]
        let keys = (0..<40).map { "key\($0)" }
        for key in keys { roomy[key] = key }
        for key in keys.reversed() { tight[key] = key }
        #expect(binding(["details": roomy]) == binding(["details": tight]))
        #expect(binding(["audience": "https://a.example/"]) != binding(["audience": "https://b.example/"]))
        #expect(binding(["n": 1]) != binding(["n": "1"]))
        // A credential-looking field's value is not in it (a client assertion changes each time).
        #expect(binding(["client_assertion": "jwt-one"]) == binding(["client_assertion": "jwt-two"]))
        #expect(binding(["client_assertion": "jwt-one"]) != binding([:]))
        let secretFree = binding(["api_key": "k-s3cr3t"])
        #expect(!secretFree.contains("s3cr3t") && secretFree.hasPrefix("cc1:"))
    }
}
