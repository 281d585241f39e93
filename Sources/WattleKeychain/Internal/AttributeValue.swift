#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A type stored in a sealed attribute field, with one fixed byte encoding.
protocol AttributeValue: Equatable {
    var encoded: [UInt8] { get }
    /// Appends `encoded` to `bytes`, for types that can do it without making the array.
    func appendEncoded(to bytes: inout [UInt8])
    /// The value of an encoding, read in place; nil when the bytes are not a valid encoding.
    init?(encoded: UnsafeRawBufferPointer)
    /// The value stored for an identity attribute left `nil` (as Apple stores an empty value).
    static var empty: Self { get }
}

extension AttributeValue {
    func appendEncoded(to bytes: inout [UInt8]) { bytes.append(contentsOf: encoded) }

    init?(encoded: [UInt8]) {
        guard let value = encoded.withUnsafeBytes({ Self(encoded: $0) }) else { return nil }
        self = value
    }
}

extension String: AttributeValue {
    var encoded: [UInt8] { Array(utf8) }
    func appendEncoded(to bytes: inout [UInt8]) { bytes.append(contentsOf: utf8) }
    init?(encoded: UnsafeRawBufferPointer) {
        // Decoding repairs ill-formed UTF-8, so the bytes come back unchanged only when they
        // were valid: the same check as `String(validating:as:)`, whose generic path looked up
        // type metadata on every call. Compared with `memcmp`: `elementsEqual` went byte by byte.
        let bytes = encoded.assumingMemoryBound(to: UInt8.self)
        var text = String(decoding: bytes, as: UTF8.self)
        guard
            text.withUTF8({ decoded in
                decoded.count == bytes.count
                    && (bytes.isEmpty || memcmp(decoded.baseAddress!, bytes.baseAddress!, bytes.count) == 0)
            })
        else { return nil }
        self = text
    }
    static var empty: String { "" }
}

extension Data: AttributeValue {
    var encoded: [UInt8] { Array(self) }
    init?(encoded: UnsafeRawBufferPointer) { self.init(encoded) }
    static var empty: Data { Data() }
}

extension Int: AttributeValue {
    var encoded: [UInt8] { Bytes.littleEndian(Int64(self)) }
    func appendEncoded(to bytes: inout [UInt8]) { Bytes.append(littleEndian: Int64(self), to: &bytes) }
    init?(encoded: UnsafeRawBufferPointer) {
        guard encoded.count == 8 else { return nil }
        self = Int(Int64(littleEndian: encoded.loadUnaligned(as: Int64.self)))
    }
    static var empty: Int { 0 }
}

extension Date: AttributeValue {
    var encoded: [UInt8] { Bytes.littleEndian(timeIntervalSinceReferenceDate.bitPattern) }
    func appendEncoded(to bytes: inout [UInt8]) {
        Bytes.append(littleEndian: timeIntervalSinceReferenceDate.bitPattern, to: &bytes)
    }
    init?(encoded: UnsafeRawBufferPointer) {
        guard encoded.count == 8 else { return nil }
        let bits = UInt64(littleEndian: encoded.loadUnaligned(as: UInt64.self))
        self.init(timeIntervalSinceReferenceDate: Double(bitPattern: bits))
    }
    static var empty: Date { Date(timeIntervalSinceReferenceDate: 0) }
}

/// The open string sets (protocol, authentication type, key class, key type).
protocol StringAttributeValue: AttributeValue, RawRepresentable where RawValue == String {}

extension StringAttributeValue {
    var encoded: [UInt8] { Array(rawValue.utf8) }
    func appendEncoded(to bytes: inout [UInt8]) { bytes.append(contentsOf: rawValue.utf8) }
    init?(encoded: UnsafeRawBufferPointer) {
        guard let text = String(encoded: encoded) else { return nil }
        self.init(rawValue: text)
    }
    static var empty: Self { Self(rawValue: "")! }
}

extension KeychainProtocol: StringAttributeValue {}
extension KeychainAuthenticationType: StringAttributeValue {}
extension KeychainKeyClass: StringAttributeValue {}
extension KeychainKeyType: StringAttributeValue {}
