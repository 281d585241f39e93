#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// A keychain item to add: its class, attributes, secret data, accessibility and
/// synchronizable flag.
///
/// ```swift
/// let item = KeychainItem.genericPassword(
///     service: "api.example.com", account: "alice", data: Data("s3cret".utf8))
/// try store.add(item)
/// ```
public struct KeychainItem: Sendable, Hashable {
    /// The item's class.
    public var itemClass: KeychainItemClass
    /// The item's attributes.
    public var attributes: KeychainAttributes
    /// The secret: a password, a token, a certificate's or a key's bytes (sealed and padded on disk).
    public var data: Data
    /// When the secret can be read (default ``KeychainAccessibility/whenUnlocked``, as on Apple platforms).
    public var accessibility: KeychainAccessibility
    /// Whether the item is synchronizable (default `false`); part of its identity. As on Apple
    /// platforms, a synchronizable item cannot have a `…ThisDeviceOnly` accessibility: adding
    /// or updating to one fails with ``KeychainError/param``.
    public var synchronizable: Bool

    /// Creates an item.
    public init(
        _ itemClass: KeychainItemClass,
        attributes: KeychainAttributes,
        data: Data,
        accessibility: KeychainAccessibility = .whenUnlocked,
        synchronizable: Bool = false
    ) {
        self.itemClass = itemClass
        self.attributes = attributes
        self.data = data
        self.accessibility = accessibility
        self.synchronizable = synchronizable
    }

    /// A generic password identified by service and account.
    public static func genericPassword(
        service: String,
        account: String,
        data: Data,
        accessibility: KeychainAccessibility = .whenUnlocked,
        synchronizable: Bool = false
    ) -> KeychainItem {
        KeychainItem(
            .genericPassword, attributes: KeychainAttributes(service: service, account: account), data: data,
            accessibility: accessibility, synchronizable: synchronizable)
    }

    /// An internet password identified by server, account, protocol, port and path (and the rest
    /// of its identity attributes, set through ``attributes``).
    public static func internetPassword(
        server: String,
        account: String,
        protocol: KeychainProtocol? = nil,
        port: Int? = nil,
        path: String? = nil,
        data: Data,
        accessibility: KeychainAccessibility = .whenUnlocked,
        synchronizable: Bool = false
    ) -> KeychainItem {
        var attributes = KeychainAttributes(account: account, server: server)
        attributes.protocol = `protocol`
        attributes.port = port
        attributes.path = path
        return KeychainItem(
            .internetPassword, attributes: attributes, data: data, accessibility: accessibility,
            synchronizable: synchronizable)
    }

    /// A certificate (its DER bytes), identified by certificate type, issuer and serial number.
    public static func certificate(
        der: Data,
        issuer: Data,
        serialNumber: Data,
        certificateType: Int = 0,
        accessibility: KeychainAccessibility = .whenUnlocked
    ) -> KeychainItem {
        let attributes = KeychainAttributes {
            $0.issuer = issuer
            $0.serialNumber = serialNumber
            $0.certificateType = certificateType
        }
        return KeychainItem(.certificate, attributes: attributes, data: der, accessibility: accessibility)
    }

    /// A key (its bytes), identified by key class, application label and tag, type and size.
    public static func key(
        _ keyData: Data,
        keyClass: KeychainKeyClass,
        keyType: KeychainKeyType,
        applicationTag: Data,
        keySizeInBits: Int? = nil,
        accessibility: KeychainAccessibility = .whenUnlocked
    ) -> KeychainItem {
        let attributes = KeychainAttributes {
            $0.keyClass = keyClass
            $0.keyType = keyType
            $0.applicationTag = applicationTag
            $0.keySizeInBits = keySizeInBits
        }
        return KeychainItem(.key, attributes: attributes, data: keyData, accessibility: accessibility)
    }

    /// An identity (for example PKCS#12 bytes), identified like its certificate.
    public static func identity(
        _ identityData: Data,
        issuer: Data,
        serialNumber: Data,
        certificateType: Int = 0,
        accessibility: KeychainAccessibility = .whenUnlocked
    ) -> KeychainItem {
        let attributes = KeychainAttributes {
            $0.issuer = issuer
            $0.serialNumber = serialNumber
            $0.certificateType = certificateType
        }
        return KeychainItem(.identity, attributes: attributes, data: identityData, accessibility: accessibility)
    }
}

extension KeychainItem: CustomReflectable {
    /// The item's fields with the secret's size in place of its bytes, so `dump(item)` (and a
    /// debugger) shows no secret.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "itemClass": itemClass, "attributes": attributes, "data": "\(data.count) bytes",
                "accessibility": accessibility, "synchronizable": synchronizable,
            ],
            displayStyle: .struct)
    }
}
