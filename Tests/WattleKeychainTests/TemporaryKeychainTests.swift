import Foundation
import Testing
import WattleKeychain
import WattleTesting

@Suite("TemporaryKeychain: a real keychain file whose folder lives as long as anything using it")
struct TemporaryKeychainTests {
    @Test("a keychain made from a helper that is released at once keeps its folder until the keychain goes")
    func keychainOutlivesTheHelper() throws {
        // The common fixture shape: only the Keychain is kept.
        func makeKeychain() throws -> (Keychain, URL) {
            let temporary = try TemporaryKeychain()
            return (temporary.keychain(service: "svc"), temporary.directory)
        }
        var (keychain, directory): (Keychain?, URL) = try makeKeychain()
        try keychain!.set("token", forKey: "access")
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("test.keychain").path))
        // lock() then unlock() reads the key file again: it is still there.
        keychain!.store.lock()
        try keychain!.store.unlock()
        #expect(try keychain!.string(forKey: "access") == "token")
        keychain = nil
        #expect(!FileManager.default.fileExists(atPath: directory.path))
    }

    @Test("a reopened store keeps the folder too; the last one released removes it")
    func reopenedStoreKeepsTheFolder() throws {
        var temporary: TemporaryKeychain? = try TemporaryKeychain()
        let directory = temporary!.directory
        try temporary!.keychain(service: "svc").set("v", forKey: "k")
        var reopened: KeychainStore? = try temporary!.reopen()
        temporary = nil
        #expect(try Keychain(service: "svc", store: reopened!).string(forKey: "k") == "v")
        #expect(FileManager.default.fileExists(atPath: directory.path))
        reopened = nil
        #expect(!FileManager.default.fileExists(atPath: directory.path))
    }
}
