import WattleKeychain

/// A ``TokenStore`` that shows only the tokens bound to one client: it loads a stored token
/// only when it carries the client's ``AuthToken/binding``. A token another client obtained
/// under the same store (another identifier, scope, endpoint or fields), or one a person signed
/// in for, reads as none, so the authenticator obtains its own, which then replaces it (the
/// store holds one token).
///
/// Saves pass tokens through as they are: the authenticator's obtain binds what it obtains (and
/// a refresh made with ``AuthToken/init(oauthResponse:previous:)`` keeps the binding), while a
/// token signed in with on such a session is a person's, sent by that session only and never
/// taken up as the client's. Clearing removes only a token this view shows.
package struct BoundTokenStore: TokenStore {
    /// Where the tokens are kept.
    package let base: any TokenStore
    /// The client's binding.
    package let binding: String

    package func load() async throws -> AuthToken? {
        guard let token = try await base.load(), token.binding == binding else { return nil }
        return token
    }

    package func save(_ token: AuthToken) async throws { try await base.save(token) }

    /// Removes the stored token if it is this client's; a hidden one (a person's, another
    /// client's) stays.
    package func clear() async throws {
        let token: AuthToken?
        do {
            token = try await load()
        } catch let error as KeychainError where error == .decode {
            // A damaged item cannot be told to be this client's or not; left, it would fail
            // every sign-out: removed.
            try await base.clear()
            return
        }
        guard let token else { return }
        _ = try await base.clear(ifStill: token)
    }

    /// (The base store compares the access and refresh token only, as always; a hidden token
    /// with the same credential cannot be told from this client's.)
    package func clear(ifStill token: AuthToken) async throws -> Bool { try await base.clear(ifStill: token) }

    package func refreshLease(waitingAtMost limit: Duration) async -> TokenStoreLease? {
        await base.refreshLease(waitingAtMost: limit)
    }
}
