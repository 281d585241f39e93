#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Rows in one SQLite file: WAL, `synchronous=FULL`, a busy timeout, `BEGIN IMMEDIATE` for
/// writes, and every statement prepared once, when first used.
final class SQLiteStorage: RowStorage {
    let connection: SQLiteConnection
    /// Each statement prepared on first use: an open that only reads prepares two of them.
    private var statements = [SQLiteStatement?](repeating: nil, count: Query.allCases.count)
    private var inTransaction = false

    static let schema = """
        CREATE TABLE IF NOT EXISTS meta(name TEXT PRIMARY KEY, value BLOB NOT NULL) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS items(
            id BLOB PRIMARY KEY,
            class INTEGER NOT NULL,
            grp BLOB NOT NULL,
            protection INTEGER NOT NULL,
            attrs BLOB NOT NULL,
            secret BLOB NOT NULL
        ) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS items_grp ON items(grp);
        CREATE INDEX IF NOT EXISTS items_class ON items(class);
        PRAGMA user_version = 1;
        """

    /// Opens the file (created 0600 when missing), creating the schema when it is not there.
    init(path: String) throws {
        try KeychainFiles.createPrivateFile(path)
        // An empty file is a keychain being created; a file too short to hold SQLite's 100-byte
        // header was damaged (SQLite would take some of those for an empty database and a new
        // keychain would silently replace the old one).
        var info = stat()
        if stat(path, &info) == 0, info.st_size > 0, info.st_size < 100 { throw KeychainError.decode }
        let c = try SQLiteConnection(path: path)
        do {
            try Self.retryingBusy(c) {
                _ = try c.strings("PRAGMA journal_mode=WAL")
            }
        } catch KeychainError.notAvailable where c.lastFailureWasCannotOpen {
            // SQLite makes the `-wal` and `-shm` beside the file on every first open: a folder
            // it may not write in, or a directory in their place, stays so. (Too many open files
            // passes, so it is still "not available".)
            let code = c.systemErrno
            if code == EMFILE || code == ENFILE { throw KeychainError.notAvailable }
            throw KeychainFileError(path: path + "-wal", reason: .cannotCreate, errno: code == 0 ? nil : code)
        }
        try c.execute("PRAGMA synchronous=FULL")
        // What a write replaces or deletes is zeroed in its page (no extra I/O in this mode):
        // an old wrapped master key, or an old sealed value, is not left in the file.
        try c.execute("PRAGMA secure_delete=FAST")
        // The transaction that creates the schema sets the version: once it is there (or a later
        // one, never set back), an open takes no write lock, so it does not wait for another
        // process's writes. The header's statement, which the open needs next, is prepared here
        // to check: another program's database marked 1 without these tables gets the schema.
        let version = Int(try c.strings("PRAGMA user_version").first ?? "") ?? 0
        let selectMeta = version >= 1 ? try? c.prepare(Query.selectMeta.sql) : nil
        if selectMeta == nil {
            try Self.createSchema(c)
        }
        connection = c
        statements[Query.selectMeta.rawValue] = selectMeta
    }

    /// Creates what is missing of the schema and sets the version, in one write transaction.
    private static func createSchema(_ c: SQLiteConnection) throws {
        try retryingBusy(c) {
            do {
                try c.execute("BEGIN IMMEDIATE; \(Self.schema) COMMIT;")
            } catch {
                try? c.execute("ROLLBACK")
                throw error
            }
        }
    }

    /// The statements, by what they do.
    private enum Query: Int, CaseIterable {
        case selectByID, selectByIDs, selectByClass, selectByGroup, selectByGroups, selectAll
        case insertRow, upsertRow, deleteRow, selectMeta, upsertMeta
        case begin, commit, rollback

        var sql: String {
            let columns = "id, class, grp, protection, attrs, secret"
            switch self {
            case .selectByID: return "SELECT \(columns) FROM items WHERE id = ?1"
            case .selectByIDs: return "SELECT \(columns) FROM items WHERE id IN (?1, ?2)"
            case .selectByClass: return "SELECT \(columns) FROM items WHERE class = ?1"
            case .selectByGroup: return "SELECT \(columns) FROM items WHERE grp = ?1 AND class = ?2"
            case .selectByGroups: return "SELECT \(columns) FROM items WHERE grp IN (?1, ?2) AND class = ?3"
            case .selectAll: return "SELECT \(columns) FROM items"
            case .insertRow: return "INSERT INTO items(\(columns)) VALUES (?1, ?2, ?3, ?4, ?5, ?6)"
            case .upsertRow:
                return """
                    INSERT INTO items(\(columns)) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                    ON CONFLICT(id) DO UPDATE SET class = ?2, grp = ?3, protection = ?4, attrs = ?5, secret = ?6
                    """
            case .deleteRow: return "DELETE FROM items WHERE id = ?1"
            case .selectMeta: return "SELECT name, value FROM meta"
            case .upsertMeta: return "INSERT OR REPLACE INTO meta(name, value) VALUES (?1, ?2)"
            case .begin: return "BEGIN IMMEDIATE"
            case .commit: return "COMMIT"
            case .rollback: return "ROLLBACK"
            }
        }
    }

    /// The prepared statement for `query`, preparing it on first use.
    private func statement(_ query: Query) throws(KeychainError) -> SQLiteStatement {
        if let statement = statements[query.rawValue] { return statement }
        let statement = try connection.prepare(query.sql)
        statements[query.rawValue] = statement
        return statement
    }

    /// Retries work that SQLite may refuse with `SQLITE_BUSY` without calling the busy handler
    /// (changing the journal mode, first creation of the schema by racing processes), every
    /// 10 ms for at most 30 s in all: an attempt can itself wait out the busy timeout, and a
    /// process stopped while it holds the lock must give an error, not hours of retries.
    static func retryingBusy(_ connection: SQLiteConnection, _ body: () throws -> Void) throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while true {
            do {
                try body()
                return
            } catch KeychainError.notAvailable
                where ContinuousClock.now < deadline && !connection.lastFailureWasCannotOpen
            {
                // (A file SQLite cannot open is no busy lock: not retried.)
                usleep(10_000)
            }
        }
    }

    /// Thrown by ``write(_:)`` when another connection holds the write lock: nothing was done,
    /// and the whole operation may be tried again.
    struct WriteLockBusy: Error {}

    func write<T>(_ body: () throws -> T) throws -> T {
        if inTransaction { return try body() }
        // All three before the transaction begins, so that it can always end.
        let (begin, commit, rollback) = (try statement(.begin), try statement(.commit), try statement(.rollback))
        // Not waiting here for another connection's write: the store waits without its lock
        // held, so that its reads and `lock()` go on meanwhile (``KeychainStore``).
        guard try begin.runUnlessBusy(on: connection) else { throw WriteLockBusy() }
        inTransaction = true
        defer { inTransaction = false }
        do {
            let result = try body()
            try commit.run()
            return result
        } catch {
            try? rollback.run()
            throw error
        }
    }

    func readMeta() throws -> [String: [UInt8]] {
        let selectMeta = try statement(.selectMeta)
        defer { selectMeta.reset() }
        var entries: [String: [UInt8]] = [:]
        while try selectMeta.step() {
            entries[selectMeta.text(0) ?? ""] = selectMeta.blob(1)
        }
        return entries
    }

    func writeMeta(_ entries: [String: [UInt8]]) throws {
        let upsertMeta = try statement(.upsertMeta)
        for (name, value) in entries {
            try upsertMeta.bind(1, name)
            try upsertMeta.bind(2, value)
            try upsertMeta.run()
        }
    }

    func row(id: [UInt8]) throws -> StoredRow? {
        let selectByID = try statement(.selectByID)
        return try id.withUnsafeBytes { id in
            defer { selectByID.reset() }
            try selectByID.bind(1, borrowing: id)
            return try selectByID.step() ? Self.row(from: selectByID) : nil
        }
    }

    /// One statement, so one read of one snapshot: a writer changing an item from one id to
    /// the other (its synchronizable flag) between two lookups cannot hide it or show it twice.
    func rows(ids: [[UInt8]]) throws -> [StoredRow] {
        switch ids.count {
        case 0: return []
        case 1: return try row(id: ids[0]).map { [$0] } ?? []
        default:
            precondition(ids.count == 2, "at most two ids (synchronizable any)")
            let selectByIDs = try statement(.selectByIDs)
            try selectByIDs.bind(1, ids[0])
            try selectByIDs.bind(2, ids[1])
            // In the order of `ids`, as the memory store gives them (SQLite's is the key's).
            let rows = try collect(selectByIDs)
            return ids.compactMap { id in rows.first { $0.id == id } }
        }
    }

    func rows(itemClass: UInt8, groups: [[UInt8]]?) throws -> [StoredRow] {
        let statement: SQLiteStatement
        switch groups {
        case nil:
            statement = try self.statement(.selectByClass)
            try statement.bind(1, Int(itemClass))
        case let groups? where groups.count == 1:
            statement = try self.statement(.selectByGroup)
            try statement.bind(1, groups[0])
            try statement.bind(2, Int(itemClass))
        case let groups?:
            precondition(groups.count == 2, "at most two groups (synchronizable any)")
            statement = try self.statement(.selectByGroups)
            try statement.bind(1, groups[0])
            try statement.bind(2, groups[1])
            try statement.bind(3, Int(itemClass))
        }
        return try collect(statement)
    }

    func allRows() throws -> [StoredRow] { try collect(statement(.selectAll)) }

    /// Copies the write-ahead log into the file and truncates it, so no earlier version of a
    /// page (an old wrapped master key) stays in the `-wal` file. Best effort: another
    /// process reading the keychain at that moment keeps the log, until a later checkpoint.
    func checkpoint() {
        _ = try? connection.strings("PRAGMA wal_checkpoint(TRUNCATE)")
    }

    private func collect(_ statement: SQLiteStatement) throws -> [StoredRow] {
        defer { statement.reset() }
        var result: [StoredRow] = []
        while try statement.step() { result.append(Self.row(from: statement)) }
        return result
    }

    func insert(_ row: StoredRow) throws { try run(statement(.insertRow), row) }

    func upsert(_ row: StoredRow) throws { try run(statement(.upsertRow), row) }

    /// Binds the row's blobs without copying them: `run()` resets the statement and clears its
    /// bindings before the buffers go out of scope.
    private func run(_ statement: SQLiteStatement, _ row: StoredRow) throws {
        try row.id.withUnsafeBytes { id in
            try row.group.withUnsafeBytes { group in
                try row.attributes.withUnsafeBytes { attributes in
                    try row.secret.withUnsafeBytes { secret in
                        try statement.bind(1, borrowing: id)
                        try statement.bind(2, Int(row.itemClass))
                        try statement.bind(3, borrowing: group)
                        try statement.bind(4, Int(row.protection))
                        try statement.bind(5, borrowing: attributes)
                        try statement.bind(6, borrowing: secret)
                        try statement.run()
                    }
                }
            }
        }
    }

    @discardableResult
    func delete(id: [UInt8]) throws -> Bool {
        let deleteRow = try statement(.deleteRow)
        try deleteRow.bind(1, id)
        try deleteRow.run()
        return sqlite3Changes() > 0
    }

    private func sqlite3Changes() -> Int { connection.changes }

    private static func row(from statement: SQLiteStatement) -> StoredRow {
        StoredRow(
            id: statement.blob(0), itemClass: UInt8(truncatingIfNeeded: statement.int(1)), group: statement.blob(2),
            protection: UInt8(truncatingIfNeeded: statement.int(3)), attributes: statement.blob(4),
            secret: statement.blob(5))
    }
}
