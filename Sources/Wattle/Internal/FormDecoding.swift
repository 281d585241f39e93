#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Reads `application/x-www-form-urlencoded` text (WHATWG URL standard, section 5.1): `&`
/// separates fields, the first `=` separates name and value, `+` is a space and `%XX` a byte.
enum FormDecoding {
    /// The fields by name; of a repeated name, the first. Bytes that are not UTF-8 after
    /// decoding become U+FFFD.
    static func fields(_ data: Data) -> [String: String] {
        var result: [String: String] = [:]
        for field in data.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let equals = field.firstIndex(of: UInt8(ascii: "="))
            let name = decode(field[..<(equals ?? field.endIndex)])
            let value = equals.map { decode(field[field.index(after: $0)...]) } ?? ""
            if result[name] == nil { result[name] = value }
        }
        return result
    }

    /// One name or value, `+` and `%XX` decoded (a `%` not followed by two hex digits stays).
    static func decode(_ bytes: Data.SubSequence) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "+") {
                output.append(UInt8(ascii: " "))
            } else if byte == UInt8(ascii: "%"), bytes.distance(from: index, to: bytes.endIndex) >= 3,
                let high = PercentEncoding.hexValue(bytes[index + 1]),
                let low = PercentEncoding.hexValue(bytes[index + 2])
            {
                output.append(high << 4 | low)
                index += 2
            } else {
                output.append(byte)
            }
            index += 1
        }
        return String(decoding: output, as: UTF8.self)
    }
}
