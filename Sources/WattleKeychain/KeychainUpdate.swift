#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// The changes ``KeychainStore/update(_:with:)`` applies to every matching item, as in the
/// attributes-to-update dictionary of `SecItemUpdate`.
///
/// Attributes set in ``attributes`` replace the item's; `nil` ones are left as they are.
/// Changing an identity attribute so that the item collides with another fails with
/// ``KeychainError/duplicateItem`` and changes nothing.
///
/// ```swift
/// try store.update(.genericPassword(service: "api", account: "alice"),
///                  with: KeychainUpdate(data: Data("new".utf8)))
/// ```
public struct KeychainUpdate: Sendable, Hashable {
    /// Attributes to set.
    public var attributes: KeychainAttributes
    /// A new secret, or `nil` to keep it.
    public var data: Data?
    /// A new accessibility, or `nil` to keep it.
    public var accessibility: KeychainAccessibility?
    /// A new synchronizable flag, or `nil` to keep it.
    public var synchronizable: Bool?

    /// Creates a change.
    public init(
        attributes: KeychainAttributes = KeychainAttributes(),
        data: Data? = nil,
        accessibility: KeychainAccessibility? = nil,
        synchronizable: Bool? = nil
    ) {
        self.attributes = attributes
        self.data = data
        self.accessibility = accessibility
        self.synchronizable = synchronizable
    }
}

extension KeychainUpdate: CustomReflectable {
    /// The change's fields with the new secret's size in place of its bytes, so
    /// `dump(update)` (and a debugger) shows no secret.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "attributes": attributes, "data": data.map { "\($0.count) bytes" } as Any,
                "accessibility": accessibility as Any, "synchronizable": synchronizable as Any,
            ],
            displayStyle: .struct)
    }
}
