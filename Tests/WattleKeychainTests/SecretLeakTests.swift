import Foundation
import Testing
import WattleTesting

@testable import WattleKeychain

/// The passphrase, the secrets and even the names stored never appear in the keychain's files,
/// in an error's description, or in a description or dump of the credential and the store.
@Suite struct SecretLeakTests {
    static func contains(_ haystack: [UInt8], _ needle: String) -> Bool {
        let bytes = Array(needle.utf8)
        guard bytes.count <= haystack.count else { return false }
        return (0...(haystack.count - bytes.count)).contains { start in
            haystack[start] == bytes[0] && haystack[start..<(start + bytes.count)].elementsEqual(bytes)
        }
    }

    /// What an update re-seals and a conditional removal tests is wiped with this once used.
    @Test(arguments: [8, 14, 15, 4096])
    func aPlaintextTheEngineOpenedIsWipedInPlace(count: Int) {
        var secret = Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 1) })
        let before = secret.withUnsafeBytes { $0.baseAddress }
        Sodium.wipe(&secret)
        #expect(secret.count == count)
        #expect(secret.allSatisfy { $0 == 0 })
        if count > 14 {  // (up to 14 bytes, Data keeps them inline, in the variable itself)
            #expect(secret.withUnsafeBytes { $0.baseAddress } == before, "wiped in place, not in a copy")
        }
        // A copy that someone else holds is theirs: left as it was.
        var shared = Data(repeating: 0xA5, count: count)
        let copy = shared
        Sodium.wipe(&shared)
        #expect(shared.allSatisfy { $0 == 0 })
        #expect(copy == Data(repeating: 0xA5, count: count))
    }

    @Test func thePassphraseAndStoredSecretsAppearInNoFileDescriptionOrDump() throws {
        let folder = try Reliability.temporaryFolder("wattle-secrets")
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("s.keychain")
        let passphrase = "pass-\(UUID().uuidString)"
        let newPassphrase = "newpass-\(UUID().uuidString)"
        let token = "token-\(UUID().uuidString)"
        let service = "service-\(UUID().uuidString)"
        let account = "account-\(UUID().uuidString)"
        let secrets = [passphrase, newPassphrase, token, service, account]

        let credential = KeychainCredential.passphrase(passphrase, strength: .minimum)
        let store = try KeychainStore(fileURL: url, credential: credential)
        let keychain = Keychain(service: service, store: store)
        try keychain.set(token, forKey: account)
        var texts: [String] = []
        do {
            _ = try KeychainStore(fileURL: url, credential: .passphrase("wrong \(passphrase)", strength: .minimum))
            Issue.record("a wrong passphrase opened the keychain")
        } catch {
            texts += [String(describing: error), String(reflecting: error), error.localizedDescription]
        }
        let locked = KeychainStore.inMemory(credential: credential)
        locked.lock()
        do {
            try Keychain(service: service, store: locked).accessibility(.whenUnlocked).set(token, forKey: account)
        } catch {
            texts += [String(describing: error), String(reflecting: error)]
        }
        try store.changeCredential(to: .passphrase(newPassphrase, strength: .minimum))
        for value in [
            credential, KeychainCredential.passphrase(newPassphrase), KeychainCredential.key(Array(token.utf8)),
        ]
            as [KeychainCredential]
        {
            texts += [String(describing: value), String(reflecting: value)]
            var dumped = ""
            dump(value, to: &dumped)
            texts.append(dumped)
        }
        for value in [store, locked] {
            var dumped = ""
            dump(value, to: &dumped)
            texts += [dumped, String(describing: value)]
        }
        var dumpedKeychain = ""
        dump(keychain, to: &dumpedKeychain)
        texts.append(dumpedKeychain.replacingOccurrences(of: service, with: "<service>"))  // the service is public

        for secret in secrets {
            for text in texts {
                #expect(!text.contains(secret), "a description or dump shows a secret: \(text.prefix(300))")
            }
        }
        var files = 0
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
            let bytes = try [UInt8](Data(contentsOf: folder.appendingPathComponent(name)))
            files += 1
            for secret in secrets {
                #expect(!Self.contains(bytes, secret), "\(name) holds a secret in plaintext")
            }
        }
        Reliability.report(
            "secrets: passphrase (old and new), token, service and account names absent from \(files) keychain files "
                + "and \(texts.count) error descriptions, credential/store descriptions and dumps")
    }

    @Test func dumpsOfItemsMatchesAndUpdatesShowTheSecretsSizeNotItsBytes() throws {
        // Data's own mirror lists a small value's bytes, one per line ("- 201").
        let secret = Data((201...220).map { UInt8($0) })
        var raw = ""
        dump(secret, to: &raw)
        #expect(raw.contains("- 201"), "Data's mirror no longer lists bytes; this test shows nothing")

        let store = KeychainStore.inMemory(credential: .key(Array(repeating: 7, count: 32)))
        let item = KeychainItem.genericPassword(service: "svc", account: "acct", data: secret)
        try store.add(item)
        var query = KeychainQuery.genericPassword(service: "svc", account: "acct")
        query.returnData = true
        query.returnAttributes = true
        let match = try #require(try store.copyMatching(query).first)
        #expect(match.data == secret)
        let update = KeychainUpdate(data: secret)
        for value in [item, match, update] as [Any] {
            var dumped = ""
            dump(value, to: &dumped)
            #expect(!dumped.contains("- 201") && !dumped.contains("- 220"), "\(dumped)")
            #expect(dumped.contains("20 bytes"), "\(dumped)")
            #expect(!String(describing: value).contains("201"), "\(value)")
        }
        var dumped = ""
        dump(item, to: &dumped)
        #expect(dumped.contains("svc") && dumped.contains("acct"), "attributes are not secrets: \(dumped)")
    }
}
