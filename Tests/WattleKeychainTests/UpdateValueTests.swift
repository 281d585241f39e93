import Foundation
import Testing
import WattleTesting

@testable import WattleKeychain

/// `Keychain.updateValue(forKey:_:)`: a read and a write in one transaction.
@Suite struct UpdateValueTests {
    struct Refused: Error {}

    @Test(
        "the change sees the stored value (nil when none); what it returns is stored, nil removes the item",
        arguments: StoreKind.allCases)
    func readsThenWrites(kind: StoreKind) throws {
        let keychain = try kind.make().keychain()
        var seen: [Data?] = []
        try keychain.updateValue(forKey: "k") {
            seen.append($0); return Data("one")
        }
        try keychain.updateValue(forKey: "k") {
            seen.append($0); return $0.map { $0 + Data(" two") }
        }
        #expect(seen == [nil, Data("one")])
        #expect(try keychain.data(forKey: "k") == Data("one two"))
        try keychain.updateValue(forKey: "k") { _ in nil }
        #expect(try !keychain.hasValue(forKey: "k"))
    }

    @Test(
        "a change that throws writes nothing; a damaged item throws decode without calling the change",
        arguments: StoreKind.allCases)
    func failures(kind: StoreKind) throws {
        let fixture = try kind.make()
        let keychain = fixture.keychain()
        try keychain.set(Data("kept"), forKey: "k")
        #expect(throws: Refused.self) {
            try keychain.updateValue(forKey: "k") { _ in throw Refused() }
        }
        #expect(try keychain.data(forKey: "k") == Data("kept"))
        var row = try #require(try fixture.store.withStorage { try $0.allRows() }.first)
        row.secret[row.secret.count - 1] ^= 1
        try fixture.store.withStorage { storage in try storage.write { try storage.upsert(row) } }
        var called = false
        #expect(
            keychainError {
                try keychain.updateValue(forKey: "k") { _ in
                    called = true; return nil
                }
            } == .decode)
        #expect(!called)
        #expect(try keychain.hasValue(forKey: "k"))
    }

    @Test("two connections to one file adding to one counter at once lose no increment")
    func atomicAcrossConnections() async throws {
        let temporary = try TemporaryKeychain()
        let stores = [temporary.store, try temporary.reopen()]
        let increments = 200
        try await withThrowingTaskGroup(of: Void.self) { group in
            for store in stores {
                group.addTask {
                    let keychain = Keychain(service: "svc", store: store)
                    for _ in 0..<increments {
                        try keychain.updateValue(forKey: "counter") { data in
                            let count = data.flatMap { Int(String(decoding: $0, as: UTF8.self)) } ?? 0
                            return Data(String(count + 1).utf8)
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let final = try Keychain(service: "svc", store: try temporary.reopen()).data(forKey: "counter")
        #expect(final.map { String(decoding: $0, as: UTF8.self) } == String(2 * increments))
    }
}
