#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The SecItem-style primitives.
extension KeychainEngine {
    /// Rows a query may match, and what the selection already guarantees.
    struct Selection {
        var rows: [StoredRow]
        /// Attribute tags whose equality the lookup guarantees.
        var covered: Set<UInt8>
        /// Whether the lookup already matched the synchronizable flag.
        var synchronizableCovered: Bool
        /// Whether the rows are those of one identity or one value of the indexed attribute
        /// (``AttributeCoding/groupTag(_:)``: service, server, issuer or application tag), by
        /// hash: not every row of the class.
        var narrowed: Bool

        /// The error when nothing matched: `decode` when a damaged row of the identity or
        /// service asked for was skipped (it may have been the one), or a row that matched had
        /// a damaged secret, else `itemNotFound`. A row whose attributes are damaged, found by
        /// a scan of the whole class, belongs to no one the caller named (Apple answers
        /// `errSecItemNotFound` there too); one that matched does (`itemNotFound` would have
        /// the caller add it again, and fail with `duplicateItem`).
        func nothingMatched(damaged: Bool, matchedDamaged: Bool) -> KeychainError {
            matchedDamaged || (damaged && narrowed) ? .decode : .itemNotFound
        }
    }

    func select(_ query: KeychainQuery) throws -> Selection {
        let itemClass = query.itemClass
        let set = AttributeCoding.setTags(query.attributes)
        let flags = query.synchronizable.flags
        let identity = AttributeCoding.identityTags(itemClass)
        if identity.allSatisfy(set.contains) {
            // Both ids of `.any` in one read: two lookups would let a writer that flips the
            // item's flag between them hide it or show it twice.
            let rows = try storage.rows(
                ids: flags.map { identityHash(itemClass, query.attributes, synchronizable: $0) })
            return Selection(rows: rows, covered: Set(identity), synchronizableCovered: true, narrowed: true)
        }
        let groupTag = AttributeCoding.groupTag(itemClass)
        if set.contains(groupTag) {
            let groups = flags.map { groupHash(itemClass, query.attributes, synchronizable: $0) }
            let rows = try storage.rows(itemClass: itemClass.rawValue, groups: groups)
            return Selection(rows: rows, covered: [groupTag], synchronizableCovered: true, narrowed: true)
        }
        let rows = try storage.rows(itemClass: itemClass.rawValue, groups: nil)
        return Selection(
            rows: rows, covered: [], synchronizableCovered: query.synchronizable == .any, narrowed: false)
    }

    /// Whether matching needs the rows' attributes opened.
    func needsAttributes(_ query: KeychainQuery, _ selection: Selection) -> Bool {
        !AttributeCoding.setTags(query.attributes).subtracting(selection.covered).isEmpty
            || query.accessibility != nil || !selection.synchronizableCovered
    }

    func matches(_ decoded: AttributeCoding.Decoded, _ query: KeychainQuery) -> Bool {
        guard query.synchronizable.flags.contains(decoded.synchronizable) else { return false }
        if let accessibility = query.accessibility, accessibility != decoded.accessibility { return false }
        return AttributeCoding.matches(decoded.attributes, filter: query.attributes)
    }

    /// Adds an item; `duplicateItem` when one with the same identity exists.
    func add(_ item: KeychainItem) throws {
        var attributes = item.attributes
        AttributeCoding.normalize(&attributes, for: item.itemClass)
        let now = Date()
        attributes.creationDate = now
        attributes.modificationDate = now
        let row = try makeRow(
            item.itemClass, attributes: attributes, accessibility: item.accessibility,
            synchronizable: item.synchronizable, secret: item.data)
        try storage.write { try storage.insert(row) }
    }

    /// Finds items; `itemNotFound` when none matches. A damaged candidate is skipped
    /// (``skippingDamaged(_:_:)``; ``Selection/nothingMatched(damaged:)`` when nothing else
    /// matched).
    func copyMatching(_ query: KeychainQuery) throws -> [KeychainMatch] {
        let selection = try select(query)
        let checkAttributes = needsAttributes(query, selection)
        var results: [KeychainMatch] = []
        var damaged = false
        // A row that matched the query but whose secret is damaged.
        var matchedDamaged = false
        for row in selection.rows {
            var match = KeychainMatch(itemClass: query.itemClass)
            if checkAttributes || query.returnAttributes {
                guard let decoded = try skippingDamaged(&damaged, { try openAttributes(row) }), matches(decoded, query)
                else { continue }
                if query.returnAttributes {
                    match.attributes = decoded.attributes
                    match.accessibility = decoded.accessibility
                    match.synchronizable = decoded.synchronizable
                }
            }
            if query.returnData {
                guard let data = try skippingDamaged(&matchedDamaged, { try openSecret(row) }) else { continue }
                match.data = data
            }
            results.append(match)
            if query.matchLimit == .one { break }
        }
        guard !results.isEmpty else {
            throw selection.nothingMatched(damaged: damaged, matchedDamaged: matchedDamaged)
        }
        return results
    }

    /// Changes every matching item in one transaction; `itemNotFound` when none matches,
    /// `duplicateItem` (and no change) when a new identity collides, `interactionNotAllowed`
    /// (and no change) for a matching `whenUnlocked` item while locked.
    func update(_ query: KeychainQuery, with change: KeychainUpdate) throws {
        try storage.write {
            let selection = try select(query)
            var found = false
            var damaged = false
            var matchedDamaged = false
            for row in selection.rows {
                guard let decoded = try skippingDamaged(&damaged, { try openAttributes(row) }),
                    matches(decoded, query)
                else { continue }
                // As on Apple platforms: an item that needs the unlocked keychain is not changed
                // while locked, not even given a new secret or a weaker accessibility.
                guard !isLocked || row.protection != KeyRing.Protection.whenUnlocked.rawValue else {
                    throw KeychainError.interactionNotAllowed
                }
                // Re-sealed with the secret it has, unless given a new one: one whose secret is
                // damaged is skipped (a new secret replaces it). The plaintext opened for that
                // is wiped once sealed again.
                guard var secret = try change.data ?? skippingDamaged(&matchedDamaged, { try openSecret(row) }) else {
                    continue
                }
                defer { if change.data == nil { Sodium.wipe(&secret) } }
                found = true
                var attributes = decoded.attributes
                for field in AttributeCoding.fields {
                    if let bytes = field.get(change.attributes) { _ = field.set(&attributes, bytes) }
                }
                AttributeCoding.normalize(&attributes, for: query.itemClass)
                attributes.creationDate = decoded.attributes.creationDate
                attributes.modificationDate = Date()
                let updated = try makeRow(
                    query.itemClass, attributes: attributes,
                    accessibility: change.accessibility ?? decoded.accessibility,
                    synchronizable: change.synchronizable ?? decoded.synchronizable, secret: secret)
                if updated.id == row.id {
                    try storage.upsert(updated)
                } else {
                    try storage.delete(id: row.id)
                    try storage.insert(updated)
                }
            }
            guard found else { throw selection.nothingMatched(damaged: damaged, matchedDamaged: matchedDamaged) }
        }
    }

    /// Deletes every matching item in one transaction; `itemNotFound` when none matches. A
    /// query that needs attributes opened skips a damaged candidate (it cannot tell whether it
    /// matches); a query the hashes answer deletes it unopened.
    func delete(_ query: KeychainQuery) throws {
        try storage.write {
            let selection = try select(query)
            let checkAttributes = needsAttributes(query, selection)
            var deleted = 0
            var damaged = false
            for row in selection.rows {
                if checkAttributes {
                    guard let decoded = try skippingDamaged(&damaged, { try openAttributes(row) }),
                        matches(decoded, query)
                    else { continue }
                }
                if try storage.delete(id: row.id) { deleted += 1 }
            }
            guard deleted > 0 else { throw selection.nothingMatched(damaged: damaged, matchedDamaged: false) }
        }
    }

    /// Runs `body` on one candidate row of a query over several. A row whose blobs fail to
    /// open with `decode` is damaged: it is skipped (nil) and `damaged` set, so that one
    /// damaged item neither hides nor blocks the others. Any other error (such as
    /// `interactionNotAllowed` while locked) is thrown.
    func skippingDamaged<T>(_ damaged: inout Bool, _ body: () throws -> T) throws -> T? {
        do {
            return try body()
        } catch KeychainError.decode {
            damaged = true
            return nil
        }
    }
}
