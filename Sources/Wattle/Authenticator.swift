/// Applies a stored token to requests for the session's API and refreshes it when needed.
///
/// ```swift
/// let session = Session(configuration: Configuration {
///     $0.baseURL = URL(string: "https://api.example.com/v1/")
///     $0.authenticator = Authenticator(
///         store: KeychainTokenStore(origin: URL(string: "https://api.example.com")!),
///         refresh: Authenticator.postRefreshToken(to: "auth/refresh"))
/// })
/// try await session.signIn(at: "auth/login", parameters: ["username": user, "password": password])
/// let me = try await session.get("me")   // Authorization: Bearer … added, refreshed on 401
/// ```
///
/// The token goes only to requests whose origin (scheme, host, port) is the base URL's; never
/// to another host, port or scheme, and it is dropped when a redirect leaves the origin.
/// Refresh is single-flight: any number of concurrent requests failing with the same stale
/// token cause one refresh; they wait for it, then retry once with the new token. Before it
/// calls the server, the refresh reads the store: a newer token saved there by another process
/// or session (which refreshed first) is used as it is, or refreshed itself if it has expired
/// too. It holds the store's lease on the token (``TokenStore/refreshLease(waitingAtMost:)``) from that read
/// to the save of its new token: with ``KeychainTokenStore`` on a keychain file, another process
/// or session whose token expired too waits, then takes up the new token, so a rotating refresh
/// token is never sent twice. A request
/// that failed with an older token than the current one just retries. The new token is saved
/// to the store before the waiting requests resume (if the store cannot save it, it is still
/// used, and an error logged). A failed refresh fails every waiting request with
/// ``WattleError/authenticationFailed(reason:cause:)``, whose reason says why (a network error's
/// own description, or the status the refresh call got), and keeps the token. When
/// ``isRefreshRejected`` says the server refused the refresh token itself, the store is read
/// again first: a token another process saved meanwhile (it refreshed with the same refresh
/// token) is used instead; otherwise the token is cleared, in the store only while it still
/// holds the refused one, and with ``obtain`` set a token is obtained in its place. A sign-in or sign-out made while a refresh runs wins: one made while
/// the refresh waits for the server drops the refresh's outcome (the waiting requests take the
/// signed-in token), and one made while the refresh reads or writes the store waits for that
/// step, then decides the token, in the store too. (Within one session: a sign-in in another
/// session or process sharing the store is not ordered so, and a refresh running here may save
/// its token over it.)
///
/// For an API whose clients get their own tokens (the OAuth 2 client-credentials grant),
/// ``obtain`` takes the place of a sign-in: a request made with no token gets one first, and a
/// token without a refresh token is replaced by a new one where a refresh would happen:
///
/// ```swift
/// $0.authenticator = Authenticator.clientCredentials(
///     store: KeychainTokenStore(origin: URL(string: "https://api.example.com")!, profile: "reports-service"),
///     endpoint: "oauth/token", clientID: clientID, clientSecret: clientSecret, scope: "reports:read")
/// let reports = try await session.get("reports")   // a token is obtained, stored and sent
/// ```
public struct Authenticator: Sendable {
    /// Obtains a new token from the current one. `session` sends requests without this
    /// authenticator (the refresh call itself is never authenticated or refreshed).
    public typealias Refresh = @Sendable (_ current: AuthToken, _ session: Session) async throws -> AuthToken

    /// Obtains a token with none to start from, for an API whose clients get their own (the
    /// OAuth 2 client-credentials grant, an API key exchanged for a token). `session` sends
    /// requests without this authenticator: send the token call with it, not with the session
    /// this authenticator belongs to, whose requests would wait for this very call.
    public typealias Obtain = @Sendable (_ session: Session) async throws -> AuthToken

    /// Where the token is kept.
    public var store: any TokenStore
    /// How to refresh, or nil when the API has no refresh: a 401 then fails at once, as
    /// ``WattleError/httpStatus(_:)`` with the server's response (unless ``obtain`` is set,
    /// which then gets a new token).
    public var refresh: Refresh?
    /// How to obtain a token without a sign-in, or nil (the default) when a person signs in.
    ///
    /// When set, a request to the API made with no token (none stored, or after a sign-out)
    /// obtains one first; a refresh token the server refuses is cleared and a token obtained
    /// in its place, for the requests that were waiting for the refresh; and a token without a refresh token (or any
    /// token, when ``refresh`` is nil) is replaced by a newly obtained one when it is about to
    /// expire (``expiryLeeway``) or the server refuses it. A request waiting for it fails with
    /// ``WattleError/authenticationFailed(reason:cause:)`` if a sign-out comes first. This works as a refresh does: single-flight
    /// for concurrent requests, the new token saved to the store before they go on, a newer
    /// token another process stored taken up instead, and counted against
    /// ``maximumRefreshesPerWindow``. A token with a refresh token is refreshed with
    /// ``refresh`` when that is set; a refresh the server answers with another 4xx than a
    /// refusal of the refresh token (``isRefreshRejected``: `invalid_client` for a refresh sent
    /// without the client's authentication, `unsupported_grant_type`) obtains a token in the same
    /// renewal, and keeps the refresh token until the new token replaces it. A failure to obtain one (the server refusing the client's
    /// credentials, say) fails the waiting requests with
    /// ``WattleError/authenticationFailed(reason:cause:)`` and clears nothing.
    public var obtain: Obtain?
    /// Whether a response means the token was not accepted. Default: status 401. Asked only
    /// of a response that saw the token: from the API's origin, after no redirect that went
    /// to another origin on the way (the token was dropped there).
    public var isAuthenticationFailure: @Sendable (Response) -> Bool = { $0.statusCode == 401 }
    /// Whether a refresh error means the refresh token itself was refused (the token is then
    /// cleared). Default: the refresh call answered 400 or 401, unless its body is an OAuth 2
    /// error (RFC 6749 section 5.2) that refuses the client or the request rather than the
    /// token: `invalid_client` (a changed client secret), `unauthorized_client`,
    /// `unsupported_grant_type`, `invalid_scope` or `invalid_request`. Those fail the waiting
    /// requests and keep the token, as a network error does; `invalid_grant`, another code or
    /// no OAuth body at all is a refusal.
    public var isRefreshRejected: @Sendable (any Error) -> Bool = { error in
        guard let error = error as? WattleError, case .httpStatus(let response) = error,
            response.statusCode == 400 || response.statusCode == 401
        else { return false }
        return !Self.clientErrorCodes.contains(Self.oauthErrorCode(of: response) ?? "")
    }
    /// A token that expires within this margin is refreshed (or obtained again) before it is
    /// sent; for a token obtained or refreshed by this session, at most half its lifetime.
    /// Default 10 s. A renewal made early, within the margin, that fails while leaving the
    /// token in place (a 5xx, a timeout, the cap) does not fail the request: the token is
    /// sent while it lasts. A refused refresh token, which clears it, does.
    public var expiryLeeway: Duration = .seconds(10)
    /// At most this many refreshes (and obtains) per ``refreshWindow``; more fail with
    /// ``WattleError/authenticationFailed(reason:cause:)`` instead of hammering the server. A refresh
    /// that could not reach the server (no connection, a connect timeout, TLS, or its request
    /// refused before it was sent) is not counted, so an outage does not lock refreshes out
    /// once the network is back; one whose call failed after a server had answered (a redirect
    /// it could not follow, or the next hop's failure) is. Default 5.
    public var maximumRefreshesPerWindow = 5
    /// The window for ``maximumRefreshesPerWindow``. Default 60 s.
    public var refreshWindow: Duration = .seconds(60)

    /// The OAuth 2 error codes that refuse the client or the request, not the refresh token.
    static let clientErrorCodes: Set<String> = [
        "invalid_client", "unauthorized_client", "unsupported_grant_type", "invalid_scope", "invalid_request",
    ]

    /// The `error` code of an OAuth 2 error response (a JSON object), if the body is one.
    static func oauthErrorCode(of response: Response) -> String? {
        guard response.data.count <= 64 * 1024, let body = try? response.json() else { return nil }
        return body["error"]?.stringValue
    }

    /// Creates an authenticator.
    public init(store: any TokenStore, refresh: Refresh? = nil, obtain: Obtain? = nil) {
        self.store = store
        self.refresh = refresh
        self.obtain = obtain
    }

    /// A refresh that POSTs `{"grant_type": "refresh_token", "refresh_token": "…"}` (JSON, or a
    /// form with `encoding: .form`) to `endpoint` and reads an OAuth 2 token response.
    ///
    /// `encoding: .query` fails each refresh with ``WattleError/invalidRequest(reason:)``,
    /// unsent (the waiting requests then fail with ``WattleError/authenticationFailed(reason:cause:)``
    /// naming it, and the token is kept): a refresh token in a URL ends up in access logs.
    public static func postRefreshToken(to endpoint: String, encoding: ParameterEncoding = .json) -> Refresh {
        { current, session in
            guard encoding != .query else {
                throw WattleError.invalidRequest(
                    reason: "a refresh token goes in the body (.json or .form), never in the URL, where logs keep it")
            }
            guard let refreshToken = current.refreshToken else {
                throw WattleError.authenticationFailed(reason: "the token has no refresh token; sign in again")
            }
            let response = try await session.post(
                endpoint, parameters: ["grant_type": "refresh_token", "refresh_token": refreshToken], encoding: encoding
            )
            return try AuthToken(oauthResponse: response, previous: current)
        }
    }
}
