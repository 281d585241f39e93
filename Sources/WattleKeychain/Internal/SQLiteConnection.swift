internal import CSQLite

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One SQLite connection, used by one thread at a time: every use is under the store's lock, so
/// it is opened `SQLITE_OPEN_NOMUTEX` (SQLite's own per-connection mutex would be taken and
/// released around every call for nothing; SQLite's global mutexes stay on).
final class SQLiteConnection {
    let handle: OpaquePointer
    let path: String
    /// The extended result code of the last `execute`, `strings` or `prepare` that failed: it
    /// tells a file SQLite cannot open (`SQLITE_CANTOPEN`, which stays so) from a busy one
    /// (both are ``KeychainError/notAvailable``).
    private(set) var lastFailure: Int32 = SQLITE_OK

    /// Whether the last failure was a file SQLite could not open (its `-wal` or `-shm`, say).
    var lastFailureWasCannotOpen: Bool { lastFailure & 0xff == SQLITE_CANTOPEN }
    /// The `errno` of SQLite's last failed system call on this connection.
    var systemErrno: Int32 { sqlite3_system_errno(handle) }

    /// How long a statement waits for a lock another connection holds before it fails with
    /// `SQLITE_BUSY`: 30 s, so that a process stopped while it holds one gives an error.
    static let defaultBusyTimeoutMilliseconds: Int32 = 30_000
    /// This connection's busy timeout.
    let busyTimeoutMilliseconds: Int32

    /// Opens (creating when asked) a database with a busy timeout.
    init(path: String, create: Bool = true, busyTimeoutMilliseconds: Int32 = defaultBusyTimeoutMilliseconds)
        throws(KeychainError)
    {
        var db: OpaquePointer?
        var flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_EXRESCODE
        if create { flags |= SQLITE_OPEN_CREATE }
        let status = sqlite3_open_v2(path, &db, flags, nil)
        guard status == SQLITE_OK, let db else {
            if let db { sqlite3_close_v2(db) }
            throw Self.error(status)
        }
        handle = db
        self.path = path
        self.busyTimeoutMilliseconds = busyTimeoutMilliseconds
        sqlite3_busy_timeout(db, busyTimeoutMilliseconds)
        sqlite3_extended_result_codes(db, 1)
    }

    deinit { sqlite3_close_v2(handle) }

    /// Runs statements that return no rows needed by the caller.
    func execute(_ sql: String) throws(KeychainError) {
        let status = sqlite3_exec(handle, sql, nil, nil, nil)
        guard status == SQLITE_OK else {
            lastFailure = sqlite3_extended_errcode(handle)
            throw Self.error(status)
        }
    }

    /// Runs a statement and returns the first column of each row as text.
    func strings(_ sql: String) throws(KeychainError) -> [String] {
        let statement = try prepare(sql)
        var result: [String] = []
        do {
            while try statement.step() {
                result.append(statement.text(0) ?? "")
            }
        } catch {
            lastFailure = sqlite3_extended_errcode(handle)
            throw error
        }
        return result
    }

    func prepare(_ sql: String) throws(KeychainError) -> SQLiteStatement {
        var raw: OpaquePointer?
        let status = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &raw, nil)
        guard status == SQLITE_OK, let raw else {
            lastFailure = sqlite3_extended_errcode(handle)
            throw Self.error(status)
        }
        return SQLiteStatement(raw)
    }

    /// `SQLITE_CONSTRAINT_PRIMARYKEY` and `SQLITE_CONSTRAINT_UNIQUE`, extended result codes
    /// (macros Swift does not import).
    static let constraintPrimaryKey = SQLITE_CONSTRAINT | (6 << 8)
    static let constraintUnique = SQLITE_CONSTRAINT | (8 << 8)

    /// Maps an SQLite result code (an extended one when SQLite gives it) to the keychain error a
    /// caller can act on.
    static func error(_ status: Int32) -> KeychainError {
        switch status & 0xff {
        case SQLITE_FULL: .diskFull
        case SQLITE_IOERR: .io
        case SQLITE_READONLY: .readOnly
        case SQLITE_NOMEM: .allocate
        case SQLITE_CORRUPT, SQLITE_NOTADB: .decode
        case SQLITE_BUSY, SQLITE_LOCKED, SQLITE_CANTOPEN: .notAvailable
        // Only a row whose key exists is a duplicate. Another constraint (a NULL where the
        // schema needs a value) is a value the keychain should never have passed.
        case SQLITE_CONSTRAINT:
            status == constraintPrimaryKey || status == constraintUnique ? .duplicateItem : .param
        // A value, or a whole row, longer than SQLite's limit (`SQLITE_LIMIT_LENGTH`).
        case SQLITE_TOOBIG: .dataTooLarge
        case SQLITE_MISUSE, SQLITE_RANGE: .param
        default: .io
        }
    }
}

/// A prepared statement, reset after every use.
final class SQLiteStatement {
    let handle: OpaquePointer

    init(_ handle: OpaquePointer) { self.handle = handle }

    deinit { sqlite3_finalize(handle) }

    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    /// Binds a copy of `bytes`.
    ///
    /// - Throws: ``KeychainError/dataTooLarge`` when they exceed SQLite's length limit (the
    ///   parameter would stay NULL), or the error of another failed bind.
    func bind(_ index: Int32, _ bytes: [UInt8]) throws(KeychainError) {
        let status = bytes.withUnsafeBytes { buffer in
            sqlite3_bind_blob64(
                handle, index, buffer.baseAddress ?? UnsafeRawPointer(bitPattern: 1), sqlite3_uint64(buffer.count),
                Self.transient)
        }
        try check(status)
    }

    /// Binds `buffer` without copying it (`SQLITE_STATIC`): the caller keeps it valid until the
    /// statement is reset, which ``run()`` and ``reset()`` do (and clear the bindings).
    ///
    /// - Throws: as the bind of a copy does.
    func bind(_ index: Int32, borrowing buffer: UnsafeRawBufferPointer) throws(KeychainError) {
        try check(
            sqlite3_bind_blob64(
                handle, index, buffer.baseAddress ?? UnsafeRawPointer(bitPattern: 1), sqlite3_uint64(buffer.count), nil)
        )
    }

    func bind(_ index: Int32, _ value: Int) throws(KeychainError) {
        try check(sqlite3_bind_int64(handle, index, Int64(value)))
    }

    func bind(_ index: Int32, _ text: String) throws(KeychainError) {
        try check(sqlite3_bind_text(handle, index, text, -1, Self.transient))
    }

    /// Throws the error for a bind that failed. The bindings made so far are cleared, so that a
    /// parameter left as it was is never run with the others (the statement would see NULL
    /// there, or an earlier call's value).
    private func check(_ status: Int32) throws(KeychainError) {
        guard status != SQLITE_OK else { return }
        reset()
        throw SQLiteConnection.error(status)
    }

    /// Steps once; true when a row is available.
    func step() throws(KeychainError) -> Bool {
        let status = sqlite3_step(handle)
        switch status {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw SQLiteConnection.error(status)
        }
    }

    /// Runs to completion (for writes), then resets.
    func run() throws(KeychainError) {
        defer { reset() }
        while try step() {}
    }

    /// Runs a statement that takes a lock (`BEGIN IMMEDIATE`) once, without waiting: false when
    /// another connection holds the lock (`SQLITE_BUSY`), whatever the connection's busy timeout.
    func runUnlessBusy(on connection: SQLiteConnection) throws(KeychainError) -> Bool {
        defer { reset() }
        sqlite3_busy_timeout(connection.handle, 0)
        defer { sqlite3_busy_timeout(connection.handle, connection.busyTimeoutMilliseconds) }
        let status = sqlite3_step(handle)
        if status & 0xff == SQLITE_BUSY { return false }
        guard status == SQLITE_DONE || status == SQLITE_ROW else { throw SQLiteConnection.error(status) }
        return true
    }

    func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    func blob(_ column: Int32) -> [UInt8] {
        let count = Int(sqlite3_column_bytes(handle, column))
        guard count > 0, let pointer = sqlite3_column_blob(handle, column) else { return [] }
        return [UInt8](UnsafeRawBufferPointer(start: pointer, count: count))
    }

    func int(_ column: Int32) -> Int { Int(sqlite3_column_int64(handle, column)) }

    func text(_ column: Int32) -> String? {
        guard let pointer = sqlite3_column_text(handle, column) else { return nil }
        return String(cString: pointer)
    }
}

extension SQLiteConnection {
    /// Rows changed by the last statement.
    var changes: Int { Int(sqlite3_changes(handle)) }
}
