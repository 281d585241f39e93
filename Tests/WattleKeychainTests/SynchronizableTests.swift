import Foundation
import Testing
import WattleKeychain

@Suite struct SynchronizableTests {
    @Test(arguments: StoreKind.allCases)
    func aQueryWithoutSynchronizableMatchesOnlyNonSynchronizableItems(kind: StoreKind) throws {
        let store = try kind.make().store
        try store.add(.genericPassword(service: "s", account: "a", data: Data("synced"), synchronizable: true))
        #expect(
            keychainError { _ = try store.copyMatching(.genericPassword(service: "s", account: "a")) } == .itemNotFound)
        #expect(keychainError { _ = try store.copyMatching(.genericPassword(service: "s")) } == .itemNotFound)
        try store.add(.genericPassword(service: "s", account: "a", data: Data("local")))
        #expect(try store.copyMatching(.genericPassword(service: "s", account: "a")).first?.data == Data("local"))
    }

    @Test(
        "a synchronizable item cannot be ThisDeviceOnly: add, update and the typed set fail with errSecParam, storing nothing",
        arguments: StoreKind.allCases)
    func synchronizableRefusesThisDeviceOnly(kind: StoreKind) throws {
        let store = try kind.make().store
        for accessibility in [
            KeychainAccessibility.whenUnlockedThisDeviceOnly, .afterFirstUnlockThisDeviceOnly,
            .whenPasscodeSetThisDeviceOnly,
        ] {
            #expect(
                keychainError {
                    try store.add(
                        .genericPassword(
                            service: "s", account: "a", data: Data("x"), accessibility: accessibility,
                            synchronizable: true))
                } == .param)
            let typed = Keychain(service: "t", store: store).synchronizable(true).accessibility(accessibility)
            #expect(keychainError { try typed.set("v", forKey: "k") } == .param)
        }
        var any = KeychainQuery.genericPassword(service: "s").all()
        any.synchronizable = .any
        #expect(keychainError { _ = try store.copyMatching(any) } == .itemNotFound)
        // A local ThisDeviceOnly item cannot be made synchronizable, nor a synchronizable one ThisDeviceOnly.
        try store.add(
            .genericPassword(
                service: "s", account: "local", data: Data("x"), accessibility: .afterFirstUnlockThisDeviceOnly))
        #expect(
            keychainError {
                try store.update(
                    .genericPassword(service: "s", account: "local"), with: KeychainUpdate(synchronizable: true))
            } == .param)
        try store.add(.genericPassword(service: "s", account: "synced", data: Data("x"), synchronizable: true))
        var synced = KeychainQuery.genericPassword(service: "s", account: "synced")
        synced.synchronizable = .yes
        #expect(
            keychainError {
                try store.update(synced, with: KeychainUpdate(accessibility: .whenUnlockedThisDeviceOnly))
            } == .param)
        #expect(try store.copyMatching(synced.withAttributes()).first?.accessibility == .whenUnlocked)
        #expect(try store.copyMatching(.genericPassword(service: "s", account: "local")).count == 1)
    }

    @Test(arguments: StoreKind.allCases)
    func synchronizableAnyMatchesBothAndYesOnlySynchronizable(kind: StoreKind) throws {
        let store = try kind.make().store
        try store.add(.genericPassword(service: "s", account: "a", data: Data("synced"), synchronizable: true))
        try store.add(.genericPassword(service: "s", account: "a", data: Data("local")))
        var query = KeychainQuery.genericPassword(service: "s", account: "a").all().withAttributes()
        query.synchronizable = .any
        let both = try store.copyMatching(query)
        #expect(Set(both.compactMap(\.data)) == [Data("synced"), Data("local")])
        #expect(Set(both.compactMap(\.synchronizable)) == [true, false])
        query.synchronizable = .yes
        #expect(try store.copyMatching(query).compactMap(\.data) == [Data("synced")])
        // The same by service only (the indexed path) and by a full scan.
        var byService = KeychainQuery(
            .genericPassword, attributes: KeychainAttributes(service: "s"), synchronizable: .any, matchLimit: .all)
        #expect(try store.copyMatching(byService).count == 2)
        byService.attributes = KeychainAttributes()
        #expect(try store.copyMatching(byService).count == 2)
        byService.synchronizable = .no
        #expect(try store.copyMatching(byService).compactMap(\.data) == [Data("local")])
        // Deleting with .any removes both.
        query.synchronizable = .any
        try store.delete(query)
        #expect(keychainError { _ = try store.copyMatching(query) } == .itemNotFound)
    }

    @Test(
        "a query with synchronizable any and every identity attribute finds the item exactly once, whichever its flag",
        arguments: StoreKind.allCases)
    func anyByIdentityFindsTheItemOnceForEitherFlag(kind: StoreKind) throws {
        let store = try kind.make().store
        try store.add(WholeIdentity.item)
        let query = WholeIdentity.anyQuery
        for flag in [false, true, false] {
            try store.update(query, with: KeychainUpdate(synchronizable: flag))
            let found = try store.copyMatching(query)
            #expect(found.count == 1)
            #expect(found.first?.synchronizable == flag)
            #expect(found.first?.data == Data("pw"))
        }
    }

    @Test(arguments: StoreKind.allCases)
    func typedKeychainsKeepSynchronizableAndLocalValuesApart(kind: StoreKind) throws {
        let fixture = try kind.make()
        let local = fixture.keychain()
        let synced = local.synchronizable(true)
        try local.set("local", forKey: "k")
        try synced.set("synced", forKey: "k")
        #expect(try local.string(forKey: "k") == "local")
        #expect(try synced.string(forKey: "k") == "synced")
        #expect(try synced.allKeys() == ["k"])
        try synced.removeAll()
        #expect(try local.string(forKey: "k") == "local")
        #expect(try synced.hasValue(forKey: "k") == false)
    }
}

/// An item whose whole identity a query can name (account, service and access group), and that
/// query with synchronizable `.any`, which is looked up by the identity's two ids, one per flag.
enum WholeIdentity {
    static var item: KeychainItem {
        var item = KeychainItem.genericPassword(service: "s", account: "a", data: Data("pw"))
        item.attributes.accessGroup = "group.example"
        return item
    }

    static var anyQuery: KeychainQuery {
        var query = KeychainQuery.genericPassword(service: "s", account: "a").all().withAttributes()
        query.attributes.accessGroup = "group.example"
        query.synchronizable = .any
        return query
    }
}
