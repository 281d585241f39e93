import Foundation

/// One attribute: its tag in the sealed encoding and how to read, write and default it.
struct AttributeField {
    let tag: UInt8
    let get: (KeychainAttributes) -> [UInt8]?
    let set: (inout KeychainAttributes, [UInt8]) -> Bool
    let fillDefault: (inout KeychainAttributes) -> Void

    init<V: AttributeValue>(_ tag: UInt8, _ path: WritableKeyPath<KeychainAttributes, V?>) {
        self.tag = tag
        get = { $0[keyPath: path]?.encoded }
        set = { attributes, bytes in
            guard let value = V(encoded: bytes) else { return false }
            attributes[keyPath: path] = value
            return true
        }
        fillDefault = { attributes in
            if attributes[keyPath: path] == nil { attributes[keyPath: path] = V.empty }
        }
    }
}

/// The sealed encoding of attributes, identity and group rules per class, and matching.
///
/// Plaintext of an attributes blob: version (1), accessibility code, synchronizable (0/1), then
/// for each set attribute: tag (1 byte), length (4 bytes little-endian), value bytes.
enum AttributeCoding {
    static let version: UInt8 = 1

    enum Tag {
        static let account: UInt8 = 1
        static let service: UInt8 = 2
        static let accessGroup: UInt8 = 3
        static let server: UInt8 = 8
        static let securityDomain: UInt8 = 9
        static let `protocol`: UInt8 = 10
        static let authenticationType: UInt8 = 11
        static let port: UInt8 = 12
        static let path: UInt8 = 13
        static let certificateType: UInt8 = 14
        static let issuer: UInt8 = 17
        static let serialNumber: UInt8 = 18
        static let keyClass: UInt8 = 21
        static let applicationLabel: UInt8 = 22
        static let applicationTag: UInt8 = 23
        static let keyType: UInt8 = 24
        static let keySizeInBits: UInt8 = 25
        static let effectiveKeySize: UInt8 = 26
    }

    /// Immutable after initialisation; the closures capture only key paths.
    nonisolated(unsafe) static let fields: [AttributeField] = [
        AttributeField(Tag.account, \.account),
        AttributeField(Tag.service, \.service),
        AttributeField(Tag.accessGroup, \.accessGroup),
        AttributeField(4, \.label),
        AttributeField(5, \.comment),
        AttributeField(6, \.itemDescription),
        AttributeField(7, \.generic),
        AttributeField(Tag.server, \.server),
        AttributeField(Tag.securityDomain, \.securityDomain),
        AttributeField(Tag.protocol, \.protocol),
        AttributeField(Tag.authenticationType, \.authenticationType),
        AttributeField(Tag.port, \.port),
        AttributeField(Tag.path, \.path),
        AttributeField(Tag.certificateType, \.certificateType),
        AttributeField(15, \.certificateEncoding),
        AttributeField(16, \.subject),
        AttributeField(Tag.issuer, \.issuer),
        AttributeField(Tag.serialNumber, \.serialNumber),
        AttributeField(19, \.subjectKeyID),
        AttributeField(20, \.publicKeyHash),
        AttributeField(Tag.keyClass, \.keyClass),
        AttributeField(Tag.applicationLabel, \.applicationLabel),
        AttributeField(Tag.applicationTag, \.applicationTag),
        AttributeField(Tag.keyType, \.keyType),
        AttributeField(Tag.keySizeInBits, \.keySizeInBits),
        AttributeField(Tag.effectiveKeySize, \.effectiveKeySize),
        AttributeField(27, \.creationDate),
        AttributeField(28, \.modificationDate),
    ]

    private static let fieldIndex: [UInt8: Int] = Dictionary(
        uniqueKeysWithValues: fields.enumerated().map { ($0.element.tag, $0.offset) })

    static func field(_ tag: UInt8) -> AttributeField { fields[fieldIndex[tag]!] }

    /// The identity attributes of a class, in hashing order (access group and synchronizable
    /// are identity of every class; synchronizable is hashed separately).
    static func identityTags(_ itemClass: KeychainItemClass) -> [UInt8] {
        switch itemClass {
        case .genericPassword:
            [Tag.account, Tag.service, Tag.accessGroup]
        case .internetPassword:
            [
                Tag.account, Tag.securityDomain, Tag.server, Tag.protocol, Tag.authenticationType, Tag.port,
                Tag.path, Tag.accessGroup,
            ]
        case .certificate, .identity:
            [Tag.certificateType, Tag.issuer, Tag.serialNumber, Tag.accessGroup]
        case .key:
            [
                Tag.keyClass, Tag.applicationLabel, Tag.applicationTag, Tag.keyType, Tag.keySizeInBits,
                Tag.effectiveKeySize, Tag.accessGroup,
            ]
        }
    }

    /// The attribute whose keyed hash is indexed for per-group queries.
    static func groupTag(_ itemClass: KeychainItemClass) -> UInt8 {
        switch itemClass {
        case .genericPassword: Tag.service
        case .internetPassword: Tag.server
        case .certificate, .identity: Tag.issuer
        case .key: Tag.applicationTag
        }
    }

    /// Fills identity attributes left nil with their empty value.
    static func normalize(_ attributes: inout KeychainAttributes, for itemClass: KeychainItemClass) {
        for tag in identityTags(itemClass) { field(tag).fillDefault(&attributes) }
    }

    static func encode(
        _ attributes: KeychainAttributes, accessibility: KeychainAccessibility, synchronizable: Bool
    ) -> [UInt8] {
        var out: [UInt8] = [version, accessibilityCode(accessibility), synchronizable ? 1 : 0]
        out.reserveCapacity(128)
        for field in fields {
            guard let bytes = field.get(attributes) else { continue }
            out.append(field.tag)
            out.append(contentsOf: Bytes.littleEndian(UInt32(bytes.count)))
            out.append(contentsOf: bytes)
        }
        return out
    }

    struct Decoded {
        var attributes: KeychainAttributes
        var accessibility: KeychainAccessibility
        var synchronizable: Bool
    }

    static func decode(_ bytes: [UInt8]) throws(KeychainError) -> Decoded {
        guard bytes.count >= 3, bytes[0] == version, bytes[2] <= 1,
            let accessibility = accessibility(code: bytes[1])
        else { throw .decode }
        var attributes = KeychainAttributes()
        var index = 3
        while index < bytes.count {
            guard index + 5 <= bytes.count else { throw .decode }
            let tag = bytes[index]
            let length = Int(Bytes.uint64(bytes[(index + 1)..<(index + 5)]))
            index += 5
            guard length <= bytes.count - index, let position = fieldIndex[tag] else { throw .decode }
            guard fields[position].set(&attributes, Array(bytes[index..<(index + length)])) else { throw .decode }
            index += length
        }
        return Decoded(attributes: attributes, accessibility: accessibility, synchronizable: bytes[2] == 1)
    }

    /// Whether every attribute set in `filter` is equal in `item`.
    static func matches(_ item: KeychainAttributes, filter: KeychainAttributes) -> Bool {
        for field in fields {
            guard let wanted = field.get(filter) else { continue }
            guard field.get(item) == wanted else { return false }
        }
        return true
    }

    /// Tags set in `attributes`.
    static func setTags(_ attributes: KeychainAttributes) -> Set<UInt8> {
        Set(fields.lazy.filter { $0.get(attributes) != nil }.map(\.tag))
    }

    static func accessibilityCode(_ accessibility: KeychainAccessibility) -> UInt8 {
        UInt8(KeychainAccessibility.allCases.firstIndex(of: accessibility)!)
    }

    static func accessibility(code: UInt8) -> KeychainAccessibility? {
        let all = KeychainAccessibility.allCases
        return Int(code) < all.count ? all[Int(code)] : nil
    }
}
