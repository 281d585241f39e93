#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The sealed attribute fields of ``KeychainAttributes`` by tag (1...28, the order of
/// `AttributeCoding.fields`), through plain switches: no key paths and no closures. Key-path
/// access (`swift_getAtKeyPath` and generic metadata lookups for each of the 28 fields) was about
/// a sixth of an upsert's CPU.
extension KeychainAttributes {
    /// The encoded value of the field with `tag`; nil when it is not set or the tag is unknown.
    func encodedField(_ tag: UInt8) -> [UInt8]? {
        var bytes: [UInt8] = []
        return appendEncodedField(tag, to: &bytes) ? bytes : nil
    }

    /// Appends the encoded value of the field with `tag` to `bytes`; false, appending nothing,
    /// when it is not set or the tag is unknown. Sealing and hashing build their input this
    /// way, without an array per field.
    func appendEncodedField(_ tag: UInt8, to bytes: inout [UInt8]) -> Bool {
        switch tag {
        case 1: Self.append(account, to: &bytes)
        case 2: Self.append(service, to: &bytes)
        case 3: Self.append(accessGroup, to: &bytes)
        case 4: Self.append(label, to: &bytes)
        case 5: Self.append(comment, to: &bytes)
        case 6: Self.append(itemDescription, to: &bytes)
        case 7: Self.append(generic, to: &bytes)
        case 8: Self.append(server, to: &bytes)
        case 9: Self.append(securityDomain, to: &bytes)
        case 10: Self.append(`protocol`, to: &bytes)
        case 11: Self.append(authenticationType, to: &bytes)
        case 12: Self.append(port, to: &bytes)
        case 13: Self.append(path, to: &bytes)
        case 14: Self.append(certificateType, to: &bytes)
        case 15: Self.append(certificateEncoding, to: &bytes)
        case 16: Self.append(subject, to: &bytes)
        case 17: Self.append(issuer, to: &bytes)
        case 18: Self.append(serialNumber, to: &bytes)
        case 19: Self.append(subjectKeyID, to: &bytes)
        case 20: Self.append(publicKeyHash, to: &bytes)
        case 21: Self.append(keyClass, to: &bytes)
        case 22: Self.append(applicationLabel, to: &bytes)
        case 23: Self.append(applicationTag, to: &bytes)
        case 24: Self.append(keyType, to: &bytes)
        case 25: Self.append(keySizeInBits, to: &bytes)
        case 26: Self.append(effectiveKeySize, to: &bytes)
        case 27: Self.append(creationDate, to: &bytes)
        case 28: Self.append(modificationDate, to: &bytes)
        default: false
        }
    }

    /// Appends every set field in tag order, each as `AttributeCoding.appendField` lays it out:
    /// the encoding of the sealed attributes, in one pass over the fields instead of a
    /// ``hasField(_:)`` switch per tag (28 of them per upsert, most for unset fields).
    func appendSetFields(to bytes: inout [UInt8]) {
        Self.appendField(1, account, to: &bytes)
        Self.appendField(2, service, to: &bytes)
        Self.appendField(3, accessGroup, to: &bytes)
        Self.appendField(4, label, to: &bytes)
        Self.appendField(5, comment, to: &bytes)
        Self.appendField(6, itemDescription, to: &bytes)
        Self.appendField(7, generic, to: &bytes)
        Self.appendField(8, server, to: &bytes)
        Self.appendField(9, securityDomain, to: &bytes)
        Self.appendField(10, `protocol`, to: &bytes)
        Self.appendField(11, authenticationType, to: &bytes)
        Self.appendField(12, port, to: &bytes)
        Self.appendField(13, path, to: &bytes)
        Self.appendField(14, certificateType, to: &bytes)
        Self.appendField(15, certificateEncoding, to: &bytes)
        Self.appendField(16, subject, to: &bytes)
        Self.appendField(17, issuer, to: &bytes)
        Self.appendField(18, serialNumber, to: &bytes)
        Self.appendField(19, subjectKeyID, to: &bytes)
        Self.appendField(20, publicKeyHash, to: &bytes)
        Self.appendField(21, keyClass, to: &bytes)
        Self.appendField(22, applicationLabel, to: &bytes)
        Self.appendField(23, applicationTag, to: &bytes)
        Self.appendField(24, keyType, to: &bytes)
        Self.appendField(25, keySizeInBits, to: &bytes)
        Self.appendField(26, effectiveKeySize, to: &bytes)
        Self.appendField(27, creationDate, to: &bytes)
        Self.appendField(28, modificationDate, to: &bytes)
    }

    /// Whether the field with `tag` is set (false for an unknown tag).
    func hasField(_ tag: UInt8) -> Bool {
        switch tag {
        case 1: account != nil
        case 2: service != nil
        case 3: accessGroup != nil
        case 4: label != nil
        case 5: comment != nil
        case 6: itemDescription != nil
        case 7: generic != nil
        case 8: server != nil
        case 9: securityDomain != nil
        case 10: `protocol` != nil
        case 11: authenticationType != nil
        case 12: port != nil
        case 13: path != nil
        case 14: certificateType != nil
        case 15: certificateEncoding != nil
        case 16: subject != nil
        case 17: issuer != nil
        case 18: serialNumber != nil
        case 19: subjectKeyID != nil
        case 20: publicKeyHash != nil
        case 21: keyClass != nil
        case 22: applicationLabel != nil
        case 23: applicationTag != nil
        case 24: keyType != nil
        case 25: keySizeInBits != nil
        case 26: effectiveKeySize != nil
        case 27: creationDate != nil
        case 28: modificationDate != nil
        default: false
        }
    }

    /// Sets the field with `tag` from its encoding; false when the bytes are not a valid
    /// encoding of the field's type or the tag is unknown (the attributes are then unchanged).
    mutating func setField(_ tag: UInt8, encoded bytes: UnsafeRawBufferPointer) -> Bool {
        switch tag {
        case 1: Self.assign(&account, bytes)
        case 2: Self.assign(&service, bytes)
        case 3: Self.assign(&accessGroup, bytes)
        case 4: Self.assign(&label, bytes)
        case 5: Self.assign(&comment, bytes)
        case 6: Self.assign(&itemDescription, bytes)
        case 7: Self.assign(&generic, bytes)
        case 8: Self.assign(&server, bytes)
        case 9: Self.assign(&securityDomain, bytes)
        case 10: Self.assign(&`protocol`, bytes)
        case 11: Self.assign(&authenticationType, bytes)
        case 12: Self.assign(&port, bytes)
        case 13: Self.assign(&path, bytes)
        case 14: Self.assign(&certificateType, bytes)
        case 15: Self.assign(&certificateEncoding, bytes)
        case 16: Self.assign(&subject, bytes)
        case 17: Self.assign(&issuer, bytes)
        case 18: Self.assign(&serialNumber, bytes)
        case 19: Self.assign(&subjectKeyID, bytes)
        case 20: Self.assign(&publicKeyHash, bytes)
        case 21: Self.assign(&keyClass, bytes)
        case 22: Self.assign(&applicationLabel, bytes)
        case 23: Self.assign(&applicationTag, bytes)
        case 24: Self.assign(&keyType, bytes)
        case 25: Self.assign(&keySizeInBits, bytes)
        case 26: Self.assign(&effectiveKeySize, bytes)
        case 27: Self.assign(&creationDate, bytes)
        case 28: Self.assign(&modificationDate, bytes)
        default: false
        }
    }

    /// Gives the field with `tag` its empty value when it is not set.
    mutating func fillEmptyField(_ tag: UInt8) {
        switch tag {
        case 1: Self.fillEmpty(&account)
        case 2: Self.fillEmpty(&service)
        case 3: Self.fillEmpty(&accessGroup)
        case 4: Self.fillEmpty(&label)
        case 5: Self.fillEmpty(&comment)
        case 6: Self.fillEmpty(&itemDescription)
        case 7: Self.fillEmpty(&generic)
        case 8: Self.fillEmpty(&server)
        case 9: Self.fillEmpty(&securityDomain)
        case 10: Self.fillEmpty(&`protocol`)
        case 11: Self.fillEmpty(&authenticationType)
        case 12: Self.fillEmpty(&port)
        case 13: Self.fillEmpty(&path)
        case 14: Self.fillEmpty(&certificateType)
        case 15: Self.fillEmpty(&certificateEncoding)
        case 16: Self.fillEmpty(&subject)
        case 17: Self.fillEmpty(&issuer)
        case 18: Self.fillEmpty(&serialNumber)
        case 19: Self.fillEmpty(&subjectKeyID)
        case 20: Self.fillEmpty(&publicKeyHash)
        case 21: Self.fillEmpty(&keyClass)
        case 22: Self.fillEmpty(&applicationLabel)
        case 23: Self.fillEmpty(&applicationTag)
        case 24: Self.fillEmpty(&keyType)
        case 25: Self.fillEmpty(&keySizeInBits)
        case 26: Self.fillEmpty(&effectiveKeySize)
        case 27: Self.fillEmpty(&creationDate)
        case 28: Self.fillEmpty(&modificationDate)
        default: break
        }
    }

    private static func append<V: AttributeValue>(_ value: V?, to bytes: inout [UInt8]) -> Bool {
        guard let value else { return false }
        value.appendEncoded(to: &bytes)
        return true
    }

    private static func appendField<V: AttributeValue>(_ tag: UInt8, _ value: V?, to bytes: inout [UInt8]) {
        guard let value else { return }
        AttributeCoding.appendField(tag, to: &bytes) { value.appendEncoded(to: &$0) }
    }

    private static func assign<V: AttributeValue>(_ slot: inout V?, _ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let value = V(encoded: bytes) else { return false }
        slot = value
        return true
    }

    private static func fillEmpty<V: AttributeValue>(_ slot: inout V?) {
        if slot == nil { slot = V.empty }
    }
}
