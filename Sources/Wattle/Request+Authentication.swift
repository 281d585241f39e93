extension Request {
    /// Whether a request carries the session's stored token.
    ///
    /// ```swift
    /// let login = Request(
    ///     "auth/login", method: .post, body: .json(["username": user, "password": password]),
    ///     authentication: .none)   // a wrong password's 401 is the error, not a refused token
    /// try await session.signIn(with: AuthToken(oauthResponse: try await session.send(login)))
    /// ```
    public enum Authentication: Sendable, Hashable {
        /// With an ``Configuration/authenticator``, a request to the base URL's origin carries
        /// the stored token (refreshed first when it has expired), and a refusal of it
        /// refreshes and retries once. The default. An `Authorization` header set on the
        /// request itself is left alone, and so are credentials in its endpoint
        /// (an absolute `https://user:password@host/…`, sent as HTTP Basic; not the base URL's);
        /// then nothing is refreshed. A refusal at the end of a redirect that changed the method
        /// (a POST answered `303 See Other`) is the error: the server acted on the POST, and
        /// sending it again would do so twice.
        case automatic
        /// The request goes out without the stored token, and a 401 is its error
        /// (``WattleError/httpStatus(_:)``) like any status: the token is not refreshed or
        /// cleared for it, and the request is not sent again with a token. For sign-in and
        /// other calls made before or instead of the token.
        case none
    }
}
