#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One attribute field of the sealed encoding, by its tag (see `KeychainAttributes+Fields`).
struct AttributeField {
    let tag: UInt8

    func get(_ attributes: KeychainAttributes) -> [UInt8]? { attributes.encodedField(tag) }
    func set(_ attributes: inout KeychainAttributes, _ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { attributes.setField(tag, encoded: $0) }
    }
    func fillDefault(_ attributes: inout KeychainAttributes) { attributes.fillEmptyField(tag) }
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

    /// The tags in use, 1...28 (account, service, access group, label, comment, description,
    /// generic, server, security domain, protocol, authentication type, port, path, certificate
    /// type and encoding, subject, issuer, serial number, subject key ID, public key hash, key
    /// class, application label and tag, key type, key size, effective key size, creation and
    /// modification dates), in encoding order. Changing a tag changes the file format.
    static let tags: ClosedRange<UInt8> = 1...28

    static let fields: [AttributeField] = tags.map(AttributeField.init)

    static func field(_ tag: UInt8) -> AttributeField {
        precondition(tags.contains(tag), "unknown attribute tag \(tag)")
        return AttributeField(tag: tag)
    }

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
        var out: [UInt8] = []
        out.reserveCapacity(256)
        out.append(version)
        out.append(accessibilityCode(accessibility))
        out.append(synchronizable ? 1 : 0)
        attributes.appendSetFields(to: &out)
        return out
    }

    /// Appends tag, length (4 bytes little-endian) and value of one field, the value written in
    /// place and the length filled in after it. A missing field is skipped, or written with
    /// length 0 when `keepingMissing` (identity hashing, where an unset field hashes as empty).
    static func appendField(
        _ tag: UInt8, of attributes: KeychainAttributes, to out: inout [UInt8], keepingMissing: Bool
    ) {
        // Most of the 28 fields are unset: skip them before writing anything.
        guard keepingMissing || attributes.hasField(tag) else { return }
        // Set (checked above), or missing and kept: then nothing is appended and the length is 0.
        appendField(tag, to: &out) { _ = attributes.appendEncodedField(tag, to: &$0) }
    }

    /// Appends tag, a 4-byte little-endian length and the value `write` appends: the layout of
    /// one field. The length is filled in after the value is written in place.
    static func appendField(_ tag: UInt8, to out: inout [UInt8], _ write: (inout [UInt8]) -> Void) {
        let mark = out.count
        out.append(tag)
        Bytes.append(littleEndian: UInt32(0), to: &out)
        write(&out)
        let length = UInt32(out.count - mark - 5).littleEndian
        withUnsafeBytes(of: length) { for (offset, byte) in $0.enumerated() { out[mark + 1 + offset] = byte } }
    }

    struct Decoded {
        var attributes = KeychainAttributes()
        var accessibility = KeychainAccessibility.afterFirstUnlock
        var synchronizable = false
    }

    static func decode(_ bytes: [UInt8]) throws(KeychainError) -> Decoded {
        try bytes.withUnsafeBytes { buffer in Result { () throws(KeychainError) in try decode(buffer) } }.get()
    }

    static func decode(_ bytes: UnsafeRawBufferPointer) throws(KeychainError) -> Decoded {
        var decoded = Decoded()
        try decode(bytes, into: &decoded)
        return decoded
    }

    /// Decodes in place: each field is read from `bytes` straight into its value in `decoded`
    /// (which must be empty), with no array per field and no copy of the attributes (a
    /// `KeychainAttributes` is ~400 bytes, and each copy retains and releases every field).
    static func decode(_ bytes: UnsafeRawBufferPointer, into decoded: inout Decoded) throws(KeychainError) {
        guard bytes.count >= 3, bytes[0] == version, bytes[2] <= 1,
            let accessibility = accessibility(code: bytes[1])
        else { throw .decode }
        decoded.accessibility = accessibility
        decoded.synchronizable = bytes[2] == 1
        var index = 3
        while index < bytes.count {
            guard bytes.count - index >= 5 else { throw .decode }
            let tag = bytes[index]
            let length = Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: index + 1, as: UInt32.self)))
            index += 5
            guard length <= bytes.count - index, tags.contains(tag) else { throw .decode }
            let value = UnsafeRawBufferPointer(rebasing: bytes[index..<(index + length)])
            guard decoded.attributes.setField(tag, encoded: value) else { throw .decode }
            index += length
        }
    }

    /// Whether every attribute set in `filter` is equal in `item`.
    static func matches(_ item: KeychainAttributes, filter: KeychainAttributes) -> Bool {
        for tag in tags where filter.hasField(tag) {
            guard item.encodedField(tag) == filter.encodedField(tag) else { return false }
        }
        return true
    }

    /// Tags set in `attributes`.
    static func setTags(_ attributes: KeychainAttributes) -> Set<UInt8> {
        Set(tags.lazy.filter { attributes.hasField($0) })
    }

    static func accessibilityCode(_ accessibility: KeychainAccessibility) -> UInt8 {
        UInt8(KeychainAccessibility.allCases.firstIndex(of: accessibility)!)
    }

    static func accessibility(code: UInt8) -> KeychainAccessibility? {
        let all = KeychainAccessibility.allCases
        return Int(code) < all.count ? all[Int(code)] : nil
    }
}
