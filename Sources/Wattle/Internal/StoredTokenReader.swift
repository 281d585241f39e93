#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Reads the ``AuthToken`` a ``KeychainTokenStore`` keeps, in the one form `JSONEncoder` writes
/// it (sorted keys, no white space, nil fields left out), without `JSONDecoder`.
///
/// The first `JSONDecoder` decode in a process looks up conformances and builds type metadata:
/// ~0.15 ms of a ~10 ms one-shot `wattle GET` with a stored token. Only that exact form is read
/// here: an object of the five keys in order (`binding`, `expiresAt` and `refreshToken` may be
/// missing), strings without escapes, the expiry as a JSON number. Anything else (an escape, white space, another key, a token written by something
/// else) gives nil and is left to `JSONDecoder`, so both read every stored token the same way.
enum StoredTokenReader {
    static func token(from data: Data) -> AuthToken? {
        data.withUnsafeBytes { bytes in
            var reader = Reader(bytes: bytes)
            return reader.token()
        }
    }

    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        var index = 0

        init(bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

        mutating func token() -> AuthToken? {
            guard take(UInt8(ascii: "{")) else { return nil }
            var access: String?
            var binding: String?
            var expiry: Date?
            var refresh: String?
            var type: String?
            // The keys in JSONEncoder's sorted order, each at most once.
            let keys = ["accessToken", "binding", "expiresAt", "refreshToken", "tokenType"]
            var next = 0
            repeat {
                guard let key = string(), let position = keys[next...].firstIndex(of: key), take(UInt8(ascii: ":"))
                else { return nil }
                next = position + 1
                if position == 2 {
                    guard let seconds = number() else { return nil }
                    expiry = Date(timeIntervalSinceReferenceDate: seconds)
                    continue
                }
                guard let value = string() else { return nil }
                switch position {
                case 0: access = value
                case 1: binding = value
                case 3: refresh = value
                default: type = value
                }
            } while next < keys.count && take(UInt8(ascii: ","))
            guard take(UInt8(ascii: "}")), index == bytes.count, let access, let type else { return nil }
            var token = AuthToken(accessToken: access, refreshToken: refresh, expiresAt: expiry, tokenType: type)
            token.binding = binding
            return token
        }

        mutating func take(_ byte: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        /// A string with no escape and no control character, as valid UTF-8.
        mutating func string() -> String? {
            guard take(UInt8(ascii: "\"")) else { return nil }
            let start = index
            while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
                guard bytes[index] >= 0x20, bytes[index] != UInt8(ascii: "\\") else { return nil }
                index += 1
            }
            guard index < bytes.count else { return nil }
            let value = String(validating: UnsafeRawBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
            index += 1
            return value
        }

        /// A finite JSON number: `-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?`.
        mutating func number() -> Double? {
            let start = index
            _ = take(UInt8(ascii: "-"))
            if !take(UInt8(ascii: "0")) {
                guard digits() > 0 else { return nil }
            }
            if take(UInt8(ascii: ".")) { guard digits() > 0 else { return nil } }
            if take(UInt8(ascii: "e")) || take(UInt8(ascii: "E")) {
                _ = take(UInt8(ascii: "+")) || take(UInt8(ascii: "-"))
                guard digits() > 0 else { return nil }
            }
            let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
            guard let value = Double(text), value.isFinite else { return nil }
            return value
        }

        mutating func digits() -> Int {
            let start = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
                index += 1
            }
            return index - start
        }
    }
}
