#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The one fixed byte encoding of each typed value (see ``KeychainReader``).
enum ValueEncoding {
    static func encode(_ value: String) -> Data {
        // From the contiguous bytes: `Data(value.utf8)` goes through a generic sequence
        // initializer with dynamic casts.
        var value = value
        return value.withUTF8 { Data(buffer: $0) }
    }

    static func string(_ data: Data) throws(KeychainError) -> String {
        guard let value = String(validating: data, as: UTF8.self) else { throw .decode }
        return value
    }

    static func encode(_ value: Bool) -> Data { Data([value ? 1 : 0]) }

    static func bool(_ data: Data) throws(KeychainError) -> Bool {
        guard data.count == 1, let byte = data.first, byte <= 1 else { throw .decode }
        return byte == 1
    }

    static func encode(_ value: Int) -> Data { Data(Bytes.littleEndian(Int64(value))) }

    static func integer(_ data: Data) throws(KeychainError) -> Int {
        guard data.count == 8 else { throw .decode }
        let value = Int64(bitPattern: Bytes.uint64(data))
        guard let result = Int(exactly: value) else { throw .decode }
        return result
    }

    static func encode(_ value: Double) -> Data { Data(Bytes.littleEndian(value.bitPattern)) }

    static func double(_ data: Data) throws(KeychainError) -> Double {
        guard data.count == 8 else { throw .decode }
        return Double(bitPattern: Bytes.uint64(data))
    }

    static func encode(_ value: Float) -> Data { Data(Bytes.littleEndian(value.bitPattern)) }

    static func float(_ data: Data) throws(KeychainError) -> Float {
        guard data.count == 4 else { throw .decode }
        return Float(bitPattern: UInt32(truncatingIfNeeded: Bytes.uint64(data)))
    }

    static func encode<Value: Encodable>(_ value: Value) throws -> Data {
        let encoder = JSONEncoder()
        // Slashes unescaped: base64 (a Basic token's) has them, and Wattle's token reader reads
        // only a string without escapes directly (else it falls back to JSONDecoder, ~0.15 ms).
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            return try encoder.encode(value)
        } catch {
            throw KeychainError.param
        }
    }

    static func decode<Value: Decodable>(_ type: Value.Type, from data: Data) throws -> Value {
        do {
            return try JSONDecoder().decode(type, from: data)
        } catch {
            throw KeychainError.decode
        }
    }
}
