import WattleKeychain

/// Where a session keeps its ``AuthToken`` between requests and runs.
///
/// ``KeychainTokenStore`` (the default for apps and the CLI) persists in a keychain;
/// ``InMemoryTokenStore`` keeps it for the life of the process.
///
/// A session makes one store call at a time (its first read, its sign-ins, sign-outs and
/// refreshes take turns), so a store's methods must not call back into a session using it: signing in or
/// out, or sending a request that needs a refresh, would wait for the turn the call holds.
public protocol TokenStore: Sendable {
    /// The stored token, or nil.
    func load() async throws -> AuthToken?
    /// Stores a token, replacing any other.
    func save(_ token: AuthToken) async throws
    /// Removes the token.
    func clear() async throws
    /// Removes the token only if the store still holds `token` (the same access and refresh
    /// token; the expiry is not compared, as a store may keep it less precisely), and says
    /// whether it did.
    ///
    /// A session calls this, not ``clear()``, when the server rejects its refresh token: another
    /// process sharing the store may have refreshed with the same refresh token and saved the
    /// new token meanwhile, which must not be lost. The default loads and compares, then clears;
    /// a store shared between processes should do it in one transaction, as
    /// ``KeychainTokenStore`` does.
    func clear(ifStill token: AuthToken) async throws -> Bool
    /// Waits for and takes the lease on this store's token that a refresh (or an obtain) holds
    /// from its read of the store to the save of its new token; nil when the store has none.
    ///
    /// With a lease, only one of the sessions and processes sharing the store refreshes at a
    /// time, and the others then read its new token: a refresh token is never sent twice,
    /// which a server that rotates them and detects reuse (RFC 9700) answers by revoking the
    /// new token too. Without one (the default), two processes whose tokens expire together
    /// may both refresh with the same refresh token; the one refused then takes up the token
    /// the other saved. ``KeychainTokenStore`` has leases for a keychain file.
    ///
    /// - Parameter limit: how long to wait for another holder (the session passes what its
    ///   renewal may take: twice its total timeout, and 30 s for the store); after it, nil,
    ///   and the refresh goes on without the lease.
    func refreshLease(waitingAtMost limit: Duration) async -> TokenStoreLease?
}

extension TokenStore {
    /// No lease: see the requirement.
    public func refreshLease(waitingAtMost limit: Duration) async -> TokenStoreLease? { nil }

    /// Loads the token and clears the store when it is `token`: not atomic, see the requirement.
    public func clear(ifStill token: AuthToken) async throws -> Bool {
        guard let stored = try await load(), stored.isSameCredential(as: token) else { return false }
        try await clear()
        return true
    }
}

/// A ``TokenStore`` in memory, for tests and short-lived programs.
public final class InMemoryTokenStore: TokenStore {
    private let token: PThreadLocked<AuthToken?>

    /// Creates a store, optionally holding a token already.
    public init(_ token: AuthToken? = nil) { self.token = PThreadLocked(token) }

    /// The stored token, or nil.
    public func load() async throws -> AuthToken? { token.withLock { $0 } }
    /// Stores a token.
    public func save(_ token: AuthToken) async throws { self.token.withLock { $0 = token } }
    /// Removes the token.
    public func clear() async throws { token.withLock { $0 = nil } }
    /// Removes the token if it is still `token` (under the store's lock).
    public func clear(ifStill token: AuthToken) async throws -> Bool {
        self.token.withLock { stored in
            guard let current = stored, current.isSameCredential(as: token) else { return false }
            stored = nil
            return true
        }
    }
}
