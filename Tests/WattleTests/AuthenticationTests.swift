import Foundation
import Logging
import Synchronization
import Testing
import WattleDemoServer
import WattleKeychain
import WattleTesting

@testable import Wattle

/// A fresh demo server, a session whose authenticator refreshes through `/api/refresh`, and
/// its token store.
struct AuthFixture {
    let server: DemoServer
    let store: InMemoryTokenStore
    let session: Session
    let tokens: (access: String, refresh: String)

    static func make(
        expiredOnClient: Bool = false, _ configure: (inout Configuration) -> Void = { _ in }
    ) async throws -> AuthFixture {
        let server = try await DemoServer.start()
        let tokens = server.api.issueTokens()
        let token = AuthToken(
            accessToken: tokens.access, refreshToken: tokens.refresh,
            expiresAt: Date(timeIntervalSinceNow: expiredOnClient ? -60 : 3600))
        let store = InMemoryTokenStore(token)
        let session = makeSession(server) {
            $0.authenticator = Authenticator(store: store, refresh: Authenticator.postRefreshToken(to: "api/refresh"))
            configure(&$0)
        }
        return AuthFixture(server: server, store: store, session: session, tokens: tokens)
    }
}

@Suite("Tokens: injected for the API's origin only, refreshed once under concurrency")
struct AuthenticationTests {
    @Test("the token goes to the base origin, not to another port, host or scheme, nor after a cross-origin redirect")
    func injectionScope() async throws {
        let fixture = try await AuthFixture.make {
            $0.trust.selfSignedHosts = ["127.0.0.1"]
        }
        let session = fixture.session
        let bearer = "Bearer \(fixture.tokens.access)"
        #expect(try await session.get("api/whoami").decode([String: String].self)["user"] == "demo")
        #expect(try await session.get("echo").decode(Echo.self).header("Authorization") == bearer)

        let other = try await TestServer.other()  // same host, another port
        #expect(
            try await session.get(other.url("echo").absoluteString).decode(Echo.self).header("Authorization") == nil)
        let otherHost = fixture.server.url("echo", host: "localhost").absoluteString  // same port, another host
        #expect(try await session.get(otherHost).decode(Echo.self).header("Authorization") == nil)
        let tls = try await TLSServers.server()  // another scheme
        #expect(try await session.get(tls.url("echo").absoluteString).decode(Echo.self).header("Authorization") == nil)

        let crossOrigin = try await session.get("redirect/302", parameters: ["to": other.url("echo").absoluteString])
        #expect(try crossOrigin.decode(Echo.self).header("Authorization") == nil)
        let sameOrigin = try await session.get("redirect/302", parameters: ["to": "/echo"])
        #expect(try sameOrigin.decode(Echo.self).header("Authorization") == bearer)
        try await fixture.server.stop()
    }

    @Test(
        "credentials in a request's URL are sent as they are: the stored token does not replace them, and their 401 refreshes nothing"
    )
    func urlCredentialsWin() async throws {
        let refreshes = Counter()
        let fixture = try await AuthFixture.make {
            $0.authenticator?.refresh = { current, _ in
                refreshes.increment()
                return current
            }
        }
        let session = fixture.session
        var parts = URLComponents(url: fixture.server.url("basic-auth/bob/hunter2"), resolvingAgainstBaseURL: false)!
        parts.user = "bob"
        parts.password = "hunter2"
        let accepted = try await session.get(parts.url!.absoluteString)
        let user = try accepted.json()["user"]
        #expect(accepted.statusCode == 200 && user == .string("bob"))
        parts.password = "wrong"
        await expectWattleError({ _ = try await session.get(parts.url!.absoluteString) }) {
            $0.response?.statusCode == 401
        }
        #expect(refreshes.value == 0)
        // The same endpoint without user-info, and an "@" past the authority, still carry the token.
        let bearer = "Bearer \(fixture.tokens.access)"
        #expect(try await session.get("echo").decode(Echo.self).header("Authorization") == bearer)
        #expect(try await session.get("echo/@me?to=a@b").decode(Echo.self).header("Authorization") == bearer)
        // User-info in the base URL is the configuration's, not a request's own: the token goes.
        var base = URLComponents(url: fixture.server.baseURL, resolvingAgainstBaseURL: false)!
        base.user = "bob"
        base.password = "hunter2"
        let configured = makeSession(fixture.server) {
            $0.baseURL = base.url
            $0.authenticator = Authenticator(store: fixture.store)
        }
        #expect(try await configured.get("echo").decode(Echo.self).header("Authorization") == bearer)
        try await fixture.server.stop()
    }

    @Test("100 concurrent requests with a token expired on the client cause one refresh and 100 successes")
    func proactiveRefreshIsSingleFlight() async throws {
        let fixture = try await AuthFixture.make(expiredOnClient: true)
        fixture.server.api.configure { $0.refreshDelay = .milliseconds(200) }
        fixture.server.api.expireAccessTokens()
        let statuses = try await concurrentWhoami(fixture.session, count: 100)
        #expect(statuses == Array(repeating: 200, count: 100))
        #expect(fixture.server.stats.hits("/api/refresh") == 1)
        let saved = try await fixture.store.load()
        #expect(saved?.accessToken != fixture.tokens.access)
        #expect(saved?.refreshToken != fixture.tokens.refresh)
        try await fixture.server.stop()
    }

    @Test("100 concurrent requests refused with 401 cause one refresh, then each retries once and succeeds")
    func reactiveRefreshIsSingleFlight() async throws {
        let fixture = try await AuthFixture.make()
        fixture.server.api.configure { $0.refreshDelay = .milliseconds(200) }
        fixture.server.api.expireAccessTokens()  // the client still believes its token is valid
        let statuses = try await concurrentWhoami(fixture.session, count: 100)
        #expect(statuses == Array(repeating: 200, count: 100))
        #expect(fixture.server.stats.hits("/api/refresh") == 1)
        #expect(fixture.server.stats.hits("/api/whoami") == 200)  // each request: one refusal, one retry
        try await fixture.server.stop()
    }

    @Test("a refused refresh fails all 100 with authenticationFailed, refreshes once and clears the token")
    func rejectedRefreshFailsEveryone() async throws {
        let fixture = try await AuthFixture.make()
        fixture.server.api.configure {
            $0.refreshDelay = .milliseconds(200)
            $0.rejectRefresh = true
        }
        fixture.server.api.expireAccessTokens()
        let errors = await concurrentErrors(fixture.session, count: 100)
        #expect(errors.count == 100)
        for error in errors {
            // The cause is the refresh call's answer: the server's 401 refusing the refresh token.
            guard case .authenticationFailed(_, .httpStatus(let refusal)?) = error else {
                Issue.record("expected authenticationFailed caused by the refresh's answer, got \(error)")
                continue
            }
            #expect(refusal.statusCode == 401)
            #expect(refusal.url.path == "/api/refresh")
            #expect(!error.description.contains(fixture.tokens.refresh))
            #expect(!error.description.contains(fixture.tokens.access))
        }
        #expect(fixture.server.stats.hits("/api/refresh") == 1)
        #expect(try await fixture.store.load() == nil)
        #expect(try await fixture.session.isSignedIn == false)
        try await fixture.server.stop()
    }

    @Test(
        "a renewal before expiry that fails (a 503, then the cap) still sends the unexpired token; a refused refresh token does not"
    )
    func earlyRenewalFailureSendsTheToken() async throws {
        // A leeway of an hour and a token for 30 minutes more: renewed before it is sent, and
        // unexpired however slowly the test runs (8 s of 10 ran out under AddressSanitizer).
        // The server takes it for 300 s.
        let fixture = try await AuthFixture.make {
            $0.authenticator?.maximumRefreshesPerWindow = 2
            $0.authenticator?.refreshWindow = .seconds(3600)
            $0.authenticator?.expiryLeeway = .seconds(3600)
        }
        let soon = AuthToken(
            accessToken: fixture.tokens.access, refreshToken: fixture.tokens.refresh,
            expiresAt: Date(timeIntervalSinceNow: 1800))
        try await fixture.store.save(soon)
        fixture.server.api.configure { $0.failRefreshWithServerError = true }
        for _ in 0..<4 {
            let echo = try await fixture.session.get("echo").decode(Echo.self)
            #expect(echo.header("Authorization") == "Bearer \(fixture.tokens.access)")
        }
        #expect(fixture.server.stats.hits("/api/refresh") == 2)
        #expect(try await fixture.store.load()?.refreshToken == fixture.tokens.refresh)
        try await fixture.server.stop()

        let refused = try await AuthFixture.make { $0.authenticator?.expiryLeeway = .seconds(3600) }
        try await refused.store.save(
            AuthToken(
                accessToken: refused.tokens.access, refreshToken: refused.tokens.refresh,
                expiresAt: Date(timeIntervalSinceNow: 1800)))
        refused.server.api.configure { $0.rejectRefresh = true }
        await expectWattleError({ _ = try await refused.session.get("echo") }) {
            if case .authenticationFailed = $0 { true } else { false }
        }
        #expect(try await refused.store.load() == nil)
        try await refused.server.stop()
    }

    @Test("a refresh that fails for another reason fails the waiters but keeps the token")
    func failedRefreshKeepsToken() async throws {
        let fixture = try await AuthFixture.make()
        fixture.server.api.configure { $0.failRefreshWithServerError = true }
        fixture.server.api.expireAccessTokens()
        let errors = await concurrentErrors(fixture.session, count: 20)
        #expect(errors.count == 20)
        for error in errors {
            guard case .authenticationFailed(let reason, _) = error else {
                Issue.record("expected authenticationFailed, got \(error)")
                continue
            }
            #expect(reason.contains("HTTP 503"))
        }
        #expect(fixture.server.stats.hits("/api/refresh") == 1)
        #expect(try await fixture.store.load()?.refreshToken == fixture.tokens.refresh)
        try await fixture.server.stop()
    }

    @Test(
        "a refresh that cannot reach the server fails with authenticationFailed naming the cause, and keeps the token")
    func unreachableRefresh() async throws {
        let unreachable = "http://127.0.0.1:\(try refusedPort())/api/refresh"
        let calls = Mutex(0)
        // Six refreshes in a row fail to connect (the window allows 5); the seventh gets through.
        let fixture = try await AuthFixture.make(expiredOnClient: true) {
            $0.authenticator?.refresh = { current, session in
                let call = calls.withLock { count in
                    count += 1
                    return count
                }
                return try await Authenticator.postRefreshToken(to: call <= 6 ? unreachable : "api/refresh")(
                    current, session)
            }
        }
        for _ in 1...6 {
            await expectWattleError({ _ = try await fixture.session.get("api/whoami") }) {
                // The refresh call's own failure is the cause.
                guard case .authenticationFailed(let reason, .cannotConnect(let host, _, _)?) = $0 else { return false }
                return reason.contains("the token refresh failed: Cannot connect to 127.0.0.1") && host == "127.0.0.1"
            }
        }
        #expect(try await fixture.store.load()?.refreshToken == fixture.tokens.refresh)
        // Refreshes that never reached the server did not use up the window.
        #expect(try await fixture.session.get("api/whoami").statusCode == 200)
        #expect(calls.withLock { $0 } == 7)
        #expect(fixture.server.stats.hits("/api/refresh") == 1)
        try await fixture.server.stop()
    }

    @Test("every request waiting on a refresh that cannot reach the server fails, from one refresh, naming the cause")
    func unreachableRefreshFailsEveryWaiter() async throws {
        let unreachable = "http://127.0.0.1:\(try refusedPort())/api/refresh"
        let calls = Mutex(0)
        let fixture = try await AuthFixture.make(expiredOnClient: true) {
            $0.authenticator?.refresh = { current, session in
                calls.withLock { $0 += 1 }
                try await Task.sleep(for: .milliseconds(200))  // the other requests pile up
                return try await Authenticator.postRefreshToken(to: unreachable)(current, session)
            }
        }
        let errors = await concurrentErrors(fixture.session, count: 20)
        #expect(errors.count == 20)
        for error in errors {
            guard case .authenticationFailed(let reason, _) = error, reason.contains("Cannot connect to 127.0.0.1")
            else {
                Issue.record("expected authenticationFailed naming the connection failure, got \(error)")
                continue
            }
        }
        #expect(calls.withLock { $0 } == 1)
        #expect(try await fixture.store.load()?.refreshToken == fixture.tokens.refresh)
        try await fixture.server.stop()
    }

    /// A fixture whose token expired on the client, and a request already waiting on the
    /// refresh it caused, which the server answers after `delay`, or by default holds until
    /// the test calls `releaseTokenAnswers()`: what a test does meanwhile must come first, and
    /// no delay promises that on a loaded machine (at 300 ms a sign-out once came after the
    /// refresh's answer, and at 8 s a test's step can still wait that long for a pool thread).
    private func requestWaitingOnRefresh<Value: Sendable>(
        delay: Duration? = nil, _ send: @escaping @Sendable (Session) async throws -> Value
    ) async throws -> (AuthFixture, Task<Value, any Error>) {
        let fixture = try await AuthFixture.make(expiredOnClient: true)
        if let delay {
            fixture.server.api.configure { $0.refreshDelay = delay }
        } else {
            fixture.server.api.holdTokenAnswers()
        }
        let session = fixture.session
        let request = Task { try await send(session) }
        while fixture.server.stats.hits("/api/refresh") == 0 { try await Task.sleep(for: .milliseconds(5)) }
        return (fixture, request)
    }

    @Test("a sign-in made while a refresh runs wins: the refreshed token is neither used nor stored")
    func signInDuringRefreshWins() async throws {
        let (fixture, request) = try await requestWaitingOnRefresh { try await $0.get("echo").decode(Echo.self) }
        let session = fixture.session
        let other = fixture.server.api.issueTokens(for: "other")
        let signedIn = AuthToken(
            accessToken: other.access, refreshToken: other.refresh, expiresAt: Date(timeIntervalSinceNow: 3600))
        defer { fixture.server.api.releaseTokenAnswers() }  // also when the sign-in throws
        try await session.signIn(with: signedIn)
        fixture.server.api.releaseTokenAnswers()
        #expect(try await request.value.header("Authorization") == "Bearer \(other.access)")
        #expect(try await fixture.store.load() == signedIn)
        #expect(try await session.get("echo").decode(Echo.self).header("Authorization") == "Bearer \(other.access)")
        #expect(fixture.server.stats.hits("/api/refresh") == 1)
        try await fixture.server.stop()
    }

    @Test("a 401 from another origin, after a redirect, refreshes nothing: it never saw the token")
    func otherOriginsRefusalIsNotTheTokens() async throws {
        let fixture = try await AuthFixture.make()
        let other = try await DemoServer.start()
        await expectWattleError({
            _ = try await fixture.session.get(
                "redirect/302", parameters: ["to": other.url("api/whoami").absoluteString])
        }) { $0.response?.statusCode == 401 && $0.response?.url.port == other.port }
        #expect(fixture.server.stats.hits("/api/refresh") == 0)
        #expect(other.stats.hits("/api/whoami") == 1)
        try await other.stop()
        try await fixture.server.stop()
    }

    @Test("a 401 after a POST's 303 is the error: the POST, which the server acted on, is not sent again")
    func refusalAfterSeeOtherDoesNotResendThePost() async throws {
        let fixture = try await AuthFixture.make()
        fixture.server.api.expireAccessTokens()
        func post(_ status: Int) -> Request {
            Request("redirect/\(status)", method: .post, query: ["to": "/api/whoami"], body: .json(["order": 1]))
        }
        await expectWattleError({ _ = try await fixture.session.send(post(303)) }) {
            $0.response?.statusCode == 401 && $0.response?.metrics.redirectCount == 1
        }
        #expect(fixture.server.stats.hits("/redirect/303") == 1, "the POST went once")
        #expect(fixture.server.stats.hits("/api/whoami") == 1)
        #expect(fixture.server.stats.hits("/api/refresh") == 0)
        // A 307 keeps the method, so the refusal is of the POST itself: refreshed and sent again
        // (the API then answers the POST to a GET-only route 404, with the new token).
        await expectWattleError({ _ = try await fixture.session.send(post(307)) }) {
            $0.response?.statusCode == 404
        }
        #expect(fixture.server.stats.hits("/redirect/307") == 2)
        #expect(fixture.server.stats.hits("/api/refresh") == 1)
        try await fixture.server.stop()
    }

    @Test(
        "a 401 from the API after a redirect went to another origin and back refreshes nothing: the token was dropped")
    func refusalAfterARoundTripIsNotTheTokens() async throws {
        let fixture = try await AuthFixture.make()
        let other = try await DemoServer.start()
        let back = fixture.server.url("api/whoami").absoluteString
        let via =
            other.url("redirect/302").absoluteString + "?to=" + back.addingPercentEncoding(
                withAllowedCharacters: .alphanumerics)!
        await expectWattleError({ _ = try await fixture.session.get("redirect/302", parameters: ["to": via]) }) {
            $0.response?.statusCode == 401 && $0.response?.url.port == fixture.server.port
                && $0.response?.metrics.redirectCount == 2
        }
        #expect(fixture.server.stats.hits("/api/whoami") == 1)
        #expect(fixture.server.stats.hits("/api/refresh") == 0)
        // Without the detour, the same endpoint answers with the token.
        #expect(try await fixture.session.get("api/whoami").statusCode == 200)
        try await other.stop()
        try await fixture.server.stop()
    }

    @Test("a sign-out made while a refresh runs wins: nothing is stored, and the waiting request goes without a token")
    func signOutDuringRefreshWins() async throws {
        let (fixture, request) = try await requestWaitingOnRefresh { try await $0.get("echo").decode(Echo.self) }
        let session = fixture.session
        defer { fixture.server.api.releaseTokenAnswers() }  // also when the sign-out throws
        try await session.signOut()
        fixture.server.api.releaseTokenAnswers()
        #expect(try await request.value.header("Authorization") == nil)
        #expect(try await fixture.store.load() == nil)
        #expect(try await session.isSignedIn == false)
        try await fixture.server.stop()
    }

    @Test(
        "a sign-in or sign-out made while a refresh saves its token waits for that save, then decides what the store holds",
        // (The limit turns a deadlock into a failure. The test takes 25 ms alone, but 20-30 s
        // with the whole suite on 2 cores, and past a minute under ThreadSanitizer.)
        .timeLimit(.minutes(10)), arguments: [true, false])
    func decisionWaitsForARefreshSave(signingIn: Bool) async throws {
        let held = try await HeldRefreshSave.start()
        let (server, session, store, saveMayLand) = (held.server, held.session, held.store, held.saveMayLand)
        let decision = Task { try await held.decide(signIn: signingIn) }
        // Its write waits for the refresh's save: had it gone first, the save would land over it
        // and the store would keep the refreshed token after the sign-out (or over the sign-in).
        let auth = try #require(session.auth)
        while await auth.storeTurnWaiters == 0 { try await Task.sleep(for: .milliseconds(5)) }
        #expect(store.writes == 1)
        saveMayLand.open()
        try await decision.value
        #expect(try await held.request.value == 200)
        #expect(store.writes == 2)
        #expect(try await store.load() == (signingIn ? held.signedIn : nil))
        #expect(try await session.isSignedIn == signingIn)
        #expect(server.stats.hits("/api/refresh") == 1)
        try await server.stop()
    }

    @Test(
        "a sign-in or sign-out waiting for a refresh's store step ends at once when its task is cancelled, changing nothing; the one queued behind it still gets its turn",
        // (The limit turns a deadlock into a failure, as above.)
        .timeLimit(.minutes(10)), arguments: [true, false])
    func cancelledDecisionStopsWaiting(cancelSignIn: Bool) async throws {
        let held = try await HeldRefreshSave.start()
        let (server, session, store, saveMayLand) = (held.server, held.session, held.store, held.saveMayLand)
        defer { saveMayLand.open() }  // also when an expectation below throws
        let auth = try #require(session.auth)
        // The decision to cancel, then the other one, queue behind the refresh's save.
        let ended = Mutex(false)
        let cancelled = Task {
            defer { ended.withLock { $0 = true } }
            try await held.decide(signIn: cancelSignIn)
        }
        while await auth.storeTurnWaiters < 1 { try await Task.sleep(for: .milliseconds(5)) }
        let next = Task { try await held.decide(signIn: !cancelSignIn) }
        while await auth.storeTurnWaiters < 2 { try await Task.sleep(for: .milliseconds(5)) }
        cancelled.cancel()
        // It ends, having left the queue, while the refresh still holds the turn. (A correct run
        // ends at once; the bound is generous because a resumed task can wait many seconds for
        // a thread in the loaded suite, see `promptBound`.)
        let deadline = ContinuousClock.now + .seconds(120)
        while !ended.withLock({ $0 }), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        #expect(ended.withLock { $0 }, "the cancelled decision still waits for the refresh's save")
        #expect(await auth.storeTurnWaiters == 1)
        #expect(store.writes == 1)
        if ended.withLock({ $0 }) {
            await expectWattleError({ try await cancelled.value }) {
                if case .cancelled = $0 { return true }
                return false
            }
        }
        saveMayLand.open()
        #expect(try await held.request.value == 200)
        try await next.value
        // The refresh's save and the other decision's write: none from the cancelled one.
        #expect(store.writes == 2)
        #expect(try await store.load() == (cancelSignIn ? nil : held.signedIn))
        #expect(try await session.isSignedIn == !cancelSignIn)
        try await server.stop()
    }

    @Test("a request refused with a token signed in during an older refresh gets a refresh of its own")
    func refusedNewTokenRefreshesItself() async throws {
        let (fixture, first) = try await requestWaitingOnRefresh(delay: .milliseconds(400)) {
            try await $0.get("api/whoami").statusCode
        }
        let session = fixture.session
        let other = fixture.server.api.issueTokens()
        try await session.signIn(
            with: AuthToken(
                accessToken: other.access, refreshToken: other.refresh, expiresAt: Date(timeIntervalSinceNow: 3600)))
        fixture.server.api.expireAccessTokens()  // the new token is refused at once
        #expect(try await session.get("api/whoami").statusCode == 200)
        #expect(fixture.server.stats.hits("/api/refresh") == 2)
        _ = try? await first.value
        try await fixture.server.stop()
    }

    @Test("a refresh can post a form, as OAuth 2 token endpoints require")
    func formRefresh() async throws {
        let json = try await AuthFixture.make(expiredOnClient: true)
        json.server.api.configure { $0.formBodiesOnly = true }
        await expectWattleError({ _ = try await json.session.get("api/whoami") }) {
            if case .authenticationFailed(let reason, _) = $0 { return reason.contains("HTTP 415") }
            return false
        }
        try await json.server.stop()

        let fixture = try await AuthFixture.make(expiredOnClient: true) {
            $0.authenticator?.refresh = Authenticator.postRefreshToken(to: "api/refresh", encoding: .form)
        }
        fixture.server.api.configure { $0.formBodiesOnly = true }
        #expect(try await fixture.session.get("api/whoami").statusCode == 200)
        #expect(fixture.server.stats.hits("/api/refresh") == 1)
        #expect(try await fixture.store.load()?.refreshToken != fixture.tokens.refresh)
        try await fixture.server.stop()
    }

    @Test(
        "a refresh asked to put the refresh token in the URL (.query) sends nothing, fails saying why, and keeps the token"
    )
    func refreshRefusesQueryEncoding() async throws {
        let fixture = try await AuthFixture.make(expiredOnClient: true) {
            $0.authenticator?.refresh = Authenticator.postRefreshToken(to: "api/refresh", encoding: .query)
        }
        await expectWattleError({ _ = try await fixture.session.get("api/whoami") }) {
            // No call was made: no cause.
            guard case .authenticationFailed(let reason, nil) = $0 else { return false }
            return reason.contains("never in the URL") && !reason.contains(fixture.tokens.refresh)
        }
        #expect(fixture.server.stats.hits("/api/refresh") == 0)
        #expect(try await fixture.store.load()?.refreshToken == fixture.tokens.refresh)
        try await fixture.server.stop()
    }

    @Test(
        "two sessions on one store (two processes): the second takes up the token the first refreshed and stored, without spending the old refresh token, so a server detecting reuse revokes nothing"
    )
    func secondSessionTakesTheStoredToken() async throws {
        let fixture = try await AuthFixture.make()
        fixture.server.api.configure { $0.detectRefreshReuse = true }
        let second = makeSession(fixture.server) {
            $0.authenticator = Authenticator(
                store: fixture.store, refresh: Authenticator.postRefreshToken(to: "api/refresh"))
        }
        // Both have read the same token before it expires on the server.
        #expect(try await fixture.session.get("api/whoami").statusCode == 200)
        #expect(try await second.get("api/whoami").statusCode == 200)
        fixture.server.api.expireAccessTokens()
        // The first refreshes with the refresh token and stores the new pair.
        #expect(try await fixture.session.get("api/whoami").statusCode == 200)
        let renewed = try #require(try await fixture.store.load())
        #expect(renewed.accessToken != fixture.tokens.access)
        // The second still holds the old pair: its 401 finds the newer token in the store and
        // retries with it. Sending the spent refresh token would have revoked both sessions'.
        #expect(try await second.get("api/whoami").statusCode == 200)
        #expect(fixture.server.stats.hits("/api/refresh") == 1)
        #expect(try await fixture.store.load() == renewed)
        // Both stay signed in through the next expiry.
        fixture.server.api.expireAccessTokens()
        #expect(try await fixture.session.get("api/whoami").statusCode == 200)
        #expect(try await second.get("api/whoami").statusCode == 200)
        #expect(fixture.server.stats.hits("/api/refresh") == 2)
        try await fixture.server.stop()
    }

    @Test(
        "a newer token in the store that has expired too becomes the session's: after its refresh fails, the next refresh uses it, never the spent one"
    )
    func expiredStoredTokenIsTakenUp() async throws {
        // A leeway longer than the server's 300 s lifetime: a token the other session stored
        // counts as expired here while the server still takes it (a lifetime of 5 s, under
        // ThreadSanitizer, ran out on the server before its first use).
        let leeway = Duration.seconds(400)
        let fixture = try await AuthFixture.make { $0.authenticator?.expiryLeeway = leeway }
        fixture.server.api.configure { $0.detectRefreshReuse = true }
        let second = makeSession(fixture.server) {
            $0.authenticator = Authenticator(
                store: fixture.store, refresh: Authenticator.postRefreshToken(to: "api/refresh"))
            $0.authenticator?.expiryLeeway = leeway
        }
        #expect(try await fixture.session.get("api/whoami").statusCode == 200)
        #expect(try await second.get("api/whoami").statusCode == 200)
        // The second refreshes and stores a pair that expires within the first's leeway.
        fixture.server.api.expireAccessTokens()
        #expect(try await second.get("api/whoami").statusCode == 200)
        let renewed = try #require(try await fixture.store.load())
        // The first holds the spent pair. Its refresh finds the newer one, expired too, and
        // refreshes it, but the server fails that refresh.
        fixture.server.api.configure { $0.failRefreshWithServerError = true }
        await expectWattleError({ _ = try await fixture.session.get("api/whoami") }) {
            if case .authenticationFailed = $0 { return true }
            return false
        }
        // The next refresh is of the stored pair, not of the spent one (whose reuse the server
        // would punish by revoking both sessions' tokens).
        fixture.server.api.configure { $0.failRefreshWithServerError = false }
        #expect(try await fixture.session.get("api/whoami").statusCode == 200)
        let refreshed = try #require(try await fixture.store.load())
        #expect(refreshed.accessToken != renewed.accessToken)
        #expect(try await second.get("api/whoami").statusCode == 200)
        try await fixture.server.stop()
    }

    @Test(
        "two sessions refreshing at once (the store read before either saved): the one whose reused refresh token is refused takes up the other's new token, and nothing is cleared"
    )
    func rejectedRefreshTakesTheTokenAnotherSessionSaved() async throws {
        let fixture = try await AuthFixture.make()
        // The second's store answers its second read (the one its refresh starts with) with the
        // token as it was before the first saved: both sessions then refresh with one token.
        let lagging = LaggingTokenStore(fixture.store, staleReads: [2], stale: try #require(await fixture.store.load()))
        let second = makeSession(fixture.server) {
            $0.authenticator = Authenticator(store: lagging, refresh: Authenticator.postRefreshToken(to: "api/refresh"))
        }
        #expect(try await fixture.session.get("api/whoami").statusCode == 200)
        #expect(try await second.get("api/whoami").statusCode == 200)
        fixture.server.api.expireAccessTokens()
        #expect(try await fixture.session.get("api/whoami").statusCode == 200)
        let renewed = try #require(try await fixture.store.load())
        // The second's refresh is refused (its refresh token is spent); it reads the store again.
        #expect(try await second.get("api/whoami").statusCode == 200)
        #expect(fixture.server.stats.hits("/api/refresh") == 2)
        #expect(lagging.reads == 3)
        #expect(try await fixture.store.load() == renewed)
        #expect(try await second.isSignedIn)
        try await fixture.server.stop()
    }

    @Test(
        "a refresh refused for the client (OAuth invalid_client, a changed client secret) keeps the token and says why; invalid_grant clears it"
    )
    func clientRefusalKeepsTheToken() async throws {
        let fixture = try await AuthFixture.make()
        fixture.server.api.configure { $0.refreshClientError = "invalid_client" }
        fixture.server.api.expireAccessTokens()
        await expectWattleError({ _ = try await fixture.session.get("api/whoami") }) {
            if case .authenticationFailed(let reason, _) = $0 { return reason.contains("OAuth error invalid_client") }
            return false
        }
        #expect(try await fixture.store.load()?.accessToken == fixture.tokens.access)
        #expect(try await fixture.session.isSignedIn)
        // Once the client is accepted again, the kept refresh token works.
        fixture.server.api.configure { $0.refreshClientError = nil }
        #expect(try await fixture.session.get("api/whoami").statusCode == 200)
        #expect(try await fixture.store.load()?.accessToken != fixture.tokens.access)
        // The token itself refused: cleared.
        fixture.server.api.configure { $0.rejectRefresh = true }
        fixture.server.api.expireAccessTokens()
        await expectWattleError({ _ = try await fixture.session.get("api/whoami") }) {
            if case .authenticationFailed = $0 { return true }
            return false
        }
        #expect(try await fixture.store.load() == nil)
        try await fixture.server.stop()
    }

    @Test("a token response whose expires_in is a string (\"300\") is read, with its lifetime")
    func expiresInAsString() async throws {
        let fixture = try await AuthFixture.make()
        fixture.server.api.configure { $0.expiresInAsString = true }
        fixture.server.api.expireAccessTokens()
        #expect(try await fixture.session.get("api/whoami").statusCode == 200)
        let renewed = try #require(try await fixture.store.load())
        #expect(renewed.accessToken != fixture.tokens.access)
        // 300 s, less the time since it was read (wide: the awaits between wait for pool threads);
        // a misread expires_in gives no expiry or another lifetime.
        let lifetime = try #require(renewed.expiresAt).timeIntervalSinceNow
        #expect(lifetime > 60 && lifetime <= 300)
        try await fixture.server.stop()
    }

    @Test("with no refresh configured, a request refused with an older token than the current one retries with it")
    func noRefreshRetriesWithNewerToken() async throws {
        let transport = SignInDuringRequestTransport()
        let session = Session(
            configuration: Configuration {
                $0.baseURL = URL(string: "https://api.example.test/")
                $0.authenticator = Authenticator(store: InMemoryTokenStore(AuthToken(accessToken: "old")))
            },
            transport: transport)
        transport.session.withLock { $0 = session }
        // The first request goes out with "old"; while it is in flight the user signs in
        // again ("new"), then the server refuses "old".
        let response = try await session.get("me")
        #expect(response.statusCode == 200)
        #expect(transport.sent.withLock { $0 } == ["Bearer old", "Bearer new"])
    }

    @Test("after a refused refresh, a token saved to the store later (a sign-in elsewhere) is used")
    func signInElsewhereAfterRejection() async throws {
        let fixture = try await AuthFixture.make()
        fixture.server.api.configure { $0.rejectRefresh = true }
        fixture.server.api.expireAccessTokens()
        await expectWattleError({ _ = try await fixture.session.get("api/whoami") }) {
            if case .authenticationFailed = $0 { return true }
            return false
        }
        #expect(try await fixture.store.load() == nil)
        // Another process signs in and saves a new token to the shared store.
        let issued = fixture.server.api.issueTokens()
        try await fixture.store.save(AuthToken(accessToken: issued.access, refreshToken: issued.refresh))
        #expect(try await fixture.session.get("api/whoami").statusCode == 200)
        try await fixture.server.stop()
    }

    @Test("a refused refresh clears the store only while it holds the refused token")
    func conditionalClear() async throws {
        let old = AuthToken(accessToken: "old-access", refreshToken: "old-refresh")
        let new = AuthToken(accessToken: "new-access", refreshToken: "new-refresh")
        let memory = InMemoryTokenStore(new)
        #expect(try await memory.clear(ifStill: old) == false)
        #expect(try await memory.load() == new)
        #expect(try await memory.clear(ifStill: new))
        #expect(try await memory.load() == nil)

        let keychain = KeychainTokenStore(
            origin: try #require(URL(string: "https://api.example.test")),
            keychain: Keychain(service: "wattle.tests.tokens", store: .inMemory()))
        try await keychain.save(new)
        #expect(try await keychain.clear(ifStill: old) == false)
        #expect(try await keychain.load() == new)
        #expect(try await keychain.clear(ifStill: new))
        #expect(try await keychain.load() == nil)
        #expect(try await keychain.clear(ifStill: new) == false)
    }

    @Test("a refreshed token the store cannot save is still used; the store keeps the old one")
    func refreshedTokenUsedWhenSaveFails() async throws {
        let server = try await DemoServer.start()
        let tokens = server.api.issueTokens()
        let store = RefusingSaveStore(AuthToken(accessToken: tokens.access, refreshToken: tokens.refresh))
        let session = makeSession(server) {
            $0.authenticator = Authenticator(store: store, refresh: Authenticator.postRefreshToken(to: "api/refresh"))
        }
        server.api.expireAccessTokens()
        #expect(try await session.get("api/whoami").statusCode == 200)
        // The spent refresh token is not tried again: the new token is in use.
        #expect(try await session.get("api/whoami").statusCode == 200)
        #expect(server.stats.hits("/api/refresh") == 1)
        #expect(try await store.load()?.accessToken == tokens.access)
        try await server.stop()
    }

    @Test("with no refresh configured, a refused token's 401 is the error, with the server's body")
    func noRefreshConfiguredGivesTheServersAnswer() async throws {
        let server = try await DemoServer.start()
        let tokens = server.api.issueTokens()
        let session = makeSession(server) {
            $0.authenticator = Authenticator(store: InMemoryTokenStore(AuthToken(accessToken: tokens.access)))
        }
        #expect(try await session.get("api/whoami").statusCode == 200)
        server.api.expireAccessTokens()
        await expectWattleError({ _ = try await session.get("api/whoami") }) {
            if case .httpStatus(let response) = $0 { return response.statusCode == 401 && !response.data.isEmpty }
            return false
        }
        #expect(try await session.isSignedIn)
        try await server.stop()
    }

    @Test("refreshes are capped per time window")
    func refreshCap() async throws {
        let fixture = try await AuthFixture.make {
            $0.authenticator?.maximumRefreshesPerWindow = 2
            // Longer than any run: under ThreadSanitizer, with the whole suite on 2 cores, the
            // three requests once spanned more than the default minute.
            $0.authenticator?.refreshWindow = .seconds(3600)
        }
        for _ in 0..<2 {
            fixture.server.api.expireAccessTokens()
            #expect(try await fixture.session.get("api/whoami").statusCode == 200)
        }
        fixture.server.api.expireAccessTokens()
        await expectWattleError({ _ = try await fixture.session.get("api/whoami") }) {
            if case .authenticationFailed(let reason, _) = $0 { return reason.contains("more than 2 times") }
            return false
        }
        #expect(fixture.server.stats.hits("/api/refresh") == 2)
        // At the cap, a token another session saved is still taken up: it costs no refresh.
        let saved = fixture.server.api.issueTokens()
        try await fixture.store.save(AuthToken(accessToken: saved.access, refreshToken: saved.refresh))
        #expect(try await fixture.session.get("api/whoami").statusCode == 200)
        #expect(fixture.server.stats.hits("/api/refresh") == 2)
        try await fixture.server.stop()
    }

    @Test("a refresh whose server answered before its call failed (a redirect it cannot follow) counts against the cap")
    func failureAfterAnAnswerIsCounted() async throws {
        let fixture = try await AuthFixture.make(expiredOnClient: true) {
            $0.authenticator?.refresh = Authenticator.postRefreshToken(to: "redirect/307?to=ftp://files.test/token")
            $0.authenticator?.maximumRefreshesPerWindow = 2
            $0.authenticator?.refreshWindow = .seconds(3600)
        }
        var reasons: [String] = []
        var causes: [WattleError?] = []
        for _ in 0..<4 {
            await expectWattleError({ _ = try await fixture.session.get("api/whoami") }) {
                guard case .authenticationFailed(let reason, let cause) = $0 else { return false }
                reasons.append(reason)
                causes.append(cause)
                return true
            }
        }
        // A call was made (the server answered the redirect): its failure is the cause; at the
        // cap none was made.
        #expect(causes.prefix(2).allSatisfy { if case .invalidURL? = $0 { true } else { false } }, "\(causes)")
        #expect(causes.suffix(2).allSatisfy { $0 == nil }, "\(causes)")
        #expect(fixture.server.stats.hits("/redirect/307") == 2)
        #expect(reasons.suffix(2).allSatisfy { $0.contains("more than 2 times") }, "\(reasons)")
        try await fixture.server.stop()
    }

    @Test("the refresh call itself carries no Authorization header")
    func refreshBypassesAuthenticator() async throws {
        let server = try await DemoServer.start()
        let tokens = server.api.issueTokens()
        let seen = Mutex<String?>("unset")
        let session = makeSession(server) {
            $0.authenticator = Authenticator(
                store: InMemoryTokenStore(AuthToken(accessToken: tokens.access, refreshToken: tokens.refresh))
            ) { current, bare in
                let echo = try await bare.get("echo").decode(Echo.self)
                seen.withLock { $0 = echo.header("Authorization") }
                let response = try await bare.post(
                    "api/refresh", parameters: ["refresh_token": current.refreshToken ?? ""])
                return try AuthToken(oauthResponse: response, previous: current)
            }
        }
        server.api.expireAccessTokens()
        #expect(try await session.get("api/whoami").statusCode == 200)
        #expect(seen.withLock { $0 } == nil)
        try await server.stop()
    }

    @Test(
        "a request cancelled while it waits for a refresh ends without it; the refresh goes on and is kept",
        .timeLimit(.minutes(10)))
    func cancelWhileRefreshing() async throws {
        // The refresh waits at a gate the test opens, after the cancelled request has ended.
        let gate = AsyncStream<Void>.makeStream()
        let refreshing = Mutex(false)
        let fixture = try await AuthFixture.make(expiredOnClient: true) {
            let post = Authenticator.postRefreshToken(to: "api/refresh")
            $0.authenticator = Authenticator(store: $0.authenticator!.store) { current, session in
                refreshing.withLock { $0 = true }
                for await _ in gate.stream { break }
                return try await post(current, session)
            }
        }
        let session = fixture.session
        let waiting = Task { try await session.get("api/whoami") }
        while !refreshing.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(10)) }
        // Should the request wait for the refresh after all, the gate opens after 120 s.
        let watchdog = Task {
            try? await Task.sleep(for: .seconds(120))
            gate.continuation.finish()
        }
        waiting.cancel()
        await expectWattleError({ _ = try await waiting.value }) {
            if case .cancelled = $0 { return true }
            return false
        }
        #expect(fixture.server.stats.hits("/api/refresh") == 0, "the cancelled request waited for the refresh")
        gate.continuation.finish()
        watchdog.cancel()
        // The refresh was not cancelled with it: the next request gets its token, with no second refresh.
        let later = try await session.get("api/whoami")
        #expect(later.statusCode == 200)
        #expect(fixture.server.stats.hits("/api/refresh") == 1)
        #expect(try await fixture.store.load()?.accessToken != fixture.tokens.access)
        try await fixture.server.stop()
    }

    @Test("a refreshed token that never expires in practice (expires_in 1e19) is used, not a trap")
    func farExpiry() async throws {
        let store = InMemoryTokenStore(AuthToken(accessToken: "old-token-aaaaaaaa", refreshToken: "r"))
        let coordinator = AuthCoordinator(
            authenticator: Authenticator(store: store) { _, _ in
                AuthToken(
                    accessToken: "new-token-bbbbbbbb", refreshToken: "r2", expiresAt: Date(timeIntervalSinceNow: 1e19))
            },
            bareSession: Session(transport: StubTransport()), logger: .init(label: "test"))
        #expect(try await coordinator.current()?.version == 0)
        _ = try await coordinator.refresh(after: 0)
        // The leeway is worked out from the new token's lifetime.
        let current = try await coordinator.current()
        #expect(current?.token.accessToken == "new-token-bbbbbbbb")
    }

    @Test("a request that failed with an older token than the current one retries without a refresh")
    func olderTokenJustRetries() async throws {
        let calls = Mutex(0)
        let store = InMemoryTokenStore(AuthToken(accessToken: "old-token-aaaaaaaa", refreshToken: "r"))
        let coordinator = AuthCoordinator(
            authenticator: Authenticator(store: store) { current, _ in
                calls.withLock { $0 += 1 }
                return AuthToken(accessToken: "new-token-bbbbbbbb", refreshToken: "r2")
            },
            bareSession: Session(transport: StubTransport()), logger: .init(label: "test"))
        let first = try await coordinator.current()
        #expect(first?.version == 0)
        let (refreshed, version) = try await coordinator.refresh(after: 0)
        #expect(refreshed?.accessToken == "new-token-bbbbbbbb" && version == 1)
        // Another request that also failed with version 0 gets the new token, no second refresh.
        let (again, againVersion) = try await coordinator.refresh(after: 0)
        #expect(again?.accessToken == "new-token-bbbbbbbb" && againVersion == 1)
        #expect(calls.withLock { $0 } == 1)
        #expect(try await store.load()?.accessToken == "new-token-bbbbbbbb")
    }

    @Test("signIn stores and applies a token; signOut clears it")
    func signInAndOut() async throws {
        let server = try await DemoServer.start()
        let store = InMemoryTokenStore()
        let session = makeSession(server) { $0.authenticator = Authenticator(store: store) }
        #expect(try await session.isSignedIn == false)
        await expectWattleError({ _ = try await session.get("api/whoami") }) { $0.response?.statusCode == 401 }
        let login = try await session.post("api/login", parameters: ["username": "demo", "password": "wattle"])
        try await session.signIn(with: try AuthToken(oauthResponse: login))
        #expect(try await session.isSignedIn)
        #expect(try await session.get("api/whoami").statusCode == 200)
        #expect(try await store.load() != nil)
        try await session.signOut()
        #expect(try await store.load() == nil)
        await expectWattleError({ _ = try await session.get("api/whoami") }) { $0.response?.statusCode == 401 }
        try await server.stop()
    }

    @Test("a token kept in a keychain file is used by a session opened later on the same file")
    func keychainPersistence() async throws {
        let server = try await DemoServer.start()
        let temporary = try TemporaryKeychain()
        let tokens = server.api.issueTokens()
        do {
            let store = KeychainTokenStore(origin: server.baseURL, store: temporary.store)
            let session = makeSession(server) { $0.authenticator = Authenticator(store: store) }
            try await session.signIn(with: AuthToken(accessToken: tokens.access, refreshToken: tokens.refresh))
        }
        let reopened = try temporary.reopen()
        let store = KeychainTokenStore(origin: server.baseURL, store: reopened)
        let later = makeSession(server) { $0.authenticator = Authenticator(store: store) }
        #expect(try await later.get("api/whoami").statusCode == 200)
        // The keychain file holds no plaintext token.
        let bytes = try Data(contentsOf: temporary.fileURL)
        #expect(bytes.range(of: Data(tokens.access.utf8)) == nil)
        #expect(bytes.range(of: Data(tokens.refresh.utf8)) == nil)
        try await server.stop()
    }

    @Test("a session given the stored token at creation sends it without reading the store, and refreshes it as usual")
    func storedTokenGivenAtCreation() async throws {
        let server = try await DemoServer.start()
        let tokens = server.api.issueTokens()
        // The store holds a token the server never issued: a session that read it would be refused.
        let store = InMemoryTokenStore(AuthToken(accessToken: "never-issued-token-0000"))
        var configuration = testConfiguration()
        configuration.baseURL = server.baseURL
        configuration.authenticator = Authenticator(
            store: store, refresh: Authenticator.postRefreshToken(to: "api/refresh"))

        let given = AuthToken(accessToken: tokens.access, refreshToken: tokens.refresh)
        let session = Session(configuration: configuration, storedToken: given)
        #expect(try await session.isSignedIn)
        #expect(try await session.get("echo").decode(Echo.self).header("Authorization") == "Bearer \(tokens.access)")
        #expect(try await session.get("api/whoami").statusCode == 200)
        #expect(try await store.load()?.accessToken == "never-issued-token-0000")

        // Refused once the server forgets it: refreshed with the given refresh token, and saved.
        // (A refresh reads the store first, and would take up a token another process saved
        // there: the store now holds the given token, as the caller said it did.)
        try await store.save(given)
        server.api.expireAccessTokens()
        #expect(try await session.get("api/whoami").statusCode == 200)
        let saved = try #require(try await store.load())
        #expect(saved.accessToken != tokens.access && saved.accessToken != "never-issued-token-0000")

        // Given "no token": the store is not read either, and nothing is sent.
        let none = Session(configuration: configuration, storedToken: nil)
        #expect(try await none.isSignedIn == false)
        #expect(try await none.get("echo").decode(Echo.self).header("Authorization") == nil)
        try await server.stop()
    }

    @Test("logging at trace level never prints a token, and descriptions redact it")
    func tokensNeverLogged() async throws {
        let capture = CapturedLogs()
        let fixture = try await AuthFixture.make {
            $0.logger = .init(label: "trace") { _ in CapturingLogHandler(capture: capture) }
        }
        fixture.server.api.expireAccessTokens()
        let response = try await fixture.session.get("api/whoami")
        #expect(response.statusCode == 200)
        _ = try await fixture.session.get("echo")
        let fresh = try #require(try await fixture.store.load())
        let secrets = [fixture.tokens.access, fixture.tokens.refresh, fresh.accessToken, fresh.refreshToken ?? "-"]
        let lines = capture.messages.map(\.text)
        #expect(lines.contains { $0.contains("Authorization: <redacted>") })
        for secret in secrets {
            #expect(!lines.contains { $0.contains(secret) }, "a log line contains a token")
            #expect(!fresh.description.contains(secret))
            #expect(!String(reflecting: fresh).contains(secret))
            #expect(!response.description.contains(secret))
        }
        var dumped = ""
        dump(fresh, to: &dumped)
        #expect(!dumped.contains(fresh.accessToken))
        try await fixture.server.stop()
    }

    private func concurrentWhoami(_ session: Session, count: Int) async throws -> [Int] {
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<count { group.addTask { try await session.get("api/whoami").statusCode } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
    }

    private func concurrentErrors(_ session: Session, count: Int) async -> [WattleError] {
        await withTaskGroup(of: WattleError?.self) { group in
            for _ in 0..<count {
                group.addTask {
                    do {
                        _ = try await session.get("api/whoami")
                        return nil
                    } catch {
                        return error as? WattleError ?? .transport(code: -1, message: "\(error)")
                    }
                }
            }
            return await group.reduce(into: []) { if let error = $1 { $0.append(error) } }
        }
    }
}

@Suite("Retry policy")
struct RetryTests {
    @Test("Retry-After is honoured for an idempotent request")
    func honoursRetryAfter() async throws {
        let server = try await TestServer.shared()
        let session = makeSession(server) { $0.retry = RetryPolicy(maximumAttempts: 3, baseDelay: .milliseconds(10)) }
        let path = "flaky/\(UUID().uuidString)"
        let start = ContinuousClock.now
        let response = try await session.get(path, parameters: ["failures": 1, "retry_after": 1])
        #expect(response.statusCode == 200)
        #expect(ContinuousClock.now - start >= .seconds(1))
        #expect(server.stats.hits("/" + path) == 2)
    }

    @Test(
        "a Retry-After longer than the policy's maximum delay ends the retries: the 429 is the error, at once",
        arguments: ["120", "99999999999999999999"])
    func longRetryAfterGivesUp(retryAfter: String) async throws {
        let server = try await TestServer.shared()
        let session = makeSession(server) {
            $0.retry = RetryPolicy(maximumAttempts: 3, baseDelay: .milliseconds(10), maximumDelay: .seconds(1))
        }
        let path = "flaky/\(UUID().uuidString)"
        let start = ContinuousClock.now
        await expectWattleError({
            _ = try await session.get(path, parameters: ["failures": 1, "status": 429, "retry_after": retryAfter])
        }) {
            guard case .httpStatus(let response) = $0 else { return false }
            return response.statusCode == 429 && response.headers["Retry-After"] == retryAfter
        }
        #expect(server.stats.hits("/" + path) == 1)
        // Not after waiting out the 120 s and then giving up.
        #expect(ContinuousClock.now - start < wellBefore(.seconds(120)))
    }

    @Test(
        "with maximumDelay as 'no limit', a Retry-After past a year ends the retries instead of trapping in the sleep",
        arguments: ["99999999999999999999", "9223372036854775807", "31536001"])
    func unboundedMaximumDelay(retryAfter: String) async throws {
        let server = try await TestServer.shared()
        let session = makeSession(server) {
            $0.retry = RetryPolicy(maximumAttempts: 3, baseDelay: .milliseconds(10), maximumDelay: .seconds(Int64.max))
        }
        let path = "flaky/\(UUID().uuidString)"
        await expectWattleError({
            _ = try await session.get(path, parameters: ["failures": 1, "status": 429, "retry_after": retryAfter])
        }) {
            $0.response?.statusCode == 429
        }
        #expect(server.stats.hits("/" + path) == 1)
        // A year is still waited for; the backoff with no Retry-After stays at most a year too.
        let policy = RetryPolicy(baseDelay: .seconds(Int64.max), maximumDelay: .seconds(Int64.max))
        let backoff = policy.delay(
            after: .timedOut(phase: .total, after: .seconds(1), url: server.baseURL), attempt: 2, method: .get)
        #expect(backoff.map { $0 <= .seconds(365 * 86_400) } == true)
        // The debug log's figure for a delay whose milliseconds overflow.
        #expect(WattleError.format(.seconds(Int64.max)) == "\(Int64.max) s")
    }

    @Test("a POST is never retried")
    func neverRetriesPost() async throws {
        let server = try await TestServer.shared()
        let session = makeSession(server) { $0.retry = RetryPolicy(maximumAttempts: 5, baseDelay: .milliseconds(10)) }
        let path = "flaky/\(UUID().uuidString)"
        await expectWattleError({
            _ = try await session.send(Request(path, method: .post, query: ["failures": 1, "retry_after": 0]))
        }) {
            $0.response?.statusCode == 503
        }
        #expect(server.stats.hits("/" + path) == 1)
    }

    @Test("backoff retries up to the attempt cap, then fails with the last status")
    func attemptCap() async throws {
        let server = try await TestServer.shared()
        let session = makeSession(server) { $0.retry = RetryPolicy(maximumAttempts: 3, baseDelay: .milliseconds(20)) }
        let ok = "flaky/\(UUID().uuidString)"
        #expect(try await session.get(ok, parameters: ["failures": 2, "status": 502]).statusCode == 200)
        #expect(server.stats.hits("/" + ok) == 3)
        let failing = "flaky/\(UUID().uuidString)"
        await expectWattleError({ _ = try await session.get(failing, parameters: ["failures": 10, "status": 429]) }) {
            $0.response?.statusCode == 429
        }
        #expect(server.stats.hits("/" + failing) == 3)
        let notRetryable = "flaky/\(UUID().uuidString)"
        await expectWattleError({
            _ = try await session.get(notRetryable, parameters: ["failures": 10, "status": 500])
        }) {
            $0.response?.statusCode == 500
        }
        #expect(server.stats.hits("/" + notRetryable) == 1)
    }

    @Test("Retry-After as seconds and as an HTTP date")
    func parsesRetryAfter() {
        #expect(RetryPolicy.parseRetryAfter("3") == .seconds(3))
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        // An hour ahead, in whole seconds: the time between here and the parse is the slack.
        let future = Date(timeIntervalSinceNow: 3600)
        let parsed = RetryPolicy.parseRetryAfter(formatter.string(from: future))
        #expect(parsed != nil && parsed! > .seconds(3500) && parsed! <= .seconds(3600))
        #expect(RetryPolicy.parseRetryAfter("soon") == nil)
        // Too many seconds for an Int: the longest wait, not unreadable (which would retry at once).
        #expect(RetryPolicy.parseRetryAfter("99999999999999999999") == .seconds(Int.max))
        #expect(RetryPolicy.parseRetryAfter("-99999999999999999999") == nil)
        // Digits only (RFC 9110, 10.2.3): a sign makes it no Retry-After (`Int("+5")` reads 5).
        #expect(RetryPolicy.parseRetryAfter("+5") == nil)
        #expect(RetryPolicy.parseRetryAfter("-5") == nil)
    }

    @Test("negative delays are zero: no trap doubling .seconds(Int64.min), and a Retry-After of 0 still retries")
    func negativeDelaysAreZero() {
        let lost = WattleError.cannotConnect(host: "127.0.0.1", port: 1, reason: "refused")
        let extreme = RetryPolicy(maximumAttempts: 9, baseDelay: .seconds(Int64.min), maximumDelay: .seconds(-1))
        for attempt in 1..<9 {
            #expect(extreme.delay(after: lost, attempt: attempt, method: .get) == .zero)
        }
        let negativeBase = RetryPolicy(baseDelay: .milliseconds(-500))
        #expect(negativeBase.delay(after: lost, attempt: 1, method: .get) == .zero)
        // A negative maximum reads as zero: the backoff is zero, not negative.
        let negativeMaximum = RetryPolicy(maximumDelay: .seconds(-30))
        #expect(negativeMaximum.delay(after: lost, attempt: 2, method: .get) == .zero)
    }
}

/// A token store whose saves fail (a locked or full keychain), for the refresh path.
final class RefusingSaveStore: TokenStore {
    private let token: Mutex<AuthToken?>
    init(_ token: AuthToken?) { self.token = Mutex(token) }
    func load() async throws -> AuthToken? { token.withLock { $0 } }
    func save(_ token: AuthToken) async throws { throw KeychainError.interactionNotAllowed }
    func clear() async throws { token.withLock { $0 = nil } }
}

/// A transport whose first request (sent with the old token) signs the session in with a new
/// token before it answers 401; requests with the new token get 200.
final class SignInDuringRequestTransport: Transport {
    let session = Mutex<Session?>(nil)
    let sent = Mutex<[String]>([])

    func perform(_ request: TransportRequest) async throws(WattleError) -> Response {
        let authorization = request.headers["Authorization"] ?? ""
        sent.withLock { $0.append(authorization) }
        if authorization == "Bearer old" {
            if let session = session.withLock({ $0 }) { try await session.signIn(with: AuthToken(accessToken: "new")) }
            return Response(statusCode: 401, url: request.url)
        }
        return Response(statusCode: authorization == "Bearer new" ? 200 : 401, url: request.url)
    }
}

/// A view of another store that calls a hook before each write (saves and clears, counted
/// from 1; `clear(ifStill:)` counts as its clear): a test holds a write back to order it
/// against another.
final class HookedTokenStore: TokenStore {
    private let inner: any TokenStore
    private let beforeWrite: @Sendable (Int) async -> Void
    private let count = Mutex(0)

    init(_ inner: any TokenStore, beforeWrite: @escaping @Sendable (Int) async -> Void) {
        self.inner = inner
        self.beforeWrite = beforeWrite
    }

    /// How many writes have started.
    var writes: Int { count.withLock { $0 } }

    func load() async throws -> AuthToken? { try await inner.load() }

    func save(_ token: AuthToken) async throws {
        try await write { try await inner.save(token) }
    }

    func clear() async throws {
        try await write { try await inner.clear() }
    }

    private func write(_ body: () async throws -> Void) async throws {
        let write = count.withLock {
            $0 += 1
            return $0
        }
        await beforeWrite(write)
        try await body()
    }
}

/// A refresh held at its save: a request to a server whose access tokens have expired has
/// refreshed its token, and the store's first write (the refresh's save) waits until
/// `saveMayLand` opens, holding the store's turn.
struct HeldRefreshSave {
    let server: DemoServer
    let session: Session
    /// Counts the writes; write 1 is the refresh's save.
    let store: HookedTokenStore
    /// A token of another user, to sign in with.
    let signedIn: AuthToken
    let saveMayLand: Gate
    /// The request whose refresh is held; its status code.
    let request: Task<Int, any Error>

    /// Signs in with `signedIn`, or signs out.
    func decide(signIn: Bool) async throws {
        if signIn { try await session.signIn(with: signedIn) } else { try await session.signOut() }
    }

    static func start() async throws -> HeldRefreshSave {
        let server = try await DemoServer.start()
        let tokens = server.api.issueTokens()
        let other = server.api.issueTokens(for: "other")
        let signedIn = AuthToken(
            accessToken: other.access, refreshToken: other.refresh, expiresAt: Date(timeIntervalSinceNow: 3600))
        let refreshSaving = Gate()
        let saveMayLand = Gate()
        let store = HookedTokenStore(
            InMemoryTokenStore(AuthToken(accessToken: tokens.access, refreshToken: tokens.refresh)),
            beforeWrite: { write in
                if write == 1 {
                    refreshSaving.open()
                    await saveMayLand.wait()
                }
            })
        let session = makeSession(server) {
            $0.authenticator = Authenticator(store: store, refresh: Authenticator.postRefreshToken(to: "api/refresh"))
        }
        server.api.expireAccessTokens()
        let request = Task { try await session.get("api/whoami").statusCode }
        await refreshSaving.wait()
        return HeldRefreshSave(
            server: server, session: session, store: store, signedIn: signedIn, saveMayLand: saveMayLand,
            request: request)
    }
}

/// Opened once; `wait()` returns at once after that.
final class Gate: Sendable {
    private let state = Mutex<(isOpen: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    /// Waits until the gate is open.
    func wait() async {
        await withCheckedContinuation { continuation in
            let isOpen = state.withLock { state in
                if !state.isOpen { state.waiters.append(continuation) }
                return state.isOpen
            }
            if isOpen { continuation.resume() }
        }
    }

    /// Opens the gate, letting every waiter go.
    func open() {
        let waiters = state.withLock { state in
            state.isOpen = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}

/// A view of another store whose chosen reads (counted from 1) return a stale token, as a
/// process that read the store just before another one saved would see it.
final class LaggingTokenStore: TokenStore {
    private let inner: any TokenStore
    private let staleReads: Set<Int>
    private let stale: AuthToken
    private let count = Mutex(0)

    init(_ inner: any TokenStore, staleReads: Set<Int>, stale: AuthToken) {
        self.inner = inner
        self.staleReads = staleReads
        self.stale = stale
    }

    /// How many times the store was read.
    var reads: Int { count.withLock { $0 } }

    func load() async throws -> AuthToken? {
        let read = count.withLock {
            $0 += 1
            return $0
        }
        return staleReads.contains(read) ? stale : try await inner.load()
    }

    func save(_ token: AuthToken) async throws { try await inner.save(token) }
    func clear() async throws { try await inner.clear() }
}
