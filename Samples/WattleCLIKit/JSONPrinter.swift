import Wattle

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Re-indents JSON text (keeping the server's key order) and colours it for a terminal.
public enum JSONPrinter {
    private static let key = "\u{1B}[34m", string = "\u{1B}[32m", literal = "\u{1B}[33m", reset = "\u{1B}[0m"

    /// The JSON pretty-printed with two-space indentation, or nil if `data` is not JSON.
    ///
    /// It scans UTF-8 bytes, not characters: every byte JSON's structure uses is ASCII, and no
    /// byte of a multi-byte character is, so a string's text is copied untouched whatever it
    /// holds. (Scanning `Character`s went wrong where a string began with a combining mark, which
    /// joins the opening quote into one character, or ended with a prepended mark such as
    /// U+0600, which joins the closing one: the printer split the string or ran off its end.)
    public static func pretty(_ data: Data, colours: Bool) -> String? {
        let bytes = Array(data)
        guard StrictJSON.isValid(bytes) else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count + bytes.count / 2)
        var indent = 0
        func append(_ text: String) { output.append(contentsOf: text.utf8) }
        func newline() {
            output.append(UInt8(ascii: "\n"))
            output.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 2 * indent))
        }
        func isSpace(_ byte: UInt8) -> Bool {
            byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r")
                || byte == UInt8(ascii: "\t")
        }
        func nextSignificant(after position: Int) -> Int {
            var probe = position + 1
            while probe < bytes.count, isSpace(bytes[probe]) { probe += 1 }
            return probe
        }
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                // The closing quote: the first one not escaped (the JSON is valid, so it exists).
                var end = index + 1
                while bytes[end] != UInt8(ascii: "\"") {
                    end += bytes[end] == UInt8(ascii: "\\") ? 2 : 1
                }
                let probe = nextSignificant(after: end)
                let isKey = probe < bytes.count && bytes[probe] == UInt8(ascii: ":")
                if colours { append(isKey ? key : string) }
                output.append(contentsOf: bytes[index...end])
                if colours { append(reset) }
                index = end + 1
                continue
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                output.append(byte)
                let probe = nextSignificant(after: index)
                if probe < bytes.count, bytes[probe] == UInt8(ascii: "}") || bytes[probe] == UInt8(ascii: "]") {
                    output.append(bytes[probe])
                    index = probe + 1
                    continue
                }
                indent += 1
                newline()
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                indent -= 1
                newline()
                output.append(byte)
            case UInt8(ascii: ","):
                output.append(byte)
                newline()
            case UInt8(ascii: ":"):
                append(": ")
            case _ where isSpace(byte):
                break
            default:
                // A number, true, false or null: ASCII up to the next separator or space.
                var end = index
                while end < bytes.count, !isSpace(bytes[end]), !Self.separators.contains(bytes[end]) { end += 1 }
                if colours { append(literal) }
                output.append(contentsOf: bytes[index..<end])
                if colours { append(reset) }
                index = end
                continue
            }
            index += 1
        }
        return String(decoding: output, as: UTF8.self)
    }

    private static let separators: Set<UInt8> = [UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]")]

    /// Whether `data` is one JSON value (an object, an array or a scalar), as RFC 8259 has it
    /// (no trailing comma, no `NaN`, UTF-8).
    public static func isJSON(_ data: Data) -> Bool {
        StrictJSON.isValid(Array(data))
    }
}
