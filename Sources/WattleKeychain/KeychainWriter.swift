#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Writes values by key; depend on this to store credentials without caring where they live.
///
/// Conformers provide ``set(_:forKey:)-(Data,_)`` and the removals; the typed setters encode
/// as described in ``KeychainReader``.
public protocol KeychainWriter: Sendable {
    /// Stores bytes, replacing any value of the key in one transaction.
    func set(_ data: Data, forKey key: String) throws
    /// Removes the key's value; no error when it has none.
    func removeValue(forKey key: String) throws
    /// Removes every value.
    func removeAll() throws
}

extension KeychainWriter {
    /// Stores a string as UTF-8.
    public func set(_ value: String, forKey key: String) throws {
        try setWiping(key) { ValueEncoding.encode(value) }
    }

    /// Stores a Bool as one byte, 0 or 1.
    public func set(_ value: Bool, forKey key: String) throws {
        try setWiping(key) { ValueEncoding.encode(value) }
    }

    /// Stores an Int as 8 bytes, Int64 little-endian.
    public func set(_ value: Int, forKey key: String) throws {
        try setWiping(key) { ValueEncoding.encode(value) }
    }

    /// Stores a Double as its 8-byte IEEE-754 bit pattern, little-endian.
    public func set(_ value: Double, forKey key: String) throws {
        try setWiping(key) { ValueEncoding.encode(value) }
    }

    /// Stores a Float as its 4-byte IEEE-754 bit pattern, little-endian.
    public func set(_ value: Float, forKey key: String) throws {
        try setWiping(key) { ValueEncoding.encode(value) }
    }

    /// Stores any Encodable as JSON (`JSONEncoder`, `.sortedKeys` and `.withoutEscapingSlashes`).
    ///
    /// ```swift
    /// try keychain.setCodable(token, forKey: "token")
    /// ```
    public func setCodable<Value: Encodable>(_ value: Value, forKey key: String) throws {
        try setWiping(key) { try ValueEncoding.encode(value) }
    }

    /// Stores the bytes `encode` makes, then wipes them: they are a copy of the secret only this
    /// setter holds (a store that keeps the value has its own reference, and a wipe of a shared
    /// buffer copies it first, so the store's is left alone).
    private func setWiping(_ key: String, _ encode: () throws -> Data) throws {
        var bytes = try encode()
        defer { Sodium.wipe(&bytes) }
        try set(bytes, forKey: key)
    }
}
