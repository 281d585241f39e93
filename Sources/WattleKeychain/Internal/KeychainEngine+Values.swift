#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The fast paths behind ``Keychain``: generic passwords addressed by service, account
/// (the key), access group and synchronizable flag; one keyed hash and one indexed lookup.
extension KeychainEngine {
    struct Address {
        var service: String
        var accessGroup: String
        var synchronizable: Bool

        func attributes(account: String) -> KeychainAttributes {
            KeychainAttributes(service: service, account: account, accessGroup: accessGroup)
        }
    }

    private func id(_ key: String, _ address: Address) -> [UInt8] {
        genericPasswordIdentityHash(
            account: key, service: address.service, accessGroup: address.accessGroup,
            synchronizable: address.synchronizable)
    }

    private func group(_ address: Address) -> [UInt8] {
        groupHash(.genericPassword, value: Array(address.service.utf8), synchronizable: address.synchronizable)
    }

    /// The secret, or nil when there is no such item.
    func value(forKey key: String, at address: Address) throws -> Data? {
        guard let row = try storage.row(id: id(key, address)) else { return nil }
        return try openSecret(row)
    }

    /// Inserts or replaces in one transaction, keeping the creation date, label and comment of
    /// an existing item (unless new ones are given).
    func setValue(
        _ data: Data, forKey key: String, at address: Address, accessibility: KeychainAccessibility,
        label: String?, comment: String?
    ) throws {
        let rowID = id(key, address)
        try storage.write {
            let now = Date()
            // Decoded in place and changed there: copying the ~400-byte attributes out of the
            // decoded value showed in profiles of the upsert.
            var decoded = AttributeCoding.Decoded()
            var knownGroup: [UInt8]?
            let existing = try storage.row(id: rowID)
            // As on Apple platforms: an item that needs the unlocked keychain is not replaced
            // while locked, not even by one with a weaker accessibility.
            guard !isLocked || existing?.protection != KeyRing.Protection.whenUnlocked.rawValue else {
                throw KeychainError.interactionNotAllowed
            }
            if let existing, (try? openAttributes(existing, into: &decoded)) != nil {
                // Its service (the group attribute) is the one it was found by, and its group
                // hash was bound into the attributes that just opened: reuse it.
                knownGroup = existing.group
                if decoded.attributes.creationDate == nil { decoded.attributes.creationDate = now }
            } else {
                // None, or one that cannot be decoded: that is replaced whole, nothing of it kept.
                decoded.attributes = address.attributes(account: key)
                decoded.attributes.creationDate = now
            }
            decoded.attributes.modificationDate = now
            if let label { decoded.attributes.label = label }
            if let comment { decoded.attributes.comment = comment }
            let row = try makeRow(
                .genericPassword, attributes: decoded.attributes, accessibility: accessibility,
                synchronizable: address.synchronizable, secret: data, knownID: rowID, knownGroup: knownGroup)
            try storage.upsert(row)
        }
    }

    /// Reads the secret (nil: no such item) and stores what `change` returns in its place, or
    /// removes the item when it returns nil, in one write transaction: no other connection
    /// can store a value in between. Throws as ``value(forKey:at:)`` for a damaged item,
    /// without calling `change`.
    func updateValue(
        forKey key: String, at address: Address, accessibility: KeychainAccessibility, label: String?,
        comment: String?, _ change: (Data?) throws -> Data?
    ) throws {
        try storage.write {
            if let data = try change(try value(forKey: key, at: address)) {
                try setValue(
                    data, forKey: key, at: address, accessibility: accessibility, label: label, comment: comment)
            } else {
                try removeValue(forKey: key, at: address)
            }
        }
    }

    func hasValue(forKey key: String, at address: Address) throws -> Bool {
        try storage.row(id: id(key, address)) != nil
    }

    func accessibility(forKey key: String, at address: Address) throws -> KeychainAccessibility? {
        guard let row = try storage.row(id: id(key, address)) else { return nil }
        return try openAttributes(row).accessibility
    }

    /// Removes one item by its identity hash, without opening it (so a damaged item can be
    /// removed). No error when it does not exist.
    func removeValue(forKey key: String, at address: Address) throws {
        let rowID = id(key, address)
        try storage.write { _ = try storage.delete(id: rowID) }
    }

    /// Removes one item if its secret passes `test`, reading and removing in one write
    /// transaction, so that no other connection can replace the secret in between. Whether it
    /// removed it (false when there is no such item or the test said no).
    func removeValue(
        forKey key: String, at address: Address, where test: (Data) throws -> Bool
    ) throws -> Bool {
        let rowID = id(key, address)
        return try storage.write {
            guard let row = try storage.row(id: rowID) else { return false }
            var secret = try openSecret(row)
            defer { Sodium.wipe(&secret) }
            guard try test(secret) else { return false }
            return try storage.delete(id: rowID)
        }
    }

    /// Whether two texts are the same bytes, as items' identities are: Swift's `==` takes
    /// canonically equivalent strings (`"caf\u{E9}"`, `"cafe\u{301}"`) for equal, and the
    /// access group of one would have listed, and removed, the other's items.
    static func sameBytes(_ first: String?, _ second: String?) -> Bool {
        switch (first, second) {
        case (nil, nil): true
        case let (first?, second?): first.utf8.elementsEqual(second.utf8)
        default: false
        }
    }

    /// Keys (accounts) of the service in the address's access group, sorted. An item whose
    /// attributes fail to open is left out: it has no key anyone could read.
    func allKeys(at address: Address) throws -> [String] {
        var damaged = false
        return try storage.rows(itemClass: KeychainItemClass.genericPassword.rawValue, groups: [group(address)])
            .compactMap { row -> String? in
                // An item added without an account (through the primitives) has "" here, which
                // no typed accessor takes as a key: not listed (`removeAll` still removes it).
                guard let attributes = try skippingDamaged(&damaged, { try openAttributes(row).attributes }),
                    Self.sameBytes(attributes.accessGroup, address.accessGroup),
                    Self.sameBytes(attributes.service, address.service),
                    let account = attributes.account, !account.isEmpty
                else { return nil }
                return account
            }
            .sorted()
    }

    /// Removes every item of the service in the address's access group, in one transaction,
    /// and every item filed under the service whose attributes fail to authenticate: no one
    /// could ever read it, and left in place it would be listed by nothing and removed by
    /// nothing. (It may have been in another access group of the same service: the row's
    /// service hash does not cover the group.) An item whose attributes open but do not
    /// decode, as a later Wattle's might, is left alone.
    func removeAll(at address: Address) throws {
        try storage.write {
            var damaged = false
            for row in try storage.rows(
                itemClass: KeychainItemClass.genericPassword.rawValue, groups: [group(address)])
            {
                if let attributes = try skippingDamaged(&damaged, { try openAttributes(row).attributes }) {
                    guard Self.sameBytes(attributes.accessGroup, address.accessGroup),
                        Self.sameBytes(attributes.service, address.service)
                    else { continue }
                } else if !attributesFailAuthentication(row) {
                    continue
                }
                try storage.delete(id: row.id)
            }
        }
    }
}
