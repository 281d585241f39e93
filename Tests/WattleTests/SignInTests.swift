import Foundation
import Logging
import Testing
import Wattle
import WattleDemoServer
import WattleTesting

@Suite("Sign-in and other calls made without the stored token")
struct SignInTests {
    @Test(
        "a request with authentication .none carries no token, and its 401 is the error: nothing refreshed or cleared")
    func requestWithoutToken() async throws {
        let fixture = try await AuthFixture.make()
        let session = fixture.session
        #expect(
            try await session.get("echo").decode(Echo.self).header("Authorization") == "Bearer \(fixture.tokens.access)"
        )
        let bare = try await session.send(Request("echo", authentication: .none))
        #expect(try bare.decode(Echo.self).header("Authorization") == nil)

        await expectWattleError({ _ = try await session.send(Request("api/whoami", authentication: .none)) }) {
            $0.response?.statusCode == 401
        }
        #expect(fixture.server.stats.hits("/api/refresh") == 0)
        #expect(try await fixture.store.load()?.accessToken == fixture.tokens.access)
        #expect(try await session.get("api/whoami").statusCode == 200)
        try await fixture.server.stop()
    }

    @Test("signIn(at:) with a kept token whose refresh token was revoked signs in without trying to refresh it")
    func signInPastARevokedToken() async throws {
        let fixture = try await AuthFixture.make(expiredOnClient: true)
        fixture.server.api.configure { $0.rejectRefresh = true }
        let token = try await fixture.session.signIn(
            at: "api/login", parameters: ["username": "demo", "password": "wattle"])
        #expect(token.accessToken != fixture.tokens.access)
        #expect(fixture.server.stats.hits("/api/refresh") == 0)
        #expect(fixture.server.stats.hits("/api/login") == 1)
        #expect(try await fixture.store.load()?.accessToken == token.accessToken)
        let whoami = try await fixture.session.get("echo").decode(Echo.self)
        #expect(whoami.header("Authorization") == "Bearer \(token.accessToken)")
        try await fixture.server.stop()
    }

    @Test(
        "a wrong password fails signIn(at:) with the server's 401 and body, leaving the kept token and refreshing nothing"
    )
    func wrongPassword() async throws {
        let fixture = try await AuthFixture.make()
        await expectWattleError({
            _ = try await fixture.session.signIn(at: "api/login", parameters: ["username": "demo", "password": "nope"])
        }) { error in
            guard let response = error.response else { return false }
            return response.statusCode == 401 && (response.string ?? "").contains("invalid_credentials")
        }
        #expect(fixture.server.stats.hits("/api/login") == 1)
        #expect(fixture.server.stats.hits("/api/refresh") == 0)
        #expect(try await fixture.store.load()?.refreshToken == fixture.tokens.refresh)
        try await fixture.server.stop()
    }

    @Test(
        "signIn(at:) form-encodes when asked, never puts the password in the URL, and reads the token from the answer")
    func formSignIn() async throws {
        let server = try await DemoServer.start()
        server.api.configure { $0.formBodiesOnly = true }
        let store = InMemoryTokenStore()
        let session = makeSession(server) { $0.authenticator = Authenticator(store: store) }
        let credentials: Parameters = ["username": "demo", "password": "wattle"]
        await expectWattleError({ _ = try await session.signIn(at: "api/login", parameters: credentials) }) {
            $0.response?.statusCode == 415
        }
        await expectWattleError({
            _ = try await session.signIn(at: "api/login", parameters: credentials, encoding: .query)
        }) {
            if case .invalidRequest = $0 { return true }
            return false
        }
        #expect(server.stats.hits("/api/login") == 1)
        let token = try await session.signIn(at: "api/login", parameters: credentials, encoding: .form)
        #expect(try await store.load() == token)
        #expect(try await session.get("api/whoami").statusCode == 200)
        try await server.stop()
    }

    @Test("signIn(at:) on a session with no authenticator fails before sending the password")
    func signInNeedsAnAuthenticator() async throws {
        let server = try await DemoServer.start()
        let session = makeSession(server)
        await expectWattleError({
            _ = try await session.signIn(at: "api/login", parameters: ["username": "demo", "password": "wattle"])
        }) {
            // No call was made: nothing caused it but the configuration.
            if case .authenticationFailed(_, nil) = $0 { return true }
            return false
        }
        #expect(server.stats.hits("/api/login") == 0)
        try await server.stop()
    }

    @Test("an authenticator without a baseURL: a warning when the session is made, and sign-ins fail unsent")
    func authenticatorNeedsABaseURL() async throws {
        let server = try await DemoServer.start()
        let capture = CapturedLogs()
        var configuration = testConfiguration()
        configuration.authenticator = Authenticator(store: InMemoryTokenStore())
        configuration.logger = Logger(label: "auth") { _ in CapturingLogHandler(capture: capture) }
        let session = Session(configuration: configuration)
        #expect(capture.messages.contains { $0.level == .warning && $0.text.contains("without a baseURL") })
        let login = server.url("api/login").absoluteString
        for signIn in [
            { try await session.signIn(with: AuthToken(accessToken: "kept-token-0001")) },
            { _ = try await session.signIn(at: login, parameters: ["username": "demo", "password": "wattle"]) },
        ] as [@Sendable () async throws -> Void] {
            await expectWattleError(signIn) {
                if case .authenticationFailed(let reason, _) = $0 { return reason.contains("no baseURL") }
                return false
            }
        }
        #expect(server.stats.hits("/api/login") == 0)
        #expect(try await session.isSignedIn == false)
        try await server.stop()
    }
}
