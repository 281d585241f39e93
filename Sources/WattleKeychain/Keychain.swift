#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Typed values for one service, KeychainAccess-style: strings, data, numbers, Bools and any
/// Codable, stored as generic passwords (service = ``service``, account = the key).
///
/// ```swift
/// let keychain = Keychain(service: "api.example.com")
/// try keychain.set("s3cret", forKey: "password")
/// let password = try keychain.string(forKey: "password")      // "s3cret"
/// try keychain.accessibility(.afterFirstUnlock).set(true, forKey: "onboarded")
/// ```
///
/// A `Keychain` is a small value: the modifiers (``accessibility(_:)``,
/// ``synchronizable(_:)``, ``accessGroup(_:)``, ``label(_:)``, ``comment(_:)``) return a
/// copy and change nothing stored. Reads and removals match items with the same service,
/// access group and synchronizable flag. Writes are upserts in one transaction. Errors are
/// thrown (``KeychainError``, ``KeychainFileError``); a missing key reads as `nil`.
public struct Keychain: KeychainService, Sendable {
    /// The service the keys belong to.
    public let service: String
    /// The store holding the items.
    public let store: KeychainStore
    /// The access group; `nil` is the default (empty) group.
    public private(set) var accessGroup: String?
    /// The accessibility of values written (default ``KeychainAccessibility/whenUnlocked``).
    public private(set) var accessibility: KeychainAccessibility = .whenUnlocked
    /// Whether values are written, read and removed as synchronizable (default `false`).
    public private(set) var synchronizable = false
    /// A label written with values, when set.
    public private(set) var label: String?
    /// A comment written with values, when set.
    public private(set) var comment: String?

    /// A keychain for a service in the default store (``KeychainStore/shared``: the folder
    /// `$XDG_DATA_HOME/wattle`, opened with a key file on first use).
    public init(service: String) {
        self.init(service: service, store: .shared)
    }

    /// A keychain for a service in a given store (a file, a temporary or an in-memory store).
    ///
    /// ```swift
    /// let keychain = Keychain(service: "tests", store: .inMemory())
    /// ```
    public init(service: String, store: KeychainStore) {
        self.service = service
        self.store = store
    }

    /// A keychain for a service in `name.keychain` in a folder, with a key file next to it.
    public init(service: String, directory: URL, name: String = "default") throws {
        self.init(service: service, store: try KeychainStore(directory: directory, name: name))
    }

    // MARK: Modifiers

    /// A copy that writes values with this accessibility.
    public func accessibility(_ accessibility: KeychainAccessibility) -> Keychain {
        var copy = self
        copy.accessibility = accessibility
        return copy
    }

    /// A copy that writes, reads and removes synchronizable (or non-synchronizable) values. A
    /// synchronizable value cannot be written with a `…ThisDeviceOnly` accessibility
    /// (``KeychainError/param``, as on Apple platforms).
    public func synchronizable(_ synchronizable: Bool) -> Keychain {
        var copy = self
        copy.synchronizable = synchronizable
        return copy
    }

    /// A copy that uses an access group.
    public func accessGroup(_ accessGroup: String?) -> Keychain {
        var copy = self
        copy.accessGroup = accessGroup
        return copy
    }

    /// A copy that writes this label with values.
    public func label(_ label: String?) -> Keychain {
        var copy = self
        copy.label = label
        return copy
    }

    /// A copy that writes this comment with values.
    public func comment(_ comment: String?) -> Keychain {
        var copy = self
        copy.comment = comment
        return copy
    }

    // MARK: Lock state

    /// Locks the store (see ``KeychainStore/lock()``).
    public func lock() { store.lock() }

    /// Unlocks the store with a credential (see ``KeychainStore/unlock(with:)``).
    public func unlock(with credential: KeychainCredential) throws { try store.unlock(with: credential) }

    // MARK: KeychainReader and KeychainWriter

    private func address() throws(KeychainError) -> KeychainEngine.Address {
        guard !service.isEmpty else { throw .param }
        return KeychainEngine.Address(service: service, accessGroup: accessGroup ?? "", synchronizable: synchronizable)
    }

    private static func check(_ key: String) throws(KeychainError) {
        guard !key.isEmpty else { throw .param }
    }

    /// The stored bytes, or nil when the key has no value.
    ///
    /// - Throws: ``KeychainError/interactionNotAllowed`` when the keychain is locked and the
    ///   value needs it unlocked; ``KeychainError/decode`` when the item was damaged.
    public func data(forKey key: String) throws -> Data? {
        try Self.check(key)
        let address = try address()
        return try store.withEngine { try $0.value(forKey: key, at: address) }
    }

    /// Stores bytes, replacing any value of the key in one transaction.
    ///
    /// - Throws: ``KeychainError/interactionNotAllowed`` while the keychain is locked when the
    ///   new value or the one it replaces needs it unlocked (``KeychainAccessibility/whenUnlocked``);
    ///   ``KeychainError/dataTooLarge`` when the value is too large to store (the old one stays).
    public func set(_ data: Data, forKey key: String) throws {
        try Self.check(key)
        let address = try address()
        let (accessibility, label, comment) = (accessibility, label, comment)
        try store.withEngine {
            try $0.setValue(
                data, forKey: key, at: address, accessibility: accessibility, label: label, comment: comment)
        }
    }

    /// Whether the key has a value (even while locked).
    public func hasValue(forKey key: String) throws -> Bool {
        try Self.check(key)
        let address = try address()
        return try store.withEngine { try $0.hasValue(forKey: key, at: address) }
    }

    /// The accessibility of the key's value, or nil when it has none.
    public func accessibility(forKey key: String) throws -> KeychainAccessibility? {
        try Self.check(key)
        let address = try address()
        return try store.withEngine { try $0.accessibility(forKey: key, at: address) }
    }

    /// Removes the key's value without reading it (so a damaged value can be removed); no
    /// error when it has none.
    public func removeValue(forKey key: String) throws {
        try Self.check(key)
        let address = try address()
        try store.withEngine { try $0.removeValue(forKey: key, at: address) }
    }

    /// Removes the key's value if `test` accepts it, reading and removing in one transaction
    /// (another process cannot store a new value in between); whether it removed it. For a
    /// compare-and-delete: ``KeychainTokenStore`` clears a token only while it is the one that
    /// failed.
    ///
    /// - Throws: as ``data(forKey:)`` for the read, and what `test` throws.
    package func removeValue(forKey key: String, where test: (Data) throws -> Bool) throws -> Bool {
        try Self.check(key)
        let address = try address()
        return try store.withEngine { try $0.removeValue(forKey: key, at: address, where: test) }
    }

    /// Reads the key's value (nil: none) and stores what `change` returns in its place, or
    /// removes it when `change` returns nil, in one transaction: another process cannot store
    /// a value in between. For a read-merge-write: ``KeychainCookieJar``'s sessions merge
    /// their cookies into what another session stored.
    ///
    /// - Throws: as ``data(forKey:)`` for the read (`change` is not called then), as
    ///   ``set(_:forKey:)`` for the write, and what `change` throws (nothing is written).
    package func updateValue(forKey key: String, _ change: (Data?) throws -> Data?) throws {
        try Self.check(key)
        let address = try address()
        let (accessibility, label, comment) = (accessibility, label, comment)
        try store.withEngine {
            try $0.updateValue(
                forKey: key, at: address, accessibility: accessibility, label: label, comment: comment, change)
        }
    }

    /// Removes every value of this service (in this access group, with this synchronizable
    /// flag) in one transaction, and any item filed under the service whose attributes no
    /// longer open (damaged, whatever its access group was).
    public func removeAll() throws {
        let address = try address()
        try store.withEngine { try $0.removeAll(at: address) }
    }

    /// Every key of this service (in this access group, with this synchronizable flag), sorted.
    /// An item whose attributes no longer open (damaged) has no key anyone can read, so it is
    /// not listed; ``removeAll()`` removes it. One whose secret alone is damaged is listed, and
    /// reading it throws ``KeychainError/decode``. An item added through the primitives with no
    /// account has no key either (no accessor takes `""`): not listed, and removed by
    /// ``removeAll()``.
    public func allKeys() throws -> [String] {
        let address = try address()
        return try store.withEngine { try $0.allKeys(at: address) }
    }
}
