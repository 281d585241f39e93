#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Reads values by key; depend on this to read credentials without caring where they live.
///
/// Conformers provide ``data(forKey:)`` and the three queries; the typed getters are built on
/// ``data(forKey:)`` with one fixed byte encoding per type:
///
/// | Type | Bytes |
/// |---|---|
/// | `String` | UTF-8 |
/// | `Data` | as is |
/// | `Bool` | one byte, `0` or `1` |
/// | `Int` | 8 bytes, `Int64` little-endian |
/// | `Double` | 8 bytes, IEEE-754 bit pattern little-endian |
/// | `Float` | 4 bytes, IEEE-754 bit pattern little-endian |
/// | `Codable` | JSON from `JSONEncoder` with `.sortedKeys` and `.withoutEscapingSlashes` |
///
/// A missing key reads as `nil`; bytes that are not a valid encoding of the asked type throw
/// ``KeychainError/decode``.
public protocol KeychainReader: Sendable {
    /// The stored bytes, or nil when the key has no value.
    func data(forKey key: String) throws -> Data?
    /// Whether the key has a value (even while it is locked).
    func hasValue(forKey key: String) throws -> Bool
    /// The accessibility of the key's value, or nil when it has none.
    func accessibility(forKey key: String) throws -> KeychainAccessibility?
    /// Every key with a value, sorted.
    func allKeys() throws -> [String]
}

extension KeychainReader {
    /// The value as a UTF-8 string.
    public func string(forKey key: String) throws -> String? {
        try decoded(key) { try ValueEncoding.string($0) }
    }

    /// The value as a Bool (one byte, 0 or 1).
    public func bool(forKey key: String) throws -> Bool? {
        try decoded(key) { try ValueEncoding.bool($0) }
    }

    /// The value as an Int (8 bytes, Int64 little-endian).
    public func integer(forKey key: String) throws -> Int? {
        try decoded(key) { try ValueEncoding.integer($0) }
    }

    /// The value as a Double (8 bytes, IEEE-754 little-endian).
    public func double(forKey key: String) throws -> Double? {
        try decoded(key) { try ValueEncoding.double($0) }
    }

    /// The value as a Float (4 bytes, IEEE-754 little-endian).
    public func float(forKey key: String) throws -> Float? {
        try decoded(key) { try ValueEncoding.float($0) }
    }

    /// The value decoded from JSON.
    ///
    /// ```swift
    /// let token = try keychain.codable(Token.self, forKey: "token")
    /// let same: Token? = try keychain.codable(forKey: "token")   // the type from the context
    /// ```
    public func codable<Value: Decodable>(_ type: Value.Type = Value.self, forKey key: String) throws -> Value? {
        try decoded(key) { try ValueEncoding.decode(type, from: $0) }
    }

    /// The value `decode` makes of the key's stored bytes, which are wiped after it: they are a
    /// copy of the secret only this getter holds (the value it returns is the caller's).
    private func decoded<Value>(_ key: String, _ decode: (Data) throws -> Value) throws -> Value? {
        guard var bytes = try data(forKey: key) else { return nil }
        defer { Sodium.wipe(&bytes) }
        return try decode(bytes)
    }
}
