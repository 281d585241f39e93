import Foundation
import Testing

@testable import WattleKeychain

/// The sealed attribute encoding is the file format: each field keeps its tag forever.
@Suite("Attribute encoding: tags, round trip, refusal")
struct AttributeEncodingTests {
    static func littleEndian(_ value: UInt64) -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) }
    }

    /// Every field set to a value that differs from every other field's.
    static let full = KeychainAttributes {
        $0.account = "acct"
        $0.service = "svc"
        $0.accessGroup = "grp"
        $0.label = "lbl"
        $0.comment = "cmt"
        $0.itemDescription = "dsc"
        $0.generic = Data([0x07])
        $0.server = "srv"
        $0.securityDomain = "dom"
        $0.protocol = .https
        $0.authenticationType = .httpBasic
        $0.port = 12
        $0.path = "/p"
        $0.certificateType = 14
        $0.certificateEncoding = 15
        $0.subject = Data([0x10])
        $0.issuer = Data([0x11])
        $0.serialNumber = Data([0x12])
        $0.subjectKeyID = Data([0x13])
        $0.publicKeyHash = Data([0x14])
        $0.keyClass = .private
        $0.applicationLabel = Data([0x16])
        $0.applicationTag = Data([0x17])
        $0.keyType = .ecSECPrimeRandom
        $0.keySizeInBits = 25
        $0.effectiveKeySize = 26
        $0.creationDate = Date(timeIntervalSinceReferenceDate: 27)
        $0.modificationDate = Date(timeIntervalSinceReferenceDate: 28)
    }

    /// The expected (tag, bytes) of `full`, written out by hand: the format, not the code.
    static var expectedFields: [(UInt8, [UInt8])] {
        [
            (1, Array("acct".utf8)), (2, Array("svc".utf8)), (3, Array("grp".utf8)), (4, Array("lbl".utf8)),
            (5, Array("cmt".utf8)), (6, Array("dsc".utf8)), (7, [0x07]), (8, Array("srv".utf8)),
            (9, Array("dom".utf8)), (10, Array(KeychainProtocol.https.rawValue.utf8)),
            (11, Array(KeychainAuthenticationType.httpBasic.rawValue.utf8)), (12, littleEndian(12)),
            (13, Array("/p".utf8)), (14, littleEndian(14)), (15, littleEndian(15)), (16, [0x10]), (17, [0x11]),
            (18, [0x12]), (19, [0x13]), (20, [0x14]), (21, Array(KeychainKeyClass.private.rawValue.utf8)),
            (22, [0x16]), (23, [0x17]), (24, Array(KeychainKeyType.ecSECPrimeRandom.rawValue.utf8)),
            (25, littleEndian(25)), (26, littleEndian(26)), (27, littleEndian(Double(27).bitPattern)),
            (28, littleEndian(Double(28).bitPattern)),
        ]
    }

    static func record(_ fields: [(UInt8, [UInt8])], accessibility: UInt8 = 0, synchronizable: UInt8 = 0) -> [UInt8] {
        var bytes: [UInt8] = [1, accessibility, synchronizable]
        for (tag, value) in fields {
            bytes.append(tag)
            bytes.append(contentsOf: littleEndian(UInt64(value.count)).prefix(4))
            bytes.append(contentsOf: value)
        }
        return bytes
    }

    @Test("every field encodes under its own tag, in tag order")
    func tags() {
        let encoded = AttributeCoding.encode(Self.full, accessibility: .whenUnlocked, synchronizable: true)
        let accessibility = AttributeCoding.accessibilityCode(.whenUnlocked)
        #expect(encoded == Self.record(Self.expectedFields, accessibility: accessibility, synchronizable: 1))
    }

    @Test("decoding gives back every field; an empty set of attributes encodes to the header alone")
    func roundTrip() throws {
        let decoded = try AttributeCoding.decode(
            AttributeCoding.encode(Self.full, accessibility: .afterFirstUnlock, synchronizable: false))
        #expect(decoded.attributes == Self.full)
        #expect(decoded.accessibility == .afterFirstUnlock)
        #expect(decoded.synchronizable == false)
        #expect(
            AttributeCoding.encode(KeychainAttributes(), accessibility: .whenUnlocked, synchronizable: false).count == 3
        )
        // Set and unset fields mixed (the encoder skips unset ones): only the set ones, in tag order.
        let partial = KeychainAttributes(service: "svc", account: "acct", label: "")
        #expect(
            AttributeCoding.encode(partial, accessibility: .whenUnlocked, synchronizable: false)
                == Self.record(
                    [(1, Array("acct".utf8)), (2, Array("svc".utf8)), (4, [])],
                    accessibility: AttributeCoding.accessibilityCode(.whenUnlocked)))
        #expect(AttributeCoding.setTags(Self.full) == Set(1...28))
        #expect(AttributeCoding.setTags(KeychainAttributes(service: "s")) == [2])
    }

    @Test("each field decodes alone from its tag, and only from it")
    func singleFields() throws {
        for (tag, value) in Self.expectedFields {
            let decoded = try AttributeCoding.decode(Self.record([(tag, value)])).attributes
            #expect(AttributeCoding.setTags(decoded) == [tag])
            #expect(decoded.encodedField(tag) == value)
            #expect(decoded.encodedField(tag) == Self.full.encodedField(tag))
        }
    }

    @Test("unknown tags, malformed numbers and invalid UTF-8 are refused with decode")
    func refusals() {
        for bad in [
            Self.record([(0, [1])]), Self.record([(29, [1])]), Self.record([(255, [])]),
            Self.record([(12, [1, 2, 3])]), Self.record([(27, [])]), Self.record([(1, [0xFF, 0xFE])]),
            // A cut-short 4-byte sequence repairs to one U+FFFD of the same length (3 bytes), so
            // only the byte comparison refuses it; an encoded surrogate repairs to more bytes.
            Self.record([(1, [0xF0, 0x9F, 0x98])]), Self.record([(1, [0x61, 0xED, 0xA0, 0x80])]),
            [1, 0, 2], [2, 0, 0], [1, 0, 0, 1, 5, 0, 0, 0, 0x61],
            // A field header cut short after 1 to 4 bytes; a length of 2^32 - 1.
            [1, 0, 0, 1], [1, 0, 0, 1, 0], [1, 0, 0, 1, 0, 0], [1, 0, 0, 1, 0, 0, 0],
            [1, 0, 0, 1, 0xFF, 0xFF, 0xFF, 0xFF, 0x61],
        ] {
            #expect(throws: KeychainError.decode) { try AttributeCoding.decode(bad) }
        }
    }

    @Test("matching compares only the fields the filter sets; normalizing fills the identity fields")
    func matchingAndNormalizing() {
        #expect(AttributeCoding.matches(Self.full, filter: KeychainAttributes(service: "svc", account: "acct")))
        #expect(!AttributeCoding.matches(Self.full, filter: KeychainAttributes(service: "other")))
        #expect(AttributeCoding.matches(Self.full, filter: KeychainAttributes()))
        #expect(!AttributeCoding.matches(KeychainAttributes(), filter: KeychainAttributes { $0.port = 12 }))
        var internet = KeychainAttributes { $0.server = "example.com" }
        AttributeCoding.normalize(&internet, for: .internetPassword)
        #expect(internet.account == "" && internet.port == 0 && internet.protocol?.rawValue == "")
        #expect(internet.server == "example.com" && internet.label == nil)
    }
}
