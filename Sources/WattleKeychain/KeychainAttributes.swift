#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// The attributes of a keychain item, each optional, named as in Apple's `kSecAttr...` keys.
///
/// In an item, the attributes describe it; in a query, every attribute that is set must be
/// equal for an item to match. Which attributes make up an item's identity depends on its
/// class (see ``KeychainItemClass``); label, comment, description, generic data and
/// accessibility never do. When an item is added, identity attributes left `nil` are stored
/// as empty (`""`, empty data, `0`), as Apple does, and read back that way.
///
/// All attributes are sealed on disk; none is stored in plaintext.
///
/// ```swift
/// var attributes = KeychainAttributes(service: "api.example.com", account: "alice")
/// attributes.label = "Example API"
/// ```
public struct KeychainAttributes: Sendable, Hashable {
    // MARK: Common

    /// The account name (`kSecAttrAccount`); identity of passwords.
    public var account: String?
    /// The service name (`kSecAttrService`); identity of generic passwords.
    public var service: String?
    /// The access group (`kSecAttrAccessGroup`); identity of every class. `nil` in an item means
    /// the default (empty) group; in a query it matches any group.
    public var accessGroup: String?
    /// A label shown to people (`kSecAttrLabel`); never identity.
    public var label: String?
    /// A comment (`kSecAttrComment`); never identity.
    public var comment: String?
    /// A description of the kind of item (`kSecAttrDescription`); never identity.
    public var itemDescription: String?
    /// Application data (`kSecAttrGeneric`); never identity.
    public var generic: Data?
    /// When the item was added; set by the store (ignored when adding).
    public var creationDate: Date?
    /// When the item was last changed; set by the store (ignored when adding).
    public var modificationDate: Date?

    // MARK: Internet passwords

    /// The server's host name (`kSecAttrServer`); identity of internet passwords.
    public var server: String?
    /// The security domain or realm (`kSecAttrSecurityDomain`); identity of internet passwords.
    public var securityDomain: String?
    /// The protocol (`kSecAttrProtocol`); identity of internet passwords.
    public var `protocol`: KeychainProtocol?
    /// The authentication type (`kSecAttrAuthenticationType`); identity of internet passwords.
    public var authenticationType: KeychainAuthenticationType?
    /// The port (`kSecAttrPort`); identity of internet passwords.
    public var port: Int?
    /// The path (`kSecAttrPath`); identity of internet passwords.
    public var path: String?

    // MARK: Certificates and identities

    /// The certificate type (`kSecAttrCertificateType`); identity of certificates and identities.
    public var certificateType: Int?
    /// The certificate encoding (`kSecAttrCertificateEncoding`).
    public var certificateEncoding: Int?
    /// The DER-encoded subject (`kSecAttrSubject`).
    public var subject: Data?
    /// The DER-encoded issuer (`kSecAttrIssuer`); identity of certificates and identities.
    public var issuer: Data?
    /// The serial number (`kSecAttrSerialNumber`); identity of certificates and identities.
    public var serialNumber: Data?
    /// The subject key identifier (`kSecAttrSubjectKeyID`).
    public var subjectKeyID: Data?
    /// The hash of the public key (`kSecAttrPublicKeyHash`).
    public var publicKeyHash: Data?

    // MARK: Keys

    /// The key class (`kSecAttrKeyClass`); identity of keys.
    public var keyClass: KeychainKeyClass?
    /// The application label, usually a hash of the public key (`kSecAttrApplicationLabel`);
    /// identity of keys.
    public var applicationLabel: Data?
    /// The application's tag (`kSecAttrApplicationTag`); identity of keys.
    public var applicationTag: Data?
    /// The algorithm (`kSecAttrKeyType`); identity of keys.
    public var keyType: KeychainKeyType?
    /// The size in bits (`kSecAttrKeySizeInBits`); identity of keys.
    public var keySizeInBits: Int?
    /// The effective size in bits (`kSecAttrEffectiveKeySize`); identity of keys.
    public var effectiveKeySize: Int?

    /// Creates attributes; every parameter is optional, and the rest can be set afterwards.
    public init(
        service: String? = nil,
        account: String? = nil,
        server: String? = nil,
        accessGroup: String? = nil,
        label: String? = nil
    ) {
        self.service = service
        self.account = account
        self.server = server
        self.accessGroup = accessGroup
        self.label = label
    }

    /// Creates attributes set by a closure.
    ///
    /// ```swift
    /// let attributes = KeychainAttributes { $0.server = "example.com"; $0.port = 443 }
    /// ```
    public init(_ configure: (inout KeychainAttributes) -> Void) {
        self.init()
        configure(&self)
    }
}
