public import WattleKeychain

/// The keychain item in which a session keeps its cookies between runs
/// (``Configuration/CookieStorage/keychain(_:)``): one item per jar name, holding the jar in
/// libcurl's (Netscape) cookie-file form, sealed like every keychain secret.
///
/// ```swift
/// let session = Session(configuration: Configuration {
///     $0.baseURL = URL(string: "https://intranet.example.com/api/")
///     $0.cookies = .keychain(KeychainCookieJar(name: "intranet"))   // default keychain
/// })
/// let testJar = KeychainCookieJar(name: "intranet", store: .inMemory())   // for tests
/// ```
///
/// Given a store, the item is kept as with the default keychain (service ``defaultService``,
/// readable while locked: ``KeychainAccessibility/afterFirstUnlock``). Given a `Keychain`, its
/// service and accessibility are used as they are.
public struct KeychainCookieJar: Sendable, Hashable, CustomStringConvertible {
    /// The keychain holding the item (service ``defaultService`` unless given).
    public let keychain: Keychain
    /// The item's key: the jar's name.
    public let key: String

    /// The keychain service cookie jars are stored under by default.
    public static let defaultService = "wattle.cookies"

    /// A jar of the given name, in the default keychain or a given one.
    public init(name: String = "default", keychain: Keychain? = nil) {
        self.keychain = keychain ?? Keychain(service: Self.defaultService).accessibility(.afterFirstUnlock)
        key = name
    }

    /// A jar of the given name, in a keychain store of your choosing.
    public init(name: String = "default", store: KeychainStore) {
        self.init(
            name: name, keychain: Keychain(service: Self.defaultService, store: store).accessibility(.afterFirstUnlock))
    }

    /// `KeychainCookieJar(wattle.cookies/default)`.
    public var description: String { "KeychainCookieJar(\(keychain.service)/\(key))" }

    /// The same item: the same store, service, access group, synchronizable flag and key.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.keychain.store === rhs.keychain.store && lhs.keychain.service == rhs.keychain.service
            && lhs.keychain.accessGroup == rhs.keychain.accessGroup
            && lhs.keychain.synchronizable == rhs.keychain.synchronizable && lhs.key == rhs.key
    }

    /// Hashes what ``==`` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(keychain.store))
        hasher.combine(keychain.service)
        hasher.combine(keychain.accessGroup)
        hasher.combine(keychain.synchronizable)
        hasher.combine(key)
    }
}
