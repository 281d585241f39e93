extension Session {
    /// Stores a token for this session's API: it is saved to the authenticator's store and
    /// sent with every request to the base URL's origin from now on.
    ///
    /// A token refresh that is reading or writing the store at that moment finishes that step
    /// first (its requests may go with the refreshed token); the sign-in then decides the
    /// token, in the store too. A refresh still waiting for the server drops its outcome.
    /// Cancelling the task ends that wait at once, with nothing changed.
    ///
    /// ```swift
    /// let login = Request(
    ///     "auth/login", method: .post, body: .json(["username": user, "password": password]),
    ///     authentication: .none)
    /// try await session.signIn(with: AuthToken(oauthResponse: try await session.send(login)))
    /// ```
    ///
    /// ``signIn(at:parameters:encoding:)`` does this for an OAuth 2 token response.
    ///
    /// - Throws: ``WattleError/authenticationFailed(reason:cause:)`` when no authenticator is
    ///   configured, the configuration has no ``Configuration/baseURL`` (the token would go
    ///   to no request), or the store cannot save; ``WattleError/cancelled`` when the task is
    ///   cancelled before the token is saved (nothing changes).
    public func signIn(with token: AuthToken) async throws(WattleError) {
        guard let auth else { throw .authenticationFailed(reason: "no authenticator is configured for this session") }
        try checkBaseURLForToken()
        try await auth.signIn(token)
    }

    /// A token goes only to the base URL's origin: without a base URL, a sign-in would keep a
    /// token that no request carries.
    private func checkBaseURLForToken() throws(WattleError) {
        guard baseOrigin != nil else {
            throw .authenticationFailed(
                reason:
                    "the session has no baseURL, and a token goes only to the base URL's origin: it would be sent with no request"
            )
        }
    }

    /// POSTs `parameters` to a sign-in endpoint without the stored token, reads the OAuth 2
    /// token response (``AuthToken/init(oauthResponse:previous:)``) and signs in with it.
    ///
    /// ```swift
    /// let token = try await session.signIn(at: "auth/login", parameters: ["username": user, "password": password])
    /// ```
    ///
    /// The call is ``Request/Authentication-swift.enum/none``: a token kept from before is not
    /// sent or refreshed, so a revoked one cannot fail the sign-in, and a wrong password's
    /// refusal is the error.
    ///
    /// - Returns: The token now stored.
    /// - Throws: ``WattleError/authenticationFailed(reason:cause:)`` when no authenticator or no
    ///   ``Configuration/baseURL`` is configured (nothing is sent) or the store cannot save;
    ///   ``WattleError/invalidRequest(reason:)`` for `encoding: .query` (a password in a URL
    ///   ends up in access logs; nothing is sent); the sign-in call's own error,
    ///   such as ``WattleError/httpStatus(_:)`` with the server's answer to a wrong password;
    ///   ``WattleError/decoding(type:underlying:bodyPrefix:)`` when the answer is not a token.
    @discardableResult
    public func signIn(
        at endpoint: String, parameters: Parameters, encoding: ParameterEncoding = .json
    ) async throws(WattleError) -> AuthToken {
        guard auth != nil else {
            throw .authenticationFailed(reason: "no authenticator is configured for this session")
        }
        try checkBaseURLForToken()
        guard encoding != .query else {
            throw .invalidRequest(
                reason: "sign-in parameters go in the body (.json or .form), never in the URL, where logs keep them")
        }
        var request = encoding.request(endpoint, method: .post, parameters: parameters, headers: [:])
        request.authentication = .none
        let token = try AuthToken(oauthResponse: try await send(request))
        try await signIn(with: token)
        return token
    }

    /// Clears the stored token; requests go out without one. (With
    /// ``Authenticator/obtain``, the next request obtains a new token and stores it: only a
    /// session without `obtain` stays signed out.) As with ``signIn(with:)``, a refresh's
    /// store step under way finishes first (cancelling the task ends that wait at once), and
    /// the sign-out then decides the token.
    ///
    /// - Throws: ``WattleError/authenticationFailed(reason:cause:)`` when no authenticator is
    ///   configured or the store cannot clear; ``WattleError/cancelled`` when the task is
    ///   cancelled before the store is cleared (nothing changes).
    public func signOut() async throws(WattleError) {
        guard let auth else { throw .authenticationFailed(reason: "no authenticator is configured for this session") }
        try await auth.signOut()
    }

    /// Whether a token is stored for this session's API.
    public var isSignedIn: Bool {
        get async throws(WattleError) {
            guard let auth else { return false }
            return try await auth.isSignedIn()
        }
    }
}
