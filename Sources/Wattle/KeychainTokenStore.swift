public import WattleKeychain

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// A ``TokenStore`` in a keychain: one item per API origin and profile, holding the access
/// and refresh tokens and the expiry, sealed like every keychain secret.
///
/// ```swift
/// let store = KeychainTokenStore(origin: URL(string: "https://api.example.com")!)   // default keychain
/// let testStore = KeychainTokenStore(origin: url, profile: "ci", store: .inMemory())   // for tests
/// ```
///
/// Given a store, the item is kept as with the default keychain (service ``defaultService``,
/// readable while locked: ``KeychainAccessibility/afterFirstUnlock``). Given a `Keychain`, its
/// service and accessibility are used as they are:
///
/// ```swift
/// let custom = KeychainTokenStore(origin: url, keychain: Keychain(service: "my.app.tokens"))
/// ```
public struct KeychainTokenStore: TokenStore {
    /// The keychain holding the item (service ``defaultService`` unless given).
    public let keychain: Keychain
    /// The item's key: `scheme://host:port#profile`.
    public let key: String

    /// The keychain service token items are stored under by default.
    public static let defaultService = "wattle.tokens"

    /// A store for the API at `origin` (scheme, host and port are used) and a profile name.
    public init(origin: URL, profile: String = "default", keychain: Keychain? = nil) {
        self.keychain = keychain ?? Keychain(service: Self.defaultService).accessibility(.afterFirstUnlock)
        self.key = "\(Origin(origin))#\(profile)"
    }

    /// A store for the API at `origin`, in a keychain store of your choosing.
    public init(origin: URL, profile: String = "default", store: KeychainStore) {
        self.init(
            origin: origin, profile: profile,
            keychain: Keychain(service: Self.defaultService, store: store).accessibility(.afterFirstUnlock))
    }

    /// The stored token, or nil.
    public func load() async throws -> AuthToken? { try loadNow() }
    /// The stored token, or nil, read on the calling thread.
    package func loadNow() throws -> AuthToken? {
        guard let data = try keychain.data(forKey: key) else { return nil }
        guard let token = Self.decode(data) else { throw KeychainError.decode }
        return token
    }

    /// The token in a stored item's bytes: the form `save` writes, read directly; anything else
    /// through JSONDecoder (see StoredTokenReader). Nil when neither reads it.
    private static func decode(_ data: Data) -> AuthToken? {
        StoredTokenReader.token(from: data) ?? (try? JSONDecoder().decode(AuthToken.self, from: data))
    }
    /// Stores a token, replacing any other (one transaction).
    public func save(_ token: AuthToken) async throws { try keychain.setCodable(token, forKey: key) }
    /// Removes the token.
    public func clear() async throws { try keychain.removeValue(forKey: key) }
    /// The lease on this token, for a keychain in a file: a lock beside it
    /// (`NAME.keychain-leases`) that other processes and sessions using the same keychain file
    /// and key wait for. Nil for a keychain in memory, or where the lock cannot be had.
    public func refreshLease(waitingAtMost limit: Duration) async -> TokenStoreLease? {
        guard let file = keychain.store.fileURL else { return nil }
        return await RefreshLeaseFile.acquire(
            keychainFile: file, item: "\(keychain.service)\u{0}\(key)", timeout: limit)
    }

    /// Removes the token if the keychain still holds `token`, reading and removing in one
    /// transaction: another process cannot save a new token in between.
    public func clear(ifStill token: AuthToken) async throws -> Bool {
        try keychain.removeValue(forKey: key) { data in Self.decode(data)?.isSameCredential(as: token) ?? false }
    }
}
