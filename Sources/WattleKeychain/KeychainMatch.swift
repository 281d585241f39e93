#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// One item found by ``KeychainStore/copyMatching(_:)``, carrying what the query asked for.
public struct KeychainMatch: Sendable, Hashable {
    /// The item's class.
    public var itemClass: KeychainItemClass
    /// The attributes, when the query set ``KeychainQuery/returnAttributes``.
    public var attributes: KeychainAttributes?
    /// The accessibility, when the query set ``KeychainQuery/returnAttributes``.
    public var accessibility: KeychainAccessibility?
    /// The synchronizable flag, when the query set ``KeychainQuery/returnAttributes``.
    public var synchronizable: Bool?
    /// The secret, when the query set ``KeychainQuery/returnData``.
    public var data: Data?

    /// Creates a match.
    public init(
        itemClass: KeychainItemClass,
        attributes: KeychainAttributes? = nil,
        accessibility: KeychainAccessibility? = nil,
        synchronizable: Bool? = nil,
        data: Data? = nil
    ) {
        self.itemClass = itemClass
        self.attributes = attributes
        self.accessibility = accessibility
        self.synchronizable = synchronizable
        self.data = data
    }
}

extension KeychainMatch: CustomReflectable {
    /// The match's fields with the secret's size in place of its bytes, so `dump(match)` (and
    /// a debugger) shows no secret.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "itemClass": itemClass, "attributes": attributes as Any, "accessibility": accessibility as Any,
                "synchronizable": synchronizable as Any, "data": data.map { "\($0.count) bytes" } as Any,
            ],
            displayStyle: .struct)
    }
}
