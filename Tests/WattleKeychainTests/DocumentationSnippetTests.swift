import Foundation
import Testing
import WattleKeychain
import WattleTesting

/// The snippets of the DocC articles, compiled and run against a temporary keychain (the
/// articles use the default store; everything else is the same code).
@Suite struct DocumentationSnippetTests {
    struct Token: Codable, Equatable {
        var access: String
        var refresh: String
    }

    @Test func gettingStartedTypedValuesWork() throws {
        let temporary = try TemporaryKeychain()
        let keychain = temporary.keychain(service: "api.example.com")
        try keychain.set("s3cret", forKey: "password")
        try keychain.set(true, forKey: "onboarded")
        try keychain.set(42, forKey: "launches")
        try keychain.setCodable(Token(access: "a", refresh: "r"), forKey: "token")

        let password = try keychain.string(forKey: "password")
        let token = try keychain.codable(Token.self, forKey: "token")
        let missing = try keychain.string(forKey: "nothing")
        #expect(password == "s3cret")
        #expect(token == Token(access: "a", refresh: "r"))
        #expect(missing == nil)

        let refreshToken = "r"
        try keychain.accessibility(.afterFirstUnlock).set(refreshToken, forKey: "refresh")
        try keychain.synchronizable(true).label("Example API").set("pw", forKey: "password")
    }

    @Test func gettingStartedStoresOpen() throws {
        let temporary = try TemporaryKeychain()
        let folder = temporary.directory.appendingPathComponent("folder")
        _ = try KeychainStore(directory: folder)
        let passphrase = "correct horse"
        _ = try KeychainStore(
            fileURL: folder.appendingPathComponent("p.keychain"),
            credential: .passphrase(passphrase, strength: .minimum))
        let keyBytes = [UInt8](repeating: 7, count: 32)
        _ = try KeychainStore(fileURL: folder.appendingPathComponent("k.keychain"), credential: .key(keyBytes))
        let store = KeychainStore.inMemory()
        let keychain = Keychain(service: "api.example.com", store: store)
        try keychain.set("x", forKey: "y")
    }

    @Test func gettingStartedItemsAndQueriesWork() throws {
        let store = KeychainStore.inMemory()
        try store.add(
            .internetPassword(
                server: "example.com", account: "alice",
                protocol: .https, data: Data("pw".utf8)))

        var query = KeychainQuery.internetPassword(server: "example.com")
        query.matchLimit = .all
        query.returnAttributes = true
        let matches = try store.copyMatching(query)
        #expect(matches.map { $0.attributes?.account } == ["alice"])

        try store.update(
            .internetPassword(server: "example.com", account: "alice"),
            with: KeychainUpdate(data: Data("new".utf8)))
        try store.delete(.internetPassword(server: "example.com"))

        store.lock()
        try store.unlock()
    }
}
