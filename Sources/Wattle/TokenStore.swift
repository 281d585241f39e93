import WattleKeychain

/// Where a session keeps its ``AuthToken`` between requests and runs.
///
/// ``KeychainTokenStore`` (the default for apps and the CLI) persists in a keychain;
/// ``InMemoryTokenStore`` keeps it for the life of the process.
public protocol TokenStore: Sendable {
    /// The stored token, or nil.
    func load() async throws -> AuthToken?
    /// Stores a token, replacing any other.
    func save(_ token: AuthToken) async throws
    /// Removes the token.
    func clear() async throws
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
}
