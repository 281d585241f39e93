#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An open keychain: storage, header and keys, and every operation. Not thread-safe by
/// itself: ``KeychainStore`` runs it under a lock.
final class KeychainEngine {
    let storage: any RowStorage
    private(set) var header: KeychainHeader
    let keys: KeyRing

    private init(storage: any RowStorage, header: KeychainHeader, keys: KeyRing) {
        self.storage = storage
        self.header = header
        self.keys = keys
    }

    /// Opens the keychain in `storage`, creating its header and master key when it has none.
    static func open(storage: any RowStorage, credential: KeychainCredential) throws -> KeychainEngine {
        try Sodium.ensureReady()
        var created: SecureBytes?
        let meta = try storage.write { () throws -> [String: [UInt8]] in
            let existing = try storage.readMeta()
            if existing["wrapped_key"] != nil { return existing }
            let master = try WrappingKey.newMaster()
            let (wrapping, wrappingKey) = try WrappingKey.create(for: credential)
            var header = KeychainHeader(
                format: KeychainHeader.currentFormat, keychainID: Sodium.randomBytes(16), keyVersion: 1,
                wrapping: wrapping, wrappedKey: [])
            header.wrappedKey = WrappingKey.wrap(master, with: wrappingKey, associatedData: header.wrapAssociatedData)
            try storage.writeMeta(header.meta)
            created = master
            return header.meta
        }
        let header = try KeychainHeader(meta: meta)
        let master = try created ?? unwrapMaster(header: header, credential: credential)
        return KeychainEngine(storage: storage, header: header, keys: try KeyRing(master: master))
    }

    private static func unwrapMaster(header: KeychainHeader, credential: KeychainCredential) throws -> SecureBytes {
        let wrappingKey = try WrappingKey.derive(for: credential, wrapping: header.wrapping)
        return try WrappingKey.unwrap(header.wrappedKey, with: wrappingKey, associatedData: header.wrapAssociatedData)
    }

    // MARK: Lock state

    var isLocked: Bool { keys.isLocked }

    func lock() { keys.lock() }

    func unlock(with credential: KeychainCredential) throws {
        let current = try KeychainHeader(meta: storage.readMeta())
        let master = try Self.unwrapMaster(header: current, credential: credential)
        guard current.keychainID == header.keychainID else { throw KeychainError.authFailed }
        header = current
        try keys.unlock(master: master)
    }

    /// Re-wraps the master key for a new credential; re-encrypts no item.
    func changeCredential(to credential: KeychainCredential) throws {
        guard let master = keys.master else { throw KeychainError.interactionNotAllowed }
        try storage.write {
            var updated = try KeychainHeader(meta: storage.readMeta())
            let (wrapping, wrappingKey) = try WrappingKey.create(for: credential)
            updated.wrapping = wrapping
            updated.wrappedKey = WrappingKey.wrap(
                master, with: wrappingKey, associatedData: updated.wrapAssociatedData)
            try storage.writeMeta(updated.meta)
            header = updated
        }
    }

    // MARK: Hashes and sealing

    func identityHash(_ itemClass: KeychainItemClass, _ attributes: KeychainAttributes, synchronizable: Bool)
        -> [UInt8]
    {
        var input: [UInt8] = [0x49, itemClass.rawValue]
        input.reserveCapacity(96)
        for tag in AttributeCoding.identityTags(itemClass) {
            AttributeCoding.appendField(tag, of: attributes, to: &input, keepingMissing: true)
        }
        input.append(synchronizable ? 1 : 0)
        return Sodium.keyedHash(input, key: keys.identity)
    }

    func groupHash(_ itemClass: KeychainItemClass, value: [UInt8], synchronizable: Bool) -> [UInt8] {
        var input: [UInt8] = [0x47, itemClass.rawValue]
        Bytes.append(littleEndian: UInt32(value.count), to: &input)
        input.append(contentsOf: value)
        input.append(synchronizable ? 1 : 0)
        return Sodium.keyedHash(input, key: keys.group)
    }

    func groupHash(_ itemClass: KeychainItemClass, _ attributes: KeychainAttributes, synchronizable: Bool)
        -> [UInt8]
    {
        let value = AttributeCoding.field(AttributeCoding.groupTag(itemClass)).get(attributes) ?? []
        return groupHash(itemClass, value: value, synchronizable: synchronizable)
    }

    enum BlobKind: UInt8 {
        case attributes = 0x41
        case secret = 0x53
    }

    /// Binds a blob to its row: format, keychain, key version, class, protection, which blob,
    /// identity hash and group hash.
    func associatedData(_ kind: BlobKind, itemClass: UInt8, protection: UInt8, id: [UInt8], group: [UInt8])
        -> [UInt8]
    {
        var ad: [UInt8] = [0x57, 0x4B, 0x43, header.format]
        ad.reserveCapacity(96)
        ad.append(contentsOf: header.keychainID)
        Bytes.append(littleEndian: header.keyVersion, to: &ad)
        ad.append(itemClass)
        ad.append(protection)
        ad.append(kind.rawValue)
        ad.append(contentsOf: id)
        ad.append(contentsOf: group)
        return ad
    }

    /// Seals an item into a row; `attributes` must be normalized.
    ///
    /// - Parameter knownID: the identity hash of these attributes when the caller has it
    ///   already (``setValue(_:forKey:at:accessibility:label:comment:)`` looked the row up by
    ///   it), so it is not computed twice.
    func makeRow(
        _ itemClass: KeychainItemClass, attributes: KeychainAttributes, accessibility: KeychainAccessibility,
        synchronizable: Bool, secret: Data, knownID: [UInt8]? = nil
    ) throws -> StoredRow {
        let protection = KeyRing.Protection(accessibility)
        guard let classKey = keys.classKey(protection) else { throw KeychainError.interactionNotAllowed }
        assert(knownID == nil || knownID == identityHash(itemClass, attributes, synchronizable: synchronizable))
        let id = knownID ?? identityHash(itemClass, attributes, synchronizable: synchronizable)
        let group = groupHash(itemClass, attributes, synchronizable: synchronizable)
        var plain = AttributeCoding.encode(attributes, accessibility: accessibility, synchronizable: synchronizable)
        defer { Sodium.wipe(&plain, count: plain.count) }
        let sealedAttributes = plain.withUnsafeBytes {
            Sodium.seal(
                $0,
                additionalData: associatedData(
                    .attributes, itemClass: itemClass.rawValue, protection: protection.rawValue, id: id,
                    group: group),
                key: keys.attributes)
        }
        let sealedSecret = sealSecret(
            secret,
            additionalData: associatedData(
                .secret, itemClass: itemClass.rawValue, protection: protection.rawValue, id: id, group: group),
            key: classKey)
        return StoredRow(
            id: id, itemClass: itemClass.rawValue, group: group, protection: protection.rawValue,
            attributes: sealedAttributes, secret: sealedSecret)
    }

    private func sealSecret(_ secret: Data, additionalData: [UInt8], key: SecureBytes) -> [UInt8] {
        let capacity = Sodium.paddedCount(secret.count)
        var padded = [UInt8](repeating: 0, count: capacity)
        defer { Sodium.wipe(&padded, count: capacity) }
        return padded.withUnsafeMutableBufferPointer { buffer in
            _ = secret.copyBytes(to: buffer)
            _ = Sodium.pad(buffer.baseAddress!, count: secret.count, capacity: capacity)
            return Sodium.seal(UnsafeRawBufferPointer(buffer), additionalData: additionalData, key: key)
        }
    }

    /// Opens a row's secret: `interactionNotAllowed` while locked for `whenUnlocked` items,
    /// `decode` when the blob or its row was altered.
    func openSecret(_ row: StoredRow) throws -> Data {
        guard let protection = KeyRing.Protection(rawValue: row.protection) else { throw KeychainError.decode }
        guard let key = keys.classKey(protection) else { throw KeychainError.interactionNotAllowed }
        let count = row.secret.count - Sodium.nonceBytes - Sodium.tagBytes
        guard count > 0, count % Sodium.padBlock == 0 else { throw KeychainError.decode }
        let ad = associatedData(
            .secret, itemClass: row.itemClass, protection: row.protection, id: row.id, group: row.group)
        return try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: count) { buffer in
            let base = buffer.baseAddress!
            defer { Sodium.wipe(base, count: count) }
            guard Sodium.open(row.secret, additionalData: ad, key: key, into: base),
                let length = Sodium.unpaddedCount(base, paddedCount: count)
            else { throw KeychainError.decode }
            return Data(bytes: base, count: length)
        }
    }

    /// Opens a row's attributes; `decode` when altered or inconsistent with the row.
    func openAttributes(_ row: StoredRow) throws -> AttributeCoding.Decoded {
        let ad = associatedData(
            .attributes, itemClass: row.itemClass, protection: row.protection, id: row.id, group: row.group)
        guard var plain = Sodium.open(row.attributes, additionalData: ad, key: keys.attributes) else {
            throw KeychainError.decode
        }
        defer { Sodium.wipe(&plain, count: plain.count) }
        let decoded = try AttributeCoding.decode(plain)
        guard KeyRing.Protection(decoded.accessibility).rawValue == row.protection else {
            throw KeychainError.decode
        }
        return decoded
    }
}
