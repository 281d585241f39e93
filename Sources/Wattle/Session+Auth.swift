extension Session {
    /// Stores a token for this session's API: it is saved to the authenticator's store and
    /// sent with every request to the base URL's origin from now on.
    ///
    /// ```swift
    /// let login = try await session.post("auth/login", parameters: ["username": user, "password": password])
    /// try await session.signIn(with: AuthToken(oauthResponse: login))
    /// ```
    ///
    /// - Throws: ``WattleError/authenticationFailed(reason:)`` when no authenticator is
    ///   configured or the store cannot save.
    public func signIn(with token: AuthToken) async throws(WattleError) {
        guard let auth else { throw .authenticationFailed(reason: "no authenticator is configured for this session") }
        try await auth.signIn(token)
    }

    /// Clears the stored token; requests go out without one.
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
