/// A ``TokenStore`` whose tokens are bound to one client: it saves each token with the
/// client's ``AuthToken/binding``, and loads a stored token only when it carries that binding.
/// A token another client obtained under the same store (another identifier, scope, endpoint
/// or fields), or one a person signed in for, reads as none, so the authenticator obtains its
/// own; the store holds one token, so that one then replaces it.
struct BoundTokenStore: TokenStore {
    /// Where the tokens are kept.
    let base: any TokenStore
    /// The client's binding.
    let binding: String

    func load() async throws -> AuthToken? {
        guard let token = try await base.load(), token.binding == binding else { return nil }
        return token
    }

    func save(_ token: AuthToken) async throws {
        var bound = token
        bound.binding = binding
        try await base.save(bound)
    }

    func clear() async throws { try await base.clear() }

    /// (The base store compares the access and refresh token only, as always.)
    func clear(ifStill token: AuthToken) async throws -> Bool { try await base.clear(ifStill: token) }
}
