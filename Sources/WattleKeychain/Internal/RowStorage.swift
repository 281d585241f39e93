/// One stored item: lookup hashes, class, protection class, and the two sealed blobs.
struct StoredRow: Hashable, Sendable {
    /// Keyed hash of the class and identity attributes (primary key).
    var id: [UInt8]
    var itemClass: UInt8
    /// Keyed hash of the class, the group attribute (``AttributeCoding/groupTag(_:)``: the
    /// service of a generic password, the server of an internet password, the issuer of a
    /// certificate or identity, the application tag of a key) and the synchronizable flag
    /// (indexed).
    var group: [UInt8]
    /// Which class key sealed the secret (``KeyRing/Protection``).
    var protection: UInt8
    /// Attributes sealed with the attributes key.
    var attributes: [UInt8]
    /// The padded secret sealed with the class key.
    var secret: [UInt8]

    /// Whether the two hashes have their size. The associated data holds them back to back, so
    /// a byte moved from the end of `id` to the front of `group` would otherwise leave it, and
    /// the blobs' authentication, unchanged: a second row authenticating as the same item.
    var hasHashSizes: Bool { id.count == Sodium.hashBytes && group.count == Sodium.hashBytes }
}

/// Where rows and the header live. Used only under the store's lock, so implementations need
/// no locking of their own. Both implementations (SQLite file, memory) hold exactly the same
/// rows; all semantics live above this protocol.
protocol RowStorage: AnyObject {
    /// Runs `body` in one write transaction (`BEGIN IMMEDIATE`); rolls back when it throws.
    func write<T>(_ body: () throws -> T) throws -> T
    func readMeta() throws -> [String: [UInt8]]
    func writeMeta(_ entries: [String: [UInt8]]) throws
    func row(id: [UInt8]) throws -> StoredRow?
    /// The rows with these ids (at most two), in their order, read at once: as one statement
    /// of the file, so that a writer that commits meanwhile is seen wholly or not at all.
    func rows(ids: [[UInt8]]) throws -> [StoredRow]
    /// Rows of a class, optionally only those in some groups.
    func rows(itemClass: UInt8, groups: [[UInt8]]?) throws -> [StoredRow]
    /// Inserts a row; ``KeychainError/duplicateItem`` when its id exists.
    func insert(_ row: StoredRow) throws
    /// Inserts or replaces the row with the same id.
    func upsert(_ row: StoredRow) throws
    /// Deletes a row; returns whether it existed.
    @discardableResult func delete(id: [UInt8]) throws -> Bool
    /// Every row (tests and maintenance).
    func allRows() throws -> [StoredRow]
    /// Leaves no earlier version of a written page in a journal (after a credential change).
    func checkpoint()
}
