import Foundation
import Testing
import WattleKeychain

/// SecItem-style primitives against every store.
@Suite struct ItemPrimitivesTests {
    /// One item of each class, with identity and non-identity attributes set.
    static func sampleItems() -> [KeychainItem] {
        var generic = KeychainItem.genericPassword(service: "svc", account: "alice", data: Data("pw-generic"))
        generic.attributes.label = "Generic"
        generic.attributes.comment = "a comment"
        generic.attributes.generic = Data([1, 2, 3])
        var internet = KeychainItem.internetPassword(
            server: "example.com", account: "bob", protocol: .https, port: 443, path: "/api", data: Data("pw-internet"))
        internet.attributes.securityDomain = "realm"
        internet.attributes.authenticationType = .httpBasic
        internet.attributes.itemDescription = "Web"
        let certificate = KeychainItem.certificate(
            der: Data([0x30, 0x82, 1, 2]), issuer: Data("CN=Issuer"), serialNumber: Data([9, 9]))
        let key = KeychainItem.key(
            Data(repeating: 7, count: 32), keyClass: .symmetric, keyType: .aes, applicationTag: Data("tag"),
            keySizeInBits: 256)
        let identity = KeychainItem.identity(
            Data("pkcs12-bytes"), issuer: Data("CN=Issuer"), serialNumber: Data([1]))
        return [generic, internet, certificate, key, identity]
    }

    /// A query matching exactly the item's identity.
    static func query(for item: KeychainItem) -> KeychainQuery {
        var attributes = KeychainAttributes()
        switch item.itemClass {
        case .genericPassword:
            attributes.service = item.attributes.service
            attributes.account = item.attributes.account
        case .internetPassword:
            attributes.server = item.attributes.server
            attributes.account = item.attributes.account
        case .certificate, .identity:
            attributes.issuer = item.attributes.issuer
            attributes.serialNumber = item.attributes.serialNumber
        case .key:
            attributes.applicationTag = item.attributes.applicationTag
        }
        return KeychainQuery(item.itemClass, attributes: attributes)
    }

    @Test(arguments: StoreKind.allCases)
    func everyClassRoundTripsThroughAddCopyUpdateDelete(kind: StoreKind) throws {
        let fixture = try kind.make()
        let store = fixture.store
        for item in Self.sampleItems() {
            try store.add(item)
            let query = Self.query(for: item).withAttributes()
            let found = try store.copyMatching(query)
            #expect(found.count == 1)
            #expect(found.first?.itemClass == item.itemClass)
            #expect(found.first?.data == item.data)
            #expect(found.first?.accessibility == item.accessibility)
            #expect(found.first?.synchronizable == false)
            var expected = item.attributes
            let attributes = try #require(found.first?.attributes)
            expected.creationDate = attributes.creationDate
            expected.modificationDate = attributes.modificationDate
            #expect(attributes.creationDate != nil)
            // Identity attributes left nil come back empty, the others exactly as stored.
            #expect(attributes.label == expected.label)
            #expect(attributes.comment == expected.comment)
            #expect(attributes.generic == expected.generic)
            #expect(attributes.itemDescription == expected.itemDescription)
            #expect(attributes.accessGroup == "")

            try store.update(
                Self.query(for: item), with: KeychainUpdate(data: Data("changed"), accessibility: .afterFirstUnlock))
            let changed = try store.copyMatching(query)
            #expect(changed.first?.data == Data("changed"))
            #expect(changed.first?.accessibility == .afterFirstUnlock)
            #expect(changed.first?.attributes?.label == item.attributes.label)

            try store.delete(Self.query(for: item))
            #expect(keychainError { _ = try store.copyMatching(Self.query(for: item)) } == .itemNotFound)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func addingAnExistingIdentityFailsWithDuplicateItem(kind: StoreKind) throws {
        let store = try kind.make().store
        for item in Self.sampleItems() {
            try store.add(item)
            var twin = item
            twin.data = Data("other")
            twin.attributes.label = "another label"
            twin.attributes.comment = "another comment"
            twin.attributes.itemDescription = "another description"
            twin.attributes.generic = Data([42])
            twin.accessibility = .afterFirstUnlock
            let error = keychainError { try store.add(twin) }
            #expect(error == .duplicateItem)
            #expect(error?.status == -25299)
            // The original is untouched.
            #expect(try store.copyMatching(Self.query(for: item)).first?.data == item.data)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aMissingItemIsItemNotFoundForCopyUpdateAndDelete(kind: StoreKind) throws {
        let store = try kind.make().store
        let query = KeychainQuery.genericPassword(service: "nothing", account: "here")
        let copyError = keychainError { _ = try store.copyMatching(query) }
        #expect(copyError == .itemNotFound)
        #expect(copyError?.status == -25300)
        #expect(keychainError { try store.update(query, with: KeychainUpdate(data: Data("x"))) } == .itemNotFound)
        #expect(keychainError { try store.delete(query) } == .itemNotFound)
    }

    @Test(arguments: StoreKind.allCases)
    func everyIdentityAttributeOfAnInternetPasswordDistinguishesItems(kind: StoreKind) throws {
        let store = try kind.make().store
        let base = KeychainItem.internetPassword(
            server: "h", account: "a", protocol: .https, port: 443, path: "/", data: Data("0"))
        try store.add(base)
        let variations: [(inout KeychainAttributes) -> Void] = [
            { $0.account = "a2" }, { $0.securityDomain = "d" }, { $0.server = "h2" }, { $0.protocol = .http },
            { $0.authenticationType = .htmlForm }, { $0.port = 8443 }, { $0.path = "/x" }, { $0.accessGroup = "g" },
        ]
        for (index, vary) in variations.enumerated() {
            var item = base
            vary(&item.attributes)
            item.data = Data("\(index + 1)")
            try store.add(item)
        }
        var synced = base
        synced.synchronizable = true
        try store.add(synced)
        let all = try store.copyMatching(
            KeychainQuery(.internetPassword, synchronizable: .any, matchLimit: .all))
        #expect(all.count == variations.count + 2)
    }

    @Test(arguments: StoreKind.allCases)
    func aGenericPasswordIsIdentifiedByAccountServiceAccessGroupAndSynchronizable(kind: StoreKind) throws {
        let store = try kind.make().store
        try store.add(.genericPassword(service: "s", account: "a", data: Data("1")))
        try store.add(.genericPassword(service: "s", account: "b", data: Data("2")))
        try store.add(.genericPassword(service: "t", account: "a", data: Data("3")))
        var grouped = KeychainItem.genericPassword(service: "s", account: "a", data: Data("4"))
        grouped.attributes.accessGroup = "team.group"
        try store.add(grouped)
        try store.add(.genericPassword(service: "s", account: "a", data: Data("5"), synchronizable: true))
        let inService = try store.copyMatching(
            KeychainQuery(
                .genericPassword, attributes: KeychainAttributes(service: "s"), synchronizable: .any, matchLimit: .all))
        #expect(Set(inService.compactMap(\.data)) == [Data("1"), Data("2"), Data("4"), Data("5")])
        var inGroup = KeychainQuery.genericPassword(service: "s", account: "a")
        inGroup.attributes.accessGroup = "team.group"
        #expect(try store.copyMatching(inGroup).first?.data == Data("4"))
    }

    @Test(arguments: StoreKind.allCases)
    func matchLimitOneReturnsOneAndAllReturnsEvery(kind: StoreKind) throws {
        let store = try kind.make().store
        for index in 0..<5 {
            try store.add(.genericPassword(service: "s", account: "a\(index)", data: Data("\(index)")))
        }
        let query = KeychainQuery.genericPassword(service: "s")
        #expect(try store.copyMatching(query).count == 1)
        let all = try store.copyMatching(query.all().withAttributes())
        #expect(all.count == 5)
        #expect(Set(all.compactMap { $0.attributes?.account }) == ["a0", "a1", "a2", "a3", "a4"])
        var attributesOnly = query.all().withAttributes()
        attributesOnly.returnData = false
        #expect(try store.copyMatching(attributesOnly).allSatisfy { $0.data == nil && $0.attributes != nil })
    }

    @Test(arguments: StoreKind.allCases)
    func queriesFilterOnNonIdentityAttributesAndAccessibility(kind: StoreKind) throws {
        let store = try kind.make().store
        var labelled = KeychainItem.genericPassword(service: "s", account: "a", data: Data("1"))
        labelled.attributes.label = "mine"
        try store.add(labelled)
        try store.add(.genericPassword(service: "s", account: "b", data: Data("2"), accessibility: .afterFirstUnlock))
        var byLabel = KeychainQuery(.genericPassword, attributes: KeychainAttributes(label: "mine"), matchLimit: .all)
        #expect(try store.copyMatching(byLabel).compactMap(\.data) == [Data("1")])
        byLabel.attributes.label = "nobody"
        #expect(keychainError { _ = try store.copyMatching(byLabel) } == .itemNotFound)
        let byAccessibility = KeychainQuery(.genericPassword, accessibility: .afterFirstUnlock, matchLimit: .all)
        #expect(try store.copyMatching(byAccessibility).compactMap(\.data) == [Data("2")])
    }

    @Test(arguments: StoreKind.allCases)
    func updatingIdentityIntoAnExistingItemFailsWithDuplicateAndChangesNothing(kind: StoreKind) throws {
        let store = try kind.make().store
        try store.add(.genericPassword(service: "s", account: "a", data: Data("1")))
        try store.add(.genericPassword(service: "s", account: "b", data: Data("2")))
        let error = keychainError {
            try store.update(
                .genericPassword(service: "s", account: "a"),
                with: KeychainUpdate(attributes: KeychainAttributes(account: "b")))
        }
        #expect(error == .duplicateItem)
        #expect(try store.copyMatching(.genericPassword(service: "s", account: "a")).first?.data == Data("1"))
        #expect(try store.copyMatching(.genericPassword(service: "s", account: "b")).first?.data == Data("2"))
        // Renaming to a free identity moves the item and keeps its secret and creation date.
        let before = try store.copyMatching(KeychainQuery.genericPassword(service: "s", account: "a").withAttributes())
        try store.update(
            .genericPassword(service: "s", account: "a"),
            with: KeychainUpdate(attributes: KeychainAttributes(account: "c")))
        let moved = try store.copyMatching(KeychainQuery.genericPassword(service: "s", account: "c").withAttributes())
        #expect(moved.first?.data == Data("1"))
        #expect(moved.first?.attributes?.creationDate == before.first?.attributes?.creationDate)
        #expect(
            keychainError { _ = try store.copyMatching(.genericPassword(service: "s", account: "a")) } == .itemNotFound)
    }

    @Test(arguments: StoreKind.allCases)
    func deleteRemovesEveryMatchAndNothingElse(kind: StoreKind) throws {
        let store = try kind.make().store
        for index in 0..<3 {
            try store.add(.genericPassword(service: "gone", account: "a\(index)", data: Data("x")))
        }
        try store.add(.genericPassword(service: "kept", account: "a0", data: Data("y")))
        try store.delete(.genericPassword(service: "gone"))
        #expect(keychainError { _ = try store.copyMatching(.genericPassword(service: "gone")) } == .itemNotFound)
        #expect(try store.copyMatching(.genericPassword(service: "kept", account: "a0")).first?.data == Data("y"))
    }
}
