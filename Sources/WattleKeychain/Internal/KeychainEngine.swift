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

    /// Thrown by ``open(storage:credential:mayCreate:)`` when `mayCreate` is false and the
    /// storage holds no keychain yet (no header and no items: a new file, or one whose
    /// creation was cut short).
    struct NoKeychainYet: Error {}

    /// Opens the keychain in `storage`, creating its header and master key, in `format`, when
    /// it has none (unless `mayCreate` is false: then ``NoKeychainYet`` is thrown). Only tests
    /// make a keychain in an earlier format, to check that it still opens.
    static func open(
        storage: any RowStorage, credential: KeychainCredential, mayCreate: Bool = true,
        format: UInt8 = KeychainHeader.currentFormat
    ) throws -> KeychainEngine {
        try Sodium.ensureReady()
        var created: SecureBytes?
        // A keychain that has its header opens without a write transaction (which would wait
        // for any other process's writes); only creating the header takes one, and looks again.
        let stored = try storage.readMeta()
        let meta =
            try stored["wrapped_key"] != nil
            ? stored
            : storage.write { () throws -> [String: [UInt8]] in
                let existing = try storage.readMeta()
                if existing["wrapped_key"] != nil { return existing }
                // No header, but items or part of a header: a damaged keychain, not a new one. A
                // new header would open with any credential and leave every item undecodable.
                guard existing.isEmpty, try storage.allRows().isEmpty else { throw KeychainError.decode }
                guard mayCreate else { throw NoKeychainYet() }
                let master = try WrappingKey.newMaster()
                let (wrapping, wrappingKey) = try WrappingKey.create(for: credential)
                var header = KeychainHeader(
                    format: format, keychainID: Sodium.randomBytes(16), keyVersion: 1,
                    wrapping: wrapping, wrappedKey: [])
                header.wrappedKey = WrappingKey.wrap(
                    master, with: wrappingKey, associatedData: header.wrapAssociatedData)
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
            // The header as it was authenticated (at open or unlock), with a new wrapping. The
            // stored one is read only to check that its format, identifier and key version are
            // still those: they are bound into the wrapping, so re-wrapping a changed stored
            // format byte would make the change look genuine (and every item fail to open).
            let stored = try KeychainHeader(meta: storage.readMeta())
            guard stored.format == header.format, stored.keychainID == header.keychainID,
                stored.keyVersion == header.keyVersion
            else { throw KeychainError.decode }
            var updated = header
            let (wrapping, wrappingKey) = try WrappingKey.create(for: credential)
            updated.wrapping = wrapping
            updated.wrappedKey = WrappingKey.wrap(
                master, with: wrappingKey, associatedData: updated.wrapAssociatedData)
            try storage.writeMeta(updated.meta)
            header = updated
        }
        // The old wrapped key still opens with the old credential: out of the log too.
        storage.checkpoint()
    }

    // MARK: Hashes and sealing

    func identityHash(_ itemClass: KeychainItemClass, _ attributes: KeychainAttributes, synchronizable: Bool)
        -> [UInt8]
    {
        var input: [UInt8] = []
        input.reserveCapacity(128)
        input.append(0x49)
        input.append(itemClass.rawValue)
        for tag in AttributeCoding.identityTags(itemClass) {
            AttributeCoding.appendField(tag, of: attributes, to: &input, keepingMissing: true)
        }
        input.append(synchronizable ? 1 : 0)
        return Sodium.keyedHash(input, key: keys.identity)
    }

    /// The identity hash of a generic password, as ``identityHash(_:_:synchronizable:)`` gives for
    /// attributes with only these three fields, built on the stack from the strings: the
    /// `Keychain` reads and upserts make no `KeychainAttributes` and no array for it.
    func genericPasswordIdentityHash(account: String, service: String, accessGroup: String, synchronizable: Bool)
        -> [UInt8]
    {
        typealias Tag = AttributeCoding.Tag
        let capacity =
            3 + ByteWriter.fieldCount(account) + ByteWriter.fieldCount(service) + ByteWriter.fieldCount(accessGroup)
        return ByteWriter.withBytes(capacity: capacity) { input in
            // The order of AttributeCoding.identityTags(.genericPassword).
            input.append(0x49)
            input.append(KeychainItemClass.genericPassword.rawValue)
            input.appendField(Tag.account, account)
            input.appendField(Tag.service, service)
            input.appendField(Tag.accessGroup, accessGroup)
            input.append(synchronizable ? 1 : 0)
        } use: {
            Sodium.keyedHash($0, key: keys.identity)
        }
    }

    func groupHash(_ itemClass: KeychainItemClass, value: [UInt8], synchronizable: Bool) -> [UInt8] {
        ByteWriter.withBytes(capacity: 7 + value.count) { input in
            input.append(0x47)
            input.append(itemClass.rawValue)
            input.append(littleEndian: UInt32(value.count))
            input.append(value)
            input.append(synchronizable ? 1 : 0)
        } use: {
            Sodium.keyedHash($0, key: keys.group)
        }
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

    /// What a secret is bound to besides its row, from format 2 on: the tag of the row's
    /// sealed attributes (their last 16 bytes), so that a secret put back from an older copy
    /// of the row beside the current attributes fails to open, as a whole older row put back
    /// would not (see the security model's "Rollback"). Empty in format 1; nil when the
    /// attributes blob is too short to hold a tag (a damaged row).
    func secretBinding(attributes sealed: [UInt8]) -> ArraySlice<UInt8>? {
        guard header.format >= 2 else { return [] }
        guard sealed.count >= Sodium.nonceBytes + Sodium.tagBytes else { return nil }
        return sealed.suffix(Sodium.tagBytes)
    }

    /// Binds a blob to its row: format, keychain, key version, class, protection, which blob,
    /// identity hash and group hash, then `binding` (a secret's ``secretBinding(attributes:)``).
    /// `body` gets the bytes, built on the stack.
    func withAssociatedData<R, E: Error>(
        _ kind: BlobKind, itemClass: UInt8, protection: UInt8, id: [UInt8], group: [UInt8],
        binding: ArraySlice<UInt8> = [], _ body: (UnsafeRawBufferPointer) throws(E) -> R
    ) throws(E) -> R {
        let capacity: Int = 11 + header.keychainID.count + id.count + group.count + binding.count
        return try ByteWriter.withBytes(capacity: capacity) { (ad: inout ByteWriter) in
            ad.append(0x57)
            ad.append(0x4B)
            ad.append(0x43)
            ad.append(header.format)
            ad.append(header.keychainID)
            ad.append(littleEndian: header.keyVersion)
            ad.append(itemClass)
            ad.append(protection)
            ad.append(kind.rawValue)
            ad.append(id)
            ad.append(group)
            binding.withUnsafeBytes { ad.append($0) }
        } use: { (ad) throws(E) -> R in
            try body(ad)
        }
    }

    /// ``withAssociatedData(_:itemClass:protection:id:group:binding:_:)``'s bytes as an array.
    func associatedData(
        _ kind: BlobKind, itemClass: UInt8, protection: UInt8, id: [UInt8], group: [UInt8],
        binding: ArraySlice<UInt8> = []
    ) -> [UInt8] {
        withAssociatedData(kind, itemClass: itemClass, protection: protection, id: id, group: group, binding: binding) {
            Array($0)
        }
    }

    /// Seals an item into a row; `attributes` must be normalized.
    ///
    /// - Parameters:
    ///   - knownID: the identity hash of these attributes when the caller has it already
    ///     (``setValue(_:forKey:at:accessibility:label:comment:)`` looked the row up by it), so it
    ///     is not computed twice.
    ///   - knownGroup: the group hash of these attributes when the caller has it already: the
    ///     `group` of the row being replaced, whose attributes opened with it bound in, when the
    ///     group attribute is unchanged.
    func makeRow(
        _ itemClass: KeychainItemClass, attributes: KeychainAttributes, accessibility: KeychainAccessibility,
        synchronizable: Bool, secret: Data, knownID: [UInt8]? = nil, knownGroup: [UInt8]? = nil
    ) throws -> StoredRow {
        // Apple's rule for `kSecAttrSynchronizable`: an item that may sync cannot also be one
        // that never leaves this device (an accessibility ending in ThisDeviceOnly).
        guard !synchronizable || !accessibility.isThisDeviceOnly else { throw KeychainError.param }
        let protection = KeyRing.Protection(accessibility)
        guard let classKey = keys.classKey(protection) else { throw KeychainError.interactionNotAllowed }
        assert(knownID == nil || knownID == identityHash(itemClass, attributes, synchronizable: synchronizable))
        assert(knownGroup == nil || knownGroup == groupHash(itemClass, attributes, synchronizable: synchronizable))
        let id = knownID ?? identityHash(itemClass, attributes, synchronizable: synchronizable)
        let group = knownGroup ?? groupHash(itemClass, attributes, synchronizable: synchronizable)
        var plain = AttributeCoding.encode(attributes, accessibility: accessibility, synchronizable: synchronizable)
        defer { Sodium.wipe(&plain, count: plain.count) }
        let sealedAttributes = withAssociatedData(
            .attributes, itemClass: itemClass.rawValue, protection: protection.rawValue, id: id, group: group
        ) { ad in
            plain.withUnsafeBytes { Sodium.seal($0, additionalData: ad, key: keys.attributes) }
        }
        let sealedSecret = withAssociatedData(
            .secret, itemClass: itemClass.rawValue, protection: protection.rawValue, id: id, group: group,
            binding: secretBinding(attributes: sealedAttributes) ?? []
        ) { ad in
            sealSecret(secret, additionalData: ad, key: classKey)
        }
        return StoredRow(
            id: id, itemClass: itemClass.rawValue, group: group, protection: protection.rawValue,
            attributes: sealedAttributes, secret: sealedSecret)
    }

    /// Pads the secret in a temporary buffer (on the stack when small), wiped after sealing.
    private func sealSecret(_ secret: Data, additionalData: UnsafeRawBufferPointer, key: SecureBytes) -> [UInt8] {
        let capacity = Sodium.paddedCount(secret.count)
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: capacity) { buffer in
            let base = buffer.baseAddress!
            defer { Sodium.wipe(base, count: capacity) }
            base.initialize(repeating: 0, count: capacity)
            _ = secret.copyBytes(to: buffer)
            _ = Sodium.pad(base, count: secret.count, capacity: capacity)
            return Sodium.seal(UnsafeRawBufferPointer(buffer), additionalData: additionalData, key: key)
        }
    }

    /// Opens a row's secret: `interactionNotAllowed` while locked for `whenUnlocked` items,
    /// `decode` when the blob or its row was altered.
    func openSecret(_ row: StoredRow) throws -> Data {
        guard row.hasHashSizes else { throw KeychainError.decode }
        guard let protection = KeyRing.Protection(rawValue: row.protection) else { throw KeychainError.decode }
        guard let key = keys.classKey(protection) else { throw KeychainError.interactionNotAllowed }
        let count = row.secret.count - Sodium.nonceBytes - Sodium.tagBytes
        guard count > 0, count % Sodium.padBlock == 0, let binding = secretBinding(attributes: row.attributes) else {
            throw KeychainError.decode
        }
        return try withAssociatedData(
            .secret, itemClass: row.itemClass, protection: row.protection, id: row.id, group: row.group,
            binding: binding
        ) { (ad) throws(KeychainError) -> Data in
            try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: count) { (buffer) throws(KeychainError) in
                let base = buffer.baseAddress!
                defer { Sodium.wipe(base, count: count) }
                guard Sodium.open(row.secret, additionalData: ad, key: key, into: base),
                    let length = Sodium.unpaddedCount(base, paddedCount: count)
                else { throw .decode }
                return Data(bytes: base, count: length)
            }
        }
    }

    /// Opens a row's attributes; `decode` when altered or inconsistent with the row.
    func openAttributes(_ row: StoredRow) throws -> AttributeCoding.Decoded {
        var decoded = AttributeCoding.Decoded()
        try openAttributes(row, into: &decoded)
        return decoded
    }

    /// Opens a row's attributes into `decoded`, which must be empty (and is partly filled when
    /// this throws). The plaintext is opened into a temporary buffer (on the stack when small),
    /// decoded from there in place and wiped: the ~400-byte value is never returned through the
    /// closures, which copied it at each level.
    func openAttributes(_ row: StoredRow, into decoded: inout AttributeCoding.Decoded) throws {
        try withOpenedAttributes(row) { (plain) throws(KeychainError) in
            try AttributeCoding.decode(plain, into: &decoded)
        }
        guard KeyRing.Protection(decoded.accessibility).rawValue == row.protection else {
            throw KeychainError.decode
        }
    }

    /// Whether a row's attributes fail to authenticate: altered, or sealed under another key
    /// or bound to another row, so that no one can ever open them. Not so for attributes that
    /// open but do not decode (a tag or version of a later Wattle).
    func attributesFailAuthentication(_ row: StoredRow) -> Bool {
        (try? withOpenedAttributes(row) { _ in }) == nil
    }

    /// Opens a row's attributes into a temporary buffer (on the stack when small) for `body`,
    /// and wipes it; `decode` when they do not authenticate.
    private func withOpenedAttributes(
        _ row: StoredRow, _ body: (UnsafeRawBufferPointer) throws(KeychainError) -> Void
    ) throws(KeychainError) {
        guard row.hasHashSizes else { throw .decode }
        let count = row.attributes.count - Sodium.nonceBytes - Sodium.tagBytes
        guard count >= 0 else { throw .decode }
        try withAssociatedData(
            .attributes, itemClass: row.itemClass, protection: row.protection, id: row.id, group: row.group
        ) { (ad) throws(KeychainError) in
            try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: max(count, 1)) {
                (buffer) throws(KeychainError) in
                let base = buffer.baseAddress!
                defer { Sodium.wipe(base, count: count) }
                guard Sodium.open(row.attributes, additionalData: ad, key: keys.attributes, into: base) else {
                    throw .decode
                }
                try body(UnsafeRawBufferPointer(start: base, count: count))
            }
        }
    }
}
