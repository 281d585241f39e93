import Foundation
import Testing

@testable import WattleKeychain

/// `Keychain`'s reads and upserts build their hash inputs and associated data on the stack and
/// reuse a replaced row's group hash. They must store exactly what the general code would.
@Suite("Keychain fast paths: the same hashes, associated data and rows as the general code")
struct KeychainFastPathTests {
    static func engine() throws -> KeychainEngine {
        try KeychainEngine.open(
            storage: MemoryStorage(), credential: .key([UInt8](repeating: 0x21, count: Sodium.keyBytes)))
    }

    /// Empty, ASCII, non-ASCII, and longer than the 1 KiB kept on the stack.
    static let strings = ["", "a", "key-1234", "ünïcødé 🐨", String(repeating: "x", count: 5_000)]

    static func littleEndian32(_ count: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: count >> ($0 * 8)) } }

    /// The hash inputs are part of the file format (rows are found by them): each built here by
    /// hand, byte by byte, and hashed with the engine's keys.
    @Test func theHashInputsKeepTheirLayout() throws {
        let engine = try Self.engine()
        let generic = KeychainItemClass.genericPassword.rawValue
        let cases = [("alice", "api.example.com", ""), ("", "", "team.group"), ("ü", "🐨", "x")]
        for (account, service, accessGroup) in cases {
            for synchronizable in [false, true] {
                var identity: [UInt8] = [0x49, generic]
                for (tag, text) in [(UInt8(1), account), (2, service), (3, accessGroup)] {
                    identity += [tag] + Self.littleEndian32(text.utf8.count) + Array(text.utf8)
                }
                identity.append(synchronizable ? 1 : 0)
                #expect(
                    engine.genericPasswordIdentityHash(
                        account: account, service: service, accessGroup: accessGroup, synchronizable: synchronizable)
                        == Sodium.keyedHash(identity, key: engine.keys.identity))

                let value = Array(service.utf8)
                let group = [0x47, generic] + Self.littleEndian32(value.count) + value + [synchronizable ? 1 : 0]
                #expect(
                    engine.groupHash(.genericPassword, value: value, synchronizable: synchronizable)
                        == Sodium.keyedHash(group, key: engine.keys.group))
            }
        }
    }

    @Test func theGenericPasswordIdentityHashIsTheGeneralOne() throws {
        let engine = try Self.engine()
        var compared = 0
        for account in Self.strings {
            for service in Self.strings {
                for accessGroup in Self.strings {
                    for synchronizable in [false, true] {
                        let attributes = KeychainAttributes(
                            service: service, account: account, accessGroup: accessGroup)
                        let general = engine.identityHash(
                            .genericPassword, attributes, synchronizable: synchronizable)
                        let fast = engine.genericPasswordIdentityHash(
                            account: account, service: service, accessGroup: accessGroup,
                            synchronizable: synchronizable)
                        #expect(fast == general, "\(account.prefix(12)) \(service.prefix(12)) \(synchronizable)")
                        #expect(fast.count == Sodium.hashBytes)
                        compared += 1
                    }
                }
            }
        }
        #expect(compared == 250)
    }

    /// The associated data is part of the file format: its layout, byte by byte.
    @Test func theAssociatedDataKeepsItsLayout() throws {
        let engine = try Self.engine()
        let id = [UInt8](repeating: 0xA1, count: 32)
        let group = [UInt8](repeating: 0xB2, count: 32)
        let header = engine.header
        var expected: [UInt8] = [0x57, 0x4B, 0x43, header.format] + header.keychainID
        expected += withUnsafeBytes(of: header.keyVersion.littleEndian) { Array($0) }
        expected += [KeychainItemClass.internetPassword.rawValue, 2, 0x53] + id + group
        let built = engine.associatedData(
            .secret, itemClass: KeychainItemClass.internetPassword.rawValue, protection: 2, id: id, group: group)
        #expect(built == expected)
        #expect(built.count == 4 + 16 + 4 + 3 + 64)
        // From format 2, a secret's also ends with the tag of its row's sealed attributes.
        let attributes = [UInt8](repeating: 0xC3, count: 40) + [UInt8](0..<16)
        #expect(header.format == 2)
        let binding = try #require(engine.secretBinding(attributes: attributes))
        #expect(Array(binding) == Array(0..<16))
        #expect(engine.secretBinding(attributes: [UInt8](repeating: 0, count: 39)) == nil, "too short for a tag")
        let bound = engine.associatedData(
            .secret, itemClass: KeychainItemClass.internetPassword.rawValue, protection: 2, id: id, group: group,
            binding: binding)
        #expect(bound == expected + Array(0..<16))
    }

    static func storedRow(_ keychain: Keychain, key: String, in store: KeychainStore) throws -> StoredRow? {
        try store.withEngine { engine in
            try engine.storage.row(
                id: engine.genericPasswordIdentityHash(
                    account: key, service: keychain.service, accessGroup: "", synchronizable: false))
        }
    }

    static func expectedGroup(_ service: String, in store: KeychainStore) throws -> [UInt8] {
        try store.withEngine { engine in
            engine.groupHash(.genericPassword, value: Array(service.utf8), synchronizable: false)
        }
    }

    /// A replaced item keeps its group hash (reused, not recomputed): still the hash of its
    /// service, so per-service queries find it; its creation date and label are kept. (The hash
    /// is the same whether reused or recomputed; in debug builds `makeRow` asserts on every
    /// upsert that a reused one equals the recomputed one.)
    @Test(arguments: StoreKind.allCases)
    func anUpsertOverAnItemKeepsItsGroupAndCreationDate(kind: StoreKind) throws {
        let fixture = try kind.make()
        let keychain = fixture.keychain("api.example.com").label("Token")
        try keychain.set("first", forKey: "alice")
        let created = try #require(try Self.storedRow(keychain, key: "alice", in: fixture.store))
        let createdAttributes = try fixture.store.withEngine { try $0.openAttributes(created).attributes }
        try keychain.set("second", forKey: "alice")
        try Keychain(service: "api.example.com", store: fixture.store).set("third", forKey: "alice")

        let row = try #require(try Self.storedRow(keychain, key: "alice", in: fixture.store))
        #expect(row.group == created.group)
        #expect(row.group == (try Self.expectedGroup("api.example.com", in: fixture.store)))
        let attributes = try fixture.store.withEngine { try $0.openAttributes(row).attributes }
        #expect(attributes.creationDate == createdAttributes.creationDate)
        #expect(attributes.label == "Token")
        #expect(try keychain.string(forKey: "alice") == "third")
        #expect(try keychain.allKeys() == ["alice"])
    }

    /// An item whose attributes do not open is replaced whole: its stored group is not trusted
    /// and the new row gets the hash of its service.
    @Test(arguments: StoreKind.allCases)
    func anUpsertOverADamagedItemComputesTheGroupAgain(kind: StoreKind) throws {
        let fixture = try kind.make()
        let keychain = fixture.keychain("api.example.com")
        try keychain.set("first", forKey: "alice")
        var damaged = try #require(try Self.storedRow(keychain, key: "alice", in: fixture.store))
        damaged.group = [UInt8](repeating: 0xEE, count: Sodium.hashBytes)
        try fixture.store.withStorage { storage in try storage.write { try storage.upsert(damaged) } }
        #expect(keychainError { _ = try keychain.string(forKey: "alice") } == .decode)

        try keychain.set("second", forKey: "alice")
        let row = try #require(try Self.storedRow(keychain, key: "alice", in: fixture.store))
        #expect(row.group == (try Self.expectedGroup("api.example.com", in: fixture.store)))
        #expect(try keychain.string(forKey: "alice") == "second")
        #expect(try keychain.allKeys() == ["alice"])
    }

    /// Secrets and attributes on both sides of the 1 KiB kept on the stack, written over each
    /// other. A secret of n bytes is padded to the next multiple of 64 above n and sealed with
    /// 40 more bytes: up to 959 bytes it seals within 1 KiB, from 960 it does not.
    @Test(arguments: StoreKind.allCases)
    func secretsAndAttributesOfEverySizeRoundTrip(kind: StoreKind) throws {
        let fixture = try kind.make()
        let keychain = fixture.keychain()
        for size in [0, 1, 63, 64, 943, 959, 960, 983, 1_023, 1_024, 1_025, 4_096, 100_000] {
            let secret = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
            try keychain.set(secret, forKey: "blob")
            #expect(try keychain.data(forKey: "blob") == secret, "size \(size)")
        }
        // Sealed attributes over 1 KiB: opened, decoded and kept by the next upsert.
        let label = String(repeating: "L", count: 5_000)
        let labelled = keychain.label(label)
        try labelled.set("one", forKey: "long")
        try keychain.set("two", forKey: "long")
        let row = try #require(try Self.storedRow(keychain, key: "long", in: fixture.store))
        #expect(row.attributes.count > 5_000)
        #expect(try fixture.store.withEngine { try $0.openAttributes(row).attributes.label } == label)
        #expect(try keychain.string(forKey: "long") == "two")
    }
}
