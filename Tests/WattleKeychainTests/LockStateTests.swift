import Foundation
import Testing
import WattleKeychain

@Suite struct LockStateTests {
    @Test(arguments: StoreKind.allCases)
    func whileLockedWhenUnlockedItemsFailWithInteractionNotAllowedAndAfterFirstUnlockItemsRead(kind: StoreKind) throws {
        let fixture = try kind.make()
        let keychain = fixture.keychain()
        try keychain.accessibility(.whenUnlocked).set("a", forKey: "whenUnlocked")
        try keychain.accessibility(.whenUnlockedThisDeviceOnly).set("b", forKey: "whenUnlockedThisDeviceOnly")
        try keychain.accessibility(.whenPasscodeSetThisDeviceOnly).set("c", forKey: "whenPasscodeSet")
        try keychain.accessibility(.afterFirstUnlock).set("d", forKey: "afterFirstUnlock")
        try keychain.accessibility(.afterFirstUnlockThisDeviceOnly).set("e", forKey: "afterFirstUnlockThisDeviceOnly")

        fixture.store.lock()
        #expect(fixture.store.isLocked)
        for key in ["whenUnlocked", "whenUnlockedThisDeviceOnly", "whenPasscodeSet"] {
            let error = keychainError { _ = try keychain.string(forKey: key) }
            #expect(error == .interactionNotAllowed, "\(key)")
            #expect(error?.status == -25308)
            // Locked is never "not found", and the failed read deleted nothing.
            #expect(try keychain.hasValue(forKey: key))
        }
        #expect(try keychain.string(forKey: "afterFirstUnlock") == "d")
        #expect(try keychain.string(forKey: "afterFirstUnlockThisDeviceOnly") == "e")
        // Writing a value that needs unlocking is refused too; background values can be written.
        #expect(keychainError { try keychain.set("x", forKey: "new") } == .interactionNotAllowed)
        try keychain.accessibility(.afterFirstUnlock).set("f", forKey: "background")
        #expect(try keychain.allKeys().count == 6)

        try fixture.unlock()
        #expect(!fixture.store.isLocked)
        #expect(try keychain.string(forKey: "whenUnlocked") == "a")
        #expect(try keychain.string(forKey: "whenUnlockedThisDeviceOnly") == "b")
        #expect(try keychain.string(forKey: "whenPasscodeSet") == "c")
    }

    @Test(arguments: StoreKind.allCases)
    func primitivesReportLockedAsInteractionNotAllowedNeverAsNotFound(kind: StoreKind) throws {
        let fixture = try kind.make()
        let store = fixture.store
        try store.add(.genericPassword(service: "s", account: "a", data: Data("x")))
        store.lock()
        let query = KeychainQuery.genericPassword(service: "s", account: "a")
        #expect(keychainError { _ = try store.copyMatching(query) } == .interactionNotAllowed)
        #expect(keychainError { _ = try store.copyMatching(query.all()) } == .interactionNotAllowed)
        #expect(
            keychainError { try store.update(query, with: KeychainUpdate(attributes: KeychainAttributes(label: "l"))) }
                == .interactionNotAllowed)
        // Attributes stay readable while locked (they are sealed with the attributes key).
        var attributesOnly = query.withAttributes()
        attributesOnly.returnData = false
        #expect(try store.copyMatching(attributesOnly).first?.attributes?.account == "a")
        try fixture.unlock()
        #expect(try store.copyMatching(query).first?.data == Data("x"))
    }

    @Test(arguments: StoreKind.allCases)
    func whileLockedAnItemThatNeedsUnlockingIsNotReplacedOrChangedEvenToBackgroundAccess(kind: StoreKind) throws {
        let fixture = try kind.make()
        let store = fixture.store
        let keychain = fixture.keychain()
        try keychain.accessibility(.whenUnlocked).set("secret", forKey: "k")
        try keychain.accessibility(.afterFirstUnlock).set("background", forKey: "b")
        store.lock()
        // A set with a weaker accessibility would replace an item no one may read while locked.
        #expect(
            keychainError { try keychain.accessibility(.afterFirstUnlock).set("other", forKey: "k") }
                == .interactionNotAllowed)
        let query = KeychainQuery.genericPassword(service: "svc", account: "k")
        let weaker = KeychainUpdate(data: Data("other".utf8), accessibility: .afterFirstUnlock)
        #expect(keychainError { try store.update(query, with: weaker) } == .interactionNotAllowed)
        // A query over the service that also matches the background item changes nothing either.
        let service = KeychainQuery(.genericPassword, attributes: KeychainAttributes(service: "svc"), matchLimit: .all)
        #expect(
            keychainError {
                try store.update(service, with: KeychainUpdate(attributes: KeychainAttributes(label: "l")))
            } == .interactionNotAllowed)
        // Background items change as usual, and removing is allowed (as on Apple platforms).
        try keychain.accessibility(.afterFirstUnlock).set("background 2", forKey: "b")
        try fixture.unlock()
        #expect(try keychain.string(forKey: "k") == "secret")
        #expect(try keychain.accessibility(forKey: "k") == .whenUnlocked)
        #expect(try keychain.string(forKey: "b") == "background 2")
        #expect(try store.copyMatching(service.withAttributes()).allSatisfy { $0.attributes?.label == nil })
        store.lock()
        try keychain.removeValue(forKey: "k")
        #expect(try !keychain.hasValue(forKey: "k"))
    }

    @Test(arguments: StoreKind.allCases)
    func accessibilityIsReportedPerKeyAndCanChangeOnSet(kind: StoreKind) throws {
        let keychain = try kind.make().keychain()
        #expect(try keychain.accessibility(forKey: "k") == nil)
        try keychain.set("v", forKey: "k")
        #expect(try keychain.accessibility(forKey: "k") == .whenUnlocked)
        try keychain.accessibility(.afterFirstUnlockThisDeviceOnly).set("v2", forKey: "k")
        #expect(try keychain.accessibility(forKey: "k") == .afterFirstUnlockThisDeviceOnly)
        #expect(try keychain.string(forKey: "k") == "v2")
    }

    @Test func aFileKeychainStaysLockedForOtherStoresUntilUnlockedWithTheRightPassphrase() throws {
        let fixture = try StoreKind.passphrase.make()
        try fixture.keychain().set("secret", forKey: "k")
        fixture.store.lock()
        #expect(
            keychainError { try fixture.store.unlock(with: .passphrase("wrong", strength: .minimum)) } == .authFailed)
        #expect(fixture.store.isLocked)
        #expect(keychainError { _ = try fixture.keychain().string(forKey: "k") } == .interactionNotAllowed)
        #expect(keychainError { try fixture.store.unlock() } == .param)
        try fixture.unlock()
        #expect(try fixture.keychain().string(forKey: "k") == "secret")
    }
}
