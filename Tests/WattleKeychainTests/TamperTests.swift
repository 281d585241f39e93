import Foundation
import Testing
import WattleTesting

@testable import WattleKeychain

/// Sealed blobs are bound to their rows: any change is `decode` for that item only.
@Suite struct TamperTests {
    static let keys = ["alpha", "beta", "gamma"]

    /// Three items, and the key each stored row belongs to (found by changing one row at a time).
    func populated(_ kind: StoreKind) throws -> (StoreFixture, [StoredRow]) {
        let fixture = try kind.make()
        let keychain = fixture.keychain()
        for key in Self.keys { try keychain.set("value-of-\(key)", forKey: key) }
        let rows = try fixture.store.withStorage { try $0.allRows() }
        #expect(rows.count == 3)
        return (fixture, rows)
    }

    func replace(_ row: StoredRow, in store: KeychainStore) throws {
        try store.withStorage { storage in try storage.write { try storage.upsert(row) } }
    }

    /// Reads every key's secret and accessibility: nil for a key that failed with `decode`.
    func readable(_ keychain: Keychain) throws -> [String: Bool] {
        var result: [String: Bool] = [:]
        for key in Self.keys {
            let secret = keychainError { _ = try keychain.string(forKey: key) }
            let attributes = keychainError { _ = try keychain.accessibility(forKey: key) }
            for error in [secret, attributes] where error != nil {
                #expect(error == .decode)
            }
            result[key] = secret == nil && attributes == nil
            if result[key] == true { #expect(try keychain.string(forKey: key) == "value-of-\(key)") }
        }
        return result
    }

    @Test(arguments: StoreKind.allCases)
    func flippingAnyByteOfASealedBlobFailsThatItemWithDecodeWhileOthersRead(kind: StoreKind) async throws {
        let (fixture, rows) = try populated(kind)
        let keychain = fixture.keychain()
        let row = rows[0]
        let positions =
            Array(0..<row.secret.count).map { (true, $0) } + Array(0..<row.attributes.count).map { (false, $0) }
        for (inSecret, position) in positions {
            // A durable write each: yield between them, so that the suite's other tasks do not
            // wait for one of the pool's two threads.
            await Task.yield()
            var tampered = row
            if inSecret { tampered.secret[position] ^= 0x01 } else { tampered.attributes[position] ^= 0x80 }
            try replace(tampered, in: fixture.store)
            let result = try readable(keychain)
            #expect(
                result.values.filter { !$0 }.count == 1, "byte \(position) of \(inSecret ? "secret" : "attributes")")
            #expect(result.values.filter { $0 }.count == 2)
            // A failed read deletes nothing.
            #expect(try fixture.store.withStorage { try $0.allRows().count } == 3)
        }
        try replace(row, in: fixture.store)
        #expect(try readable(keychain).values.allSatisfy { $0 })
    }

    @Test(arguments: StoreKind.allCases)
    func swappingTwoRowsBlobsFailsBothWithDecode(kind: StoreKind) throws {
        let (fixture, rows) = try populated(kind)
        var first = rows[0]
        var second = rows[1]
        swap(&first.secret, &second.secret)
        swap(&first.attributes, &second.attributes)
        try replace(first, in: fixture.store)
        try replace(second, in: fixture.store)
        let result = try readable(fixture.keychain())
        #expect(result.values.filter { !$0 }.count == 2)
        #expect(result.values.filter { $0 }.count == 1)
    }

    @Test(arguments: StoreKind.allCases)
    func swappingOnlySecretsOrChangingTheProtectionColumnIsDetected(kind: StoreKind) throws {
        let (fixture, rows) = try populated(kind)
        var first = rows[0]
        var second = rows[1]
        swap(&first.secret, &second.secret)
        try replace(first, in: fixture.store)
        try replace(second, in: fixture.store)
        #expect(try readable(fixture.keychain()).values.filter { !$0 }.count == 2)
        try replace(rows[0], in: fixture.store)
        try replace(rows[1], in: fixture.store)
        var downgraded = rows[2]
        downgraded.protection = 0
        try replace(downgraded, in: fixture.store)
        #expect(try readable(fixture.keychain()).values.filter { !$0 }.count == 1)
    }

    @Test(arguments: StoreKind.allCases)
    func anOlderSecretPutBackBesideTheCurrentAttributesFailsWithDecode(kind: StoreKind) throws {
        let fixture = try kind.make()
        let keychain = fixture.keychain()
        try keychain.set("revoked-token", forKey: "alpha")
        let old = try #require(try fixture.store.withStorage { try $0.allRows() }.first)
        try keychain.label("renewed").set("current-token", forKey: "alpha")
        let current = try #require(try fixture.store.withStorage { try $0.allRows() }.first)
        #expect(old.id == current.id && old.secret != current.secret)
        // The secret column alone from the older copy: the attributes would not show the replay.
        var mixed = current
        mixed.secret = old.secret
        try replace(mixed, in: fixture.store)
        #expect(keychainError { _ = try keychain.string(forKey: "alpha") } == .decode)
        #expect(try keychain.accessibility(forKey: "alpha") != nil, "the attributes still open")
        // The whole older row still opens: a replay of a row is not detected (the security model says so).
        try replace(old, in: fixture.store)
        #expect(try keychain.string(forKey: "alpha") == "revoked-token")
    }

    @Test("a keychain made in format 1 (secrets not bound to their attributes) still opens, reads and writes")
    func formatOneStillOpens() throws {
        let temporary = try TemporaryKeychain()
        let url = temporary.directory.appendingPathComponent("format1.keychain")
        let key = [UInt8](repeating: 0x31, count: Sodium.keyBytes)
        let engine = try KeychainEngine.open(
            storage: try SQLiteStorage(path: url.path), credential: .key(key), format: 1)
        #expect(engine.header.format == 1)
        try engine.setValue(
            Data("made-in-format-1".utf8), forKey: "k",
            at: .init(service: "f1", accessGroup: "", synchronizable: false),
            accessibility: .afterFirstUnlock, label: nil, comment: nil)
        let store = KeychainStore(source: .file(url), credential: .key(key))
        let keychain = Keychain(service: "f1", store: store)
        #expect(try keychain.string(forKey: "k") == "made-in-format-1")
        try keychain.set("written-by-this-version", forKey: "k2")
        try keychain.set("updated", forKey: "k")
        let reopened = Keychain(service: "f1", store: KeychainStore(source: .file(url), credential: .key(key)))
        #expect(try reopened.string(forKey: "k") == "updated")
        #expect(try reopened.string(forKey: "k2") == "written-by-this-version")
        #expect(try store.withEngine { $0.header.format } == 1, "a keychain keeps its format")
        // A new keychain is made in the current format.
        #expect(try temporary.store.withEngine { $0.header.format } == KeychainHeader.currentFormat)
        // A format byte changed on disk while the keychain is open is not re-wrapped as genuine
        // by a credential change (which would turn every item into a decode failure).
        try SQLiteConnection(path: url.path, create: false).execute(
            "UPDATE meta SET value = x'02' WHERE name = 'format'")
        #expect(keychainError { try store.changeCredential(to: .key([UInt8](repeating: 0x32, count: 32))) } == .decode)
        #expect(try store.withEngine { $0.header.format } == 1)
        #expect(try keychain.string(forKey: "k") == "updated")
        // A later format is refused as such, not taken for damage.
        try SQLiteConnection(path: url.path, create: false).execute(
            "UPDATE meta SET value = x'03' WHERE name = 'format'")
        let later = KeychainStore(source: .file(url), credential: .key(key))
        #expect(keychainError { try later.open() } == .unimplemented)
        #expect(KeychainError.unimplemented.description.contains("made by a later Wattle"))
    }

    @Test(arguments: StoreKind.allCases)
    func aByteMovedBetweenTheTwoHashesDoesNotMakeASecondItem(kind: StoreKind) throws {
        let (fixture, rows) = try populated(kind)
        // The associated data holds id and group back to back: a row whose id lost its last
        // byte to the front of its group has the same bytes there, and must still not open.
        var ghost = rows[0]
        ghost.group = [ghost.id.removeLast()] + ghost.group
        try fixture.store.withStorage { storage in try storage.write { try storage.insert(ghost) } }
        #expect(try fixture.store.withStorage { try $0.allRows().count } == 4)
        // A scan skips the ghost (it does not open) and finds the three genuine items only.
        let scan = try fixture.store.copyMatching(
            KeychainQuery(.genericPassword, synchronizable: .any, matchLimit: .all, returnAttributes: true))
        #expect(scan.compactMap { $0.attributes?.account }.sorted() == Self.keys)
        #expect(Set(scan.compactMap(\.data)) == Set(Self.keys.map { Data("value-of-\($0)".utf8) }))
        // The genuine items still read.
        #expect(try readable(fixture.keychain()).values.allSatisfy { $0 })
    }

    @Test(arguments: StoreKind.allCases)
    func aDamagedItemNeitherHidesNorBlocksTheOthersAndRemoveAllCleansItUp(kind: StoreKind) throws {
        let (fixture, rows) = try populated(kind)
        let store = fixture.store
        let keychain = fixture.keychain()
        var attributesDamaged = rows[0]
        attributesDamaged.attributes[attributesDamaged.attributes.count - 1] ^= 1
        try replace(attributesDamaged, in: store)
        let damagedKey = try #require(
            Self.keys.first { key in keychainError { _ = try keychain.accessibility(forKey: key) } == .decode })
        let others = Self.keys.filter { $0 != damagedKey }
        // Point reads of the damaged item still fail closed.
        let itsQuery = KeychainQuery.genericPassword(service: "svc", account: damagedKey)
        #expect(keychainError { _ = try store.copyMatching(itsQuery) } == .decode)
        // Lists and scans skip it and return the rest (they threw `decode` before).
        #expect(try keychain.allKeys() == others)
        let scan = KeychainQuery(.genericPassword, attributes: KeychainAttributes(service: "svc"), matchLimit: .all)
        let found = try store.copyMatching(scan.withAttributes())
        #expect(found.compactMap { $0.attributes?.account }.sorted() == others)
        #expect(Set(found.compactMap(\.data)) == Set(others.map { Data("value-of-\($0)".utf8) }))
        // A filtered update or delete changes the items it can match and leaves the damaged one.
        var labelled = scan
        labelled.attributes.label = "none"
        #expect(keychainError { try store.delete(labelled) } == .decode)
        try store.update(scan, with: KeychainUpdate(attributes: KeychainAttributes { $0.comment = "seen" }))
        #expect(try store.copyMatching(scan.withAttributes()).allSatisfy { $0.attributes?.comment == "seen" })
        #expect(try store.withStorage { try $0.allRows().count } == 3)

        // A scan of the whole class that matches nothing is itemNotFound: the damaged row is
        // of no identity or service the query named.
        var unnamed = KeychainQuery(.genericPassword, matchLimit: .all)
        unnamed.attributes.label = "none"
        #expect(keychainError { _ = try store.copyMatching(unnamed) } == .itemNotFound)

        // A damaged secret (attributes intact): listed, but skipped by a scan for data.
        var secretDamaged = try #require(try store.withStorage { try $0.allRows() }.first { $0.id != rows[0].id })
        secretDamaged.secret[secretDamaged.secret.count - 1] ^= 1
        try replace(secretDamaged, in: store)
        #expect(try keychain.allKeys().count == 2)
        #expect(try store.copyMatching(scan.withAttributes()).count == 1)
        // A scan of the whole class that matches only it, by account, is decode: the item is
        // there (itemNotFound would have the caller add it, and fail with duplicateItem).
        let secretDamagedAccount = try #require(
            Self.keys.first { key in
                key != damagedKey && keychainError { _ = try keychain.string(forKey: key) } == .decode
            })
        let byAccount = KeychainQuery(
            .genericPassword, attributes: KeychainAttributes(account: secretDamagedAccount), matchLimit: .one)
        #expect(keychainError { _ = try store.copyMatching(byAccount) } == .decode)
        #expect(
            keychainError {
                try store.update(byAccount, with: KeychainUpdate(attributes: KeychainAttributes { $0.comment = "x" }))
            } == .decode)
        // An update that keeps the secrets skips it and changes the one good item.
        try store.update(scan, with: KeychainUpdate(attributes: KeychainAttributes { $0.comment = "again" }))
        #expect(try store.copyMatching(scan.withAttributes()).map { $0.attributes?.comment } == ["again"])

        // removeAll removes every item of the service, the damaged ones too, and no other service's.
        try fixture.keychain("other").set("kept", forKey: "k")
        try keychain.removeAll()
        #expect(try store.withStorage { try $0.allRows().count } == 1)
        #expect(try keychain.allKeys().isEmpty)
        #expect(try fixture.keychain("other").string(forKey: "k") == "kept")
    }

    @Test(arguments: StoreKind.allCases)
    func aDamagedItemCanStillBeRemovedByKeyAndOverwrittenBySet(kind: StoreKind) throws {
        let (fixture, rows) = try populated(kind)
        let keychain = fixture.keychain()
        for row in rows.prefix(2) {
            var tampered = row
            tampered.secret[tampered.secret.count - 1] ^= 1
            try replace(tampered, in: fixture.store)
        }
        let damaged = Self.keys.filter { key in keychainError { _ = try keychain.string(forKey: key) } == .decode }
        #expect(damaged.count == 2)
        try keychain.removeValue(forKey: damaged[0])
        #expect(try !keychain.hasValue(forKey: damaged[0]))
        try keychain.set("fresh", forKey: damaged[1])
        #expect(try keychain.string(forKey: damaged[1]) == "fresh")
    }

    @Test(arguments: StoreKind.allCases)
    func removeAllLeavesAnItemWhoseAttributesOpenButDoNotDecode(kind: StoreKind) throws {
        let (fixture, rows) = try populated(kind)
        let store = fixture.store
        // Attributes sealed with the right key and bound to the row, but in a form this
        // version cannot read (as a later Wattle's might be): not damaged, so not removed.
        var unreadable = rows[0]
        unreadable.attributes = try store.withEngine { engine in
            let ad = engine.associatedData(
                .attributes, itemClass: unreadable.itemClass, protection: unreadable.protection, id: unreadable.id,
                group: unreadable.group)
            return [UInt8](repeating: 0xEE, count: 40).withUnsafeBytes {
                Sodium.seal($0, additionalData: ad, key: engine.keys.attributes)
            }
        }
        try replace(unreadable, in: store)
        #expect(try store.withEngine { $0.attributesFailAuthentication(unreadable) } == false)
        let keychain = fixture.keychain()
        #expect(try keychain.allKeys().count == 2)
        try keychain.removeAll()
        #expect(try store.withStorage { try $0.allRows() }.map(\.id) == [unreadable.id])
    }
}
