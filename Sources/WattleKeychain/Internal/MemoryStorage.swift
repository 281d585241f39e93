/// Rows in memory, with the same transaction semantics as the file: a write that throws
/// leaves nothing behind (an undo log restores what it changed).
final class MemoryStorage: RowStorage {
    private var rowsByID: [[UInt8]: StoredRow] = [:]
    private var meta: [String: [UInt8]] = [:]
    private var undo: [(id: [UInt8], previous: StoredRow?)]?
    private var metaBefore: [String: [UInt8]]?

    init() {}

    func write<T>(_ body: () throws -> T) throws -> T {
        if undo != nil { return try body() }
        undo = []
        metaBefore = meta
        defer {
            undo = nil
            metaBefore = nil
        }
        do {
            return try body()
        } catch {
            for entry in (undo ?? []).reversed() { rowsByID[entry.id] = entry.previous }
            meta = metaBefore ?? meta
            throw error
        }
    }

    func readMeta() throws -> [String: [UInt8]] { meta }

    func writeMeta(_ entries: [String: [UInt8]]) throws {
        meta.merge(entries) { _, new in new }
    }

    func row(id: [UInt8]) throws -> StoredRow? { rowsByID[id] }

    func rows(ids: [[UInt8]]) throws -> [StoredRow] {
        precondition(ids.count <= 2, "at most two ids (synchronizable any)")
        return ids.compactMap { rowsByID[$0] }
    }

    func rows(itemClass: UInt8, groups: [[UInt8]]?) throws -> [StoredRow] {
        rowsByID.values.filter { row in
            row.itemClass == itemClass && (groups.map { $0.contains(row.group) } ?? true)
        }
    }

    func allRows() throws -> [StoredRow] { Array(rowsByID.values) }

    func checkpoint() {}

    func insert(_ row: StoredRow) throws {
        guard rowsByID[row.id] == nil else { throw KeychainError.duplicateItem }
        set(row.id, row)
    }

    func upsert(_ row: StoredRow) throws { set(row.id, row) }

    @discardableResult
    func delete(id: [UInt8]) throws -> Bool {
        guard rowsByID[id] != nil else { return false }
        set(id, nil)
        return true
    }

    private func set(_ id: [UInt8], _ row: StoredRow?) {
        undo?.append((id, rowsByID[id]))
        rowsByID[id] = row
    }
}
