/// What to look for and what to return, as in the query dictionary of `SecItemCopyMatching`.
///
/// Every attribute set in ``attributes`` must be equal; ``synchronizable`` defaults to
/// ``KeychainSynchronizable/no``, as on Apple platforms.
///
/// ```swift
/// var query = KeychainQuery.genericPassword(service: "api.example.com")
/// query.matchLimit = .all
/// query.returnAttributes = true
/// query.returnData = false  // no secret opened: works while the keychain is locked
/// let accounts = try store.copyMatching(query).compactMap { $0.attributes?.account }
/// ```
///
/// Unlike `SecItemCopyMatching`, whose queries return nothing unless asked, ``returnData`` is
/// on by default: turn it off for a query that needs only attributes, so that no secret is
/// opened (an item that needs the keychain unlocked would fail it with
/// ``KeychainError/interactionNotAllowed`` while locked).
public struct KeychainQuery: Sendable, Hashable {
    /// How many items a query returns.
    public enum MatchLimit: Sendable, Hashable {
        /// The first match only (the default).
        case one
        /// Every match.
        case all
    }

    /// The class of items to match.
    public var itemClass: KeychainItemClass
    /// Attributes that must be equal; `nil` attributes match anything.
    public var attributes: KeychainAttributes
    /// If set, only items with this accessibility match.
    public var accessibility: KeychainAccessibility?
    /// Which items match by their synchronizable flag (default ``KeychainSynchronizable/no``).
    public var synchronizable: KeychainSynchronizable
    /// One match or all (default ``MatchLimit/one``).
    public var matchLimit: MatchLimit
    /// Whether matches carry the secret (default `true`).
    public var returnData: Bool
    /// Whether matches carry the attributes (default `false`).
    public var returnAttributes: Bool

    /// Creates a query.
    public init(
        _ itemClass: KeychainItemClass,
        attributes: KeychainAttributes = KeychainAttributes(),
        accessibility: KeychainAccessibility? = nil,
        synchronizable: KeychainSynchronizable = .no,
        matchLimit: MatchLimit = .one,
        returnData: Bool = true,
        returnAttributes: Bool = false
    ) {
        self.itemClass = itemClass
        self.attributes = attributes
        self.accessibility = accessibility
        self.synchronizable = synchronizable
        self.matchLimit = matchLimit
        self.returnData = returnData
        self.returnAttributes = returnAttributes
    }

    /// A query for generic passwords of a service, and of one account when given.
    public static func genericPassword(service: String, account: String? = nil) -> KeychainQuery {
        KeychainQuery(.genericPassword, attributes: KeychainAttributes(service: service, account: account))
    }

    /// A query for internet passwords of a server, and of one account when given.
    public static func internetPassword(
        server: String, account: String? = nil, protocol: KeychainProtocol? = nil
    ) -> KeychainQuery {
        var attributes = KeychainAttributes(account: account, server: server)
        attributes.protocol = `protocol`
        return KeychainQuery(.internetPassword, attributes: attributes)
    }

    /// Returns a copy whose matches carry the attributes as well.
    public func withAttributes() -> KeychainQuery {
        var copy = self
        copy.returnAttributes = true
        return copy
    }

    /// Returns a copy that matches every item instead of the first.
    public func all() -> KeychainQuery {
        var copy = self
        copy.matchLimit = .all
        return copy
    }
}
