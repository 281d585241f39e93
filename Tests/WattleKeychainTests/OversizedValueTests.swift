import CSQLite
import Foundation
import Testing
import WattleTesting

@testable import WattleKeychain

/// A value longer than SQLite accepts in one column, and the SQLite errors that are no duplicate.
@Suite struct OversizedValueTests {
    /// A keychain file whose connection accepts values of at most 4 KiB (SQLite's default is
    /// about 1 GB, too much to write in a test).
    static func keychainWithSmallLengthLimit() throws -> TemporaryKeychain {
        let temporary = try TemporaryKeychain()
        try temporary.store.withStorage { storage in
            let connection = try #require((storage as? SQLiteStorage)?.connection)
            sqlite3_limit(connection.handle, SQLITE_LIMIT_LENGTH, 4096)
        }
        return temporary
    }

    @Test(
        "setting a value longer than SQLite's length limit fails with dataTooLarge, not duplicateItem, and keeps the old value"
    )
    func setOverTheLengthLimitIsDataTooLarge() throws {
        let temporary = try Self.keychainWithSmallLengthLimit()
        let keychain = temporary.keychain(service: "svc")
        try keychain.set("small", forKey: "k")
        let error = keychainError { try keychain.set(Data(repeating: 0x61, count: 8192), forKey: "k") }
        #expect(error == .dataTooLarge)
        #expect(try keychain.string(forKey: "k") == "small")
        // The statement is left clean: a value that fits is stored next.
        try keychain.set("fits", forKey: "k")
        #expect(try keychain.string(forKey: "k") == "fits")
    }

    @Test("adding an item longer than SQLite's length limit fails with dataTooLarge and adds nothing")
    func addOverTheLengthLimitIsDataTooLarge() throws {
        let temporary = try Self.keychainWithSmallLengthLimit()
        let item = KeychainItem.genericPassword(service: "svc", account: "big", data: Data(repeating: 1, count: 8192))
        #expect(keychainError { try temporary.store.add(item) } == .dataTooLarge)
        let query = KeychainQuery.genericPassword(service: "svc", account: "big")
        #expect(keychainError { _ = try temporary.store.copyMatching(query) } == .itemNotFound)
    }

    @Test("only a primary-key or unique constraint is a duplicate item; a NULL where a value is needed is not")
    func onlyKeyConstraintsAreDuplicates() {
        #expect(SQLiteConnection.error(SQLITE_CONSTRAINT | (6 << 8)) == .duplicateItem)  // PRIMARYKEY
        #expect(SQLiteConnection.error(SQLITE_CONSTRAINT | (8 << 8)) == .duplicateItem)  // UNIQUE
        #expect(SQLiteConnection.error(SQLITE_CONSTRAINT | (5 << 8)) == .param)  // NOTNULL
        #expect(SQLiteConnection.error(SQLITE_TOOBIG) == .dataTooLarge)
    }

    @Test("dataTooLarge has Apple's errSecDataTooLarge number both ways and says what to do")
    func dataTooLargeHasApplesNumber() {
        #expect(KeychainError.dataTooLarge.status == -25302)
        #expect(KeychainError(status: -25302) == .dataTooLarge)
        #expect(KeychainError.dataTooLarge.description.contains("smaller"))
    }
}
