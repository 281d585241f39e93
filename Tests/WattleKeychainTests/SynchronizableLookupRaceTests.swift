import CSQLite
import Foundation
import Testing
import WattleTesting

@testable import WattleKeychain

/// Runs `body` each time SQLite starts running a statement, on a connection it is installed on,
/// whose SQL holds `marker` (`sqlite3_trace_v2` with `SQLITE_TRACE_STMT`, called before the
/// statement takes its read lock).
private final class StatementStartHook {
    let marker: String
    let body: () -> Void

    init(marker: String, body: @escaping () -> Void) {
        self.marker = marker
        self.body = body
    }

    static let callback:
        @convention(c) (UInt32, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Int32 =
            { mask, context, _, sql in
                guard mask == UInt32(SQLITE_TRACE_STMT), let context, let sql else { return 0 }
                let hook = Unmanaged<StatementStartHook>.fromOpaque(context).takeUnretainedValue()
                if String(cString: sql.assumingMemoryBound(to: CChar.self)).contains(hook.marker) { hook.body() }
                return 0
            }

    /// Runs `work` with the hook installed on `store`'s connection.
    func installed<T>(on store: KeychainStore, _ work: () throws -> T) throws -> T {
        let context = Unmanaged.passUnretained(self).toOpaque()
        try store.withStorage { storage in
            let connection = try #require((storage as? SQLiteStorage)?.connection)
            sqlite3_trace_v2(connection.handle, UInt32(SQLITE_TRACE_STMT), Self.callback, context)
        }
        defer {
            _ = try? store.withStorage { storage in
                if let connection = (storage as? SQLiteStorage)?.connection {
                    sqlite3_trace_v2(connection.handle, 0, nil, nil)
                }
            }
        }
        return try withExtendedLifetime(self) { try work() }
    }
}

/// A lookup by identity with synchronizable `.any` reads both ids at once.
@Suite struct SynchronizableLookupRaceTests {
    @Test("a lookup with synchronizable any sees the item exactly once while another process flips its flag")
    func anyLookupIsOneConsistentRead() throws {
        let temporary = try TemporaryKeychain()
        let reader = temporary.store
        // Another connection to the file, as another process has.
        let writer = try temporary.reopen()
        try writer.add(WholeIdentity.item)
        let query = WholeIdentity.anyQuery
        _ = try reader.copyMatching(query)  // prepares the reader's statements

        // The writer flips the flag whenever the reader starts a lookup by id: between two
        // lookups, one per flag, the item would move from the one not yet read to the one read.
        var synchronizable = false
        var flips = 0
        let hook = StatementStartHook(marker: "FROM items WHERE id") {
            synchronizable.toggle()
            do {
                try writer.update(query, with: KeychainUpdate(synchronizable: synchronizable))
                flips += 1
            } catch {
                Issue.record("the writer's flip failed: \(error)")
            }
        }
        // Before the one read: itemNotFound (the item moved away twice) or two matches.
        let matches = try hook.installed(on: reader) { try reader.copyMatching(query) }
        #expect(flips >= 1)
        #expect(matches.count == 1)
        #expect(matches.first?.synchronizable == synchronizable)
    }
}
