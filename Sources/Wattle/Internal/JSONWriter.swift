#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Writes `Parameters` as a JSON object, keeping the order of the pairs.
///
/// Foundation's `JSONSerialization` takes `Any`, loses order and bridges Swift values through
/// `NSNumber` differently across platforms; this small writer has one behaviour everywhere.
enum JSONWriter {
    static func object(_ parameters: Parameters) throws(WattleError) -> Data {
        var output = ""
        try write(parameters, into: &output, path: "")
        return Data(output.utf8)
    }

    private static func write(_ parameters: Parameters, into output: inout String, path: String) throws(WattleError) {
        output += "{"
        for (index, item) in parameters.items.enumerated() {
            if index > 0 { output += "," }
            writeString(item.name, into: &output)
            output += ":"
            try write(value: item.value, into: &output, path: path.isEmpty ? item.name : "\(path).\(item.name)")
        }
        output += "}"
    }

    private static func write(value: Any, into output: inout String, path: String) throws(WattleError) {
        // The common case first, without the casts and reflection below.
        if let string = value as? String {
            writeString(string, into: &output)
            return
        }
        if Parameters.isNil(value) {
            output += "null"
            return
        }
        switch value {
        case let json as JSONValue:
            try write(value: json.parameterValue, into: &output, path: path)
        case let nested as Parameters:
            try write(nested, into: &output, path: path)
        case let dictionary as [String: any Sendable]:
            try write(Parameters(dictionary), into: &output, path: path)
        case let array as [any Sendable]:
            output += "["
            for (index, element) in array.enumerated() {
                if index > 0 { output += "," }
                try write(value: element, into: &output, path: "\(path)[\(index)]")
            }
            output += "]"
        case let string as String:
            writeString(string, into: &output)
        case let bool as Bool:
            output += bool ? "true" : "false"
        case let number as any BinaryInteger:
            output += "\(number)"
        case let number as Double:
            guard number.isFinite else {
                throw .invalidRequest(reason: "the JSON field \"\(path)\" is not a finite number")
            }
            output += Parameters.numberText(number)
        case let number as Float:
            guard number.isFinite else {
                throw .invalidRequest(reason: "the JSON field \"\(path)\" is not a finite number")
            }
            output += Parameters.numberText(number)
        case let number as Decimal:
            // (Its description of NaN is "NaN", which is not JSON.)
            guard !number.isNaN else {
                throw .invalidRequest(reason: "the JSON field \"\(path)\" is not a finite number")
            }
            output += "\(number)"
        default:
            if Parameters.isNonFiniteNumber(value) {
                throw .invalidRequest(reason: "the JSON field \"\(path)\" is not a finite number")
            }
            guard let string = Parameters.scalarString(value) else {
                throw .invalidRequest(
                    reason:
                        "the JSON field \"\(path)\" has a value of type \(type(of: value)); use an Encodable body for custom types"
                )
            }
            writeString(string, into: &output)
        }
    }

    static func writeString(_ string: String, into output: inout String) {
        output += "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    output.unicodeScalars.append(scalar)
                }
            }
        }
        output += "\""
    }

    /// Whether JSON text holds a bare `NaN` token, outside any string: what `JSONEncoder`
    /// writes for `Decimal.nan` (it refuses `Double.nan`), which no JSON parser reads. The bytes
    /// are scanned only when `NaN` occurs in them at all.
    static func hasBareNaN(_ data: Data) -> Bool {
        data.withUnsafeBytes { bytes -> Bool in
            guard let base = bytes.baseAddress, containsNaN(base, count: bytes.count) else { return false }
            var inString = false
            var escaped = false
            var index = 0
            while index < bytes.count {
                let byte = bytes[index]
                if inString {
                    if escaped {
                        escaped = false
                    } else if byte == UInt8(ascii: "\\") {
                        escaped = true
                    } else if byte == UInt8(ascii: "\"") {
                        inString = false
                    }
                } else if byte == UInt8(ascii: "\"") {
                    inString = true
                } else if byte == UInt8(ascii: "N"), index + 2 < bytes.count, bytes[index + 1] == UInt8(ascii: "a"),
                    bytes[index + 2] == UInt8(ascii: "N")
                {
                    return true
                }
                index += 1
            }
            return false
        }
    }

    /// Whether `NaN` occurs anywhere in the bytes (`memchr` for each `N`).
    private static func containsNaN(_ base: UnsafeRawPointer, count: Int) -> Bool {
        var start = 0
        while start < count, let found = memchr(base + start, Int32(UInt8(ascii: "N")), count - start) {
            let index = base.distance(to: UnsafeRawPointer(found))
            if index + 2 < count, base.load(fromByteOffset: index + 1, as: UInt8.self) == UInt8(ascii: "a"),
                base.load(fromByteOffset: index + 2, as: UInt8.self) == UInt8(ascii: "N")
            {
                return true
            }
            start = index + 1
        }
        return false
    }
}
