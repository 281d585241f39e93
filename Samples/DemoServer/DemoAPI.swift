import Foundation
import NIOConcurrencyHelpers

/// The demo API: login, token refresh, and protected endpoints.
///
/// | route | answer |
/// | --- | --- |
/// | `POST /api/login` `{"username","password"}` (JSON or a form) | `{"access_token","refresh_token","expires_in","token_type"}` |
/// | `POST /api/refresh` `{"refresh_token"}` (JSON or a form) | a new token pair; the old refresh token stops working |
/// | `POST /api/token` `grant_type=client_credentials` (a form or JSON), the client by HTTP Basic or `client_id` and `client_secret` fields | an access token for the client (no refresh token), as RFC 6749 section 4.4 answers |
/// | `GET /api/users`, `/api/users/{id}` | users (Bearer token required) |
/// | `GET /api/emojis` | a few emojis (Bearer) |
/// | `GET /api/meta?since=DATE` | server facts and changes since a date (Bearer) |
/// | `GET /api/slow?ms=N` | answers after N ms (Bearer) |
/// | `GET /api/download/{bytes}` | that many bytes of ``Pattern`` (Bearer) |
/// | `GET /api/whoami` | the user the token belongs to (`client:{id}` for a client's token) and its `scope` if it has one (Bearer) |
///
/// A missing, unknown or expired access token gets `401` with `WWW-Authenticate: Bearer`.
public final class DemoAPI: Sendable {
    /// Settings tests and the demo change at run time.
    public struct Settings: Sendable {
        /// How long an access token lives.
        public var accessTokenLifetime: Duration = .seconds(300)
        /// How long `/api/refresh` and `/api/token` take to answer (to let concurrent requests
        /// pile up).
        public var refreshDelay: Duration = .zero
        /// When true, `/api/refresh` answers 401 `invalid_grant`.
        public var rejectRefresh = false
        /// When true, `/api/refresh` answers 503 (a server fault, not a rejected token).
        public var failRefreshWithServerError = false
        /// When true, a refresh token used a second time revokes every token of its user, access
        /// and refresh (reuse detection, RFC 9700 section 4.14.2), and is answered 401
        /// `invalid_grant`.
        public var detectRefreshReuse = false
        /// When set, `/api/refresh` answers 401 with this OAuth error code, such as
        /// `invalid_client` (the client's own credentials refused, not the refresh token).
        public var refreshClientError: String?
        /// When true, token responses carry `expires_in` as a string (`"300"`), as some servers
        /// send it.
        public var expiresInAsString = false
        /// When true, `/api/login` and `/api/refresh` read only form bodies, as an OAuth 2
        /// token endpoint does (RFC 6749); a JSON body gets 415.
        public var formBodiesOnly = false
        /// The accepted username and password.
        public var username = "demo"
        /// The accepted password.
        public var password = "wattle"
        /// The client identifier `/api/token` accepts.
        public var clientID = "demo-client"
        /// The client secret `/api/token` accepts.
        public var clientSecret = "demo-client-secret"
    }

    private struct Token {
        var user: String
        var expires: ContinuousClock.Instant
        var scope: String?
    }

    /// What a `/api/token` request carried, for tests to check what a client sent.
    public struct TokenRequest: Sendable, Equatable {
        /// How the client authenticated: `basic`, `body`, or `none`.
        public var clientAuthentication: String
        /// The request's `Content-Type`, if any.
        public var contentType: String?
        /// The body's fields, each value as text.
        public var fields: [String: String]
    }

    private struct State {
        var settings = Settings()
        var lastTokenRequest: TokenRequest?
        var accessTokens: [String: Token] = [:]
        var refreshTokens: [String: String] = [:]  // refresh token -> user
        var spentRefreshTokens: [String: String] = [:]  // used refresh token -> user
    }

    // NIOLockedValueBox (pthread-based) rather than Mutex: ThreadSanitizer sees its handovers
    // between the event loops' threads and the test's.
    private let state = NIOLockedValueBox(State())
    /// Holds the answers of `/api/refresh` and `/api/token` from `holdTokenAnswers` on.
    private let tokenGate = RouteGate()
    /// While answers are held: the task that opens the gate at the hold's limit.
    private let tokenHold = NIOLockedValueBox<Task<Void, Never>?>(nil)

    /// Creates the API with default settings.
    public init() {}

    /// Holds the answers of `/api/refresh` and `/api/token` that go through `refreshDelay` (all
    /// but a malformed token request's 400) until ``releaseTokenAnswers()``, or until `limit`
    /// has passed, so that a test that never releases them still ends. For tests that act while
    /// a request waits on a refresh: a delay cannot promise that the test's next step comes
    /// first on a loaded machine. Once only: after the release, answers are no longer held.
    public func holdTokenAnswers(atMost limit: Duration = .seconds(120)) {
        let limitTask = Task { [tokenGate] in
            try? await Task.sleep(for: limit)
            tokenGate.open()
        }
        tokenHold.withLockedValue { $0 = limitTask }
    }

    /// Sends the answers ``holdTokenAnswers(atMost:)`` held, and every later one at once; the
    /// hold's limit no longer waits.
    public func releaseTokenAnswers() {
        let limitTask = tokenHold.withLockedValue { hold in
            defer { hold = nil }
            return hold
        }
        limitTask?.cancel()
        tokenGate.open()
    }

    /// The last `/api/token` request, if any.
    public var lastTokenRequest: TokenRequest? { state.withLockedValue { $0.lastTokenRequest } }

    /// Reads or changes the settings.
    public func configure(_ change: (inout Settings) -> Void) { state.withLockedValue { change(&$0.settings) } }

    /// Makes every issued access token expired, as if time had passed.
    public func expireAccessTokens() {
        state.withLockedValue { state in
            let past = ContinuousClock.now - .seconds(1)
            for key in state.accessTokens.keys { state.accessTokens[key]?.expires = past }
        }
    }

    /// Issues a token pair for a user directly (for tests that skip the login call).
    public func issueTokens(for user: String = "demo") -> (access: String, refresh: String) {
        state.withLockedValue { issue(for: user, in: &$0) }
    }

    private func issue(for user: String, in state: inout State) -> (access: String, refresh: String) {
        let access = "at_" + Self.randomToken()
        let refresh = "rt_" + Self.randomToken()
        state.accessTokens[access] = Token(user: user, expires: .now + state.settings.accessTokenLifetime)
        state.refreshTokens[refresh] = user
        return (access, refresh)
    }

    static func randomToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<4).map { _ in String(generator.next() as UInt64, radix: 36) }.joined()
    }

    /// The outcome for an `/api/...` request, or nil for other paths.
    func route(_ request: RouteRequest) -> RouteOutcome? {
        guard request.path.hasPrefix("/api/") else { return nil }
        let parts = request.path.split(separator: "/").map(String.init).dropFirst()
        switch (request.method, Array(parts)) {
        case ("POST", ["login"]), ("POST", ["refresh"]):
            if state.withLockedValue({ $0.settings.formBodiesOnly }), !Self.isForm(request) {
                return TestRoutes.json(
                    415, ["error": "invalid_request", "message": "the body must be application/x-www-form-urlencoded"])
            }
            return parts.last == "login" ? login(request) : refresh(request)
        case ("POST", ["token"]):
            return clientToken(request)
        default:
            break
        }
        guard let user = authenticatedUser(request) else {
            return .respond(
                status: 401,
                headers: [
                    ("Content-Type", "application/json"), ("WWW-Authenticate", #"Bearer error="invalid_token""#),
                ],
                body: Array(#"{"error":"invalid_token","message":"missing, unknown or expired access token"}"#.utf8))
        }
        switch (request.method, Array(parts)) {
        case ("GET", ["whoami"]):
            guard let scope = bearerToken(request)?.scope else { return TestRoutes.json(200, ["user": user]) }
            return TestRoutes.json(200, ["user": user, "scope": scope])
        case ("GET", ["users"]):
            return jsonArray(Self.users)
        case ("GET", let path) where path.count == 2 && path[0] == "users":
            guard let id = Int(path[1]), let found = Self.users.first(where: { ($0["id"] as? Int) == id }) else {
                return TestRoutes.json(404, ["error": "not_found", "message": "no user \(path[1])"])
            }
            return TestRoutes.json(200, found)
        case ("GET", ["emojis"]):
            return TestRoutes.json(200, ["koala": "🐨", "wattle": "🌼", "kangaroo": "🦘", "platypus": "🦫"])
        case ("GET", ["meta"]):
            let since = request.queryValue("since") ?? "1970-01-01T00:00:00Z"
            return TestRoutes.json(200, ["server": "Wattle demo API", "version": "1.0", "since": since, "changes": 3])
        case ("GET", ["slow"]):
            let milliseconds = Int(request.queryValue("ms") ?? "1000") ?? 1000
            return .delayed(milliseconds: milliseconds, TestRoutes.json(200, ["slow": true, "ms": milliseconds]))
        case ("GET", let path) where path.count == 2 && path[0] == "download":
            return .stream(
                status: 200, headers: [("Content-Type", "application/octet-stream")], totalBytes: Int(path[1]) ?? 0)
        default:
            return TestRoutes.json(
                404, ["error": "not_found", "message": "no route for \(request.method) \(request.path)"])
        }
    }

    private func authenticatedUser(_ request: RouteRequest) -> String? {
        bearerToken(request)?.user
    }

    private func bearerToken(_ request: RouteRequest) -> Token? {
        guard let header = request.header("Authorization"), header.hasPrefix("Bearer ") else { return nil }
        let token = String(header.dropFirst("Bearer ".count))
        return state.withLockedValue { state in
            guard let entry = state.accessTokens[token], entry.expires > .now else { return nil }
            return entry
        }
    }

    private static func isForm(_ request: RouteRequest) -> Bool {
        request.header("Content-Type")?.lowercased().hasPrefix("application/x-www-form-urlencoded") == true
    }

    /// The body's fields: a JSON object, or a form when the body says it is one.
    private func body(_ request: RouteRequest) -> [String: Any] {
        if Self.isForm(request) {
            let items = RouteRequest.formItems(String(decoding: request.body, as: UTF8.self))
            return Dictionary(items, uniquingKeysWith: { first, _ in first })
        }
        return (try? JSONSerialization.jsonObject(with: Data(request.body))) as? [String: Any] ?? [:]
    }

    private func login(_ request: RouteRequest) -> RouteOutcome {
        let fields = body(request)
        let username = fields["username"] as? String ?? ""
        let password = fields["password"] as? String ?? ""
        return state.withLockedValue { state in
            guard username == state.settings.username, password == state.settings.password else {
                return TestRoutes.json(401, ["error": "invalid_credentials", "message": "wrong username or password"])
            }
            let pair = issue(for: username, in: &state)
            return tokenResponse(pair, settings: state.settings)
        }
    }

    private func refresh(_ request: RouteRequest) -> RouteOutcome {
        let refreshToken = body(request)["refresh_token"] as? String ?? ""
        let (outcome, delay) = state.withLockedValue { state -> (RouteOutcome, Duration) in
            let delay = state.settings.refreshDelay
            if state.settings.failRefreshWithServerError {
                return (TestRoutes.json(503, ["error": "unavailable", "message": "try again later"]), delay)
            }
            if let code = state.settings.refreshClientError {
                return (TestRoutes.json(401, ["error": code, "message": "the client is not authorized"]), delay)
            }
            guard !state.settings.rejectRefresh, let user = state.refreshTokens.removeValue(forKey: refreshToken) else {
                if state.settings.detectRefreshReuse, let user = state.spentRefreshTokens[refreshToken] {
                    state.refreshTokens = state.refreshTokens.filter { $0.value != user }
                    state.accessTokens = state.accessTokens.filter { $0.value.user != user }
                }
                return (
                    TestRoutes.json(401, ["error": "invalid_grant", "message": "the refresh token is not valid"]), delay
                )
            }
            state.spentRefreshTokens[refreshToken] = user
            let pair = issue(for: user, in: &state)
            return (tokenResponse(pair, settings: state.settings), delay)
        }
        return answered(outcome, after: delay)
    }

    /// `POST /api/token`: the client-credentials grant (RFC 6749 section 4.4), with the client
    /// authenticated by HTTP Basic (identifier and secret form-decoded, section 2.3.1) or by
    /// body fields, never both.
    private func clientToken(_ request: RouteRequest) -> RouteOutcome {
        let fields = body(request)
        var client: (id: String, secret: String)?
        let basic = request.header("Authorization").flatMap(Self.basicCredentials)
        if let basic { client = basic }
        if let id = fields["client_id"] as? String {
            guard basic == nil else {
                return TestRoutes.json(
                    400, ["error": "invalid_request", "message": "more than one way of client authentication"])
            }
            client = (id, fields["client_secret"] as? String ?? "")
        }
        guard fields["grant_type"] as? String == "client_credentials" else {
            return TestRoutes.json(400, ["error": "unsupported_grant_type", "message": "only client_credentials"])
        }
        let scope = fields["scope"] as? String
        let seen = TokenRequest(
            clientAuthentication: basic != nil ? "basic" : client != nil ? "body" : "none",
            contentType: request.header("Content-Type"), fields: fields.mapValues { $0 as? String ?? "\($0)" })
        let (outcome, delay) = state.withLockedValue { state -> (RouteOutcome, Duration) in
            state.lastTokenRequest = seen
            let delay = state.settings.refreshDelay
            guard let client, client.id == state.settings.clientID, client.secret == state.settings.clientSecret else {
                let refusal = RouteOutcome.respond(
                    status: 401,
                    headers: [("Content-Type", "application/json"), ("WWW-Authenticate", #"Basic realm="demo""#)],
                    body: Array(#"{"error":"invalid_client","message":"unknown client or wrong secret"}"#.utf8))
                return (refusal, delay)
            }
            let access = "at_" + Self.randomToken()
            state.accessTokens[access] = Token(
                user: "client:\(client.id)", expires: .now + state.settings.accessTokenLifetime, scope: scope)
            var answer: [String: any Sendable] = [
                "access_token": access, "token_type": "Bearer",
                "expires_in": Int(state.settings.accessTokenLifetime.components.seconds),
            ]
            if let scope { answer["scope"] = scope }
            return (TestRoutes.json(200, answer), delay)
        }
        return answered(outcome, after: delay)
    }

    /// `outcome`, answered after `delay`, and once the token gate opens if answers are held.
    private func answered(_ outcome: RouteOutcome, after delay: Duration) -> RouteOutcome {
        let gated = tokenHold.withLockedValue { $0 != nil } ? RouteOutcome.held(tokenGate, outcome) : outcome
        let milliseconds = Int(delay.components.seconds * 1000 + delay.components.attoseconds / 1_000_000_000_000_000)
        return milliseconds > 0 ? .delayed(milliseconds: milliseconds, gated) : gated
    }

    /// The identifier and secret of an `Authorization: Basic` header, each form-decoded.
    private static func basicCredentials(_ header: String) -> (id: String, secret: String)? {
        guard header.lowercased().hasPrefix("basic "),
            let data = Data(base64Encoded: String(header.dropFirst("basic ".count))),
            let text = String(data: data, encoding: .utf8), let colon = text.firstIndex(of: ":")
        else { return nil }
        return (RouteRequest.formDecoded(text[..<colon]), RouteRequest.formDecoded(text[text.index(after: colon)...]))
    }

    private func tokenResponse(_ pair: (access: String, refresh: String), settings: Settings) -> RouteOutcome {
        let seconds = Int(settings.accessTokenLifetime.components.seconds)
        let asString = settings.expiresInAsString
        return TestRoutes.json(
            200,
            [
                "access_token": pair.access, "refresh_token": pair.refresh, "token_type": "Bearer",
                "expires_in": asString ? String(seconds) as any Sendable : seconds,
            ])
    }

    private func jsonArray(_ array: [[String: any Sendable]]) -> RouteOutcome {
        let data = (try? JSONSerialization.data(withJSONObject: array, options: [.sortedKeys])) ?? Data("[]".utf8)
        return .respond(status: 200, headers: [("Content-Type", "application/json")], body: Array(data))
    }

    static let users: [[String: any Sendable]] = [
        ["id": 1, "name": "Ada Lovelace", "email": "ada@example.test"],
        ["id": 2, "name": "Grace Hopper", "email": "grace@example.test"],
        ["id": 3, "name": "Katherine Johnson", "email": "katherine@example.test"],
    ]
}
