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
    public static func pretty(_ data: Data, colours: Bool) -> String? {
        guard JSONPrinter.isJSON(data),
            let text = String(validating: data, as: UTF8.self)
        else { return nil }
        var output = ""
        var indent = 0
        var index = text.startIndex
        func newline() { output += "\n" + String(repeating: "  ", count: indent) }
        while index < text.endIndex {
            let character = text[index]
            switch character {
            case "\"":
                var end = text.index(after: index)
                while end < text.endIndex, text[end] != "\"" {
                    if text[end] == "\\" { end = text.index(after: end) }
                    end = text.index(after: end)
                }
                let token = String(text[index...end])
                var probe = text.index(after: end)
                while probe < text.endIndex, text[probe].isWhitespace { probe = text.index(after: probe) }
                let isKey = probe < text.endIndex && text[probe] == ":"
                output += colours ? (isKey ? key : string) + token + reset : token
                index = text.index(after: end)
                continue
            case "{", "[":
                output.append(character)
                var probe = text.index(after: index)
                while probe < text.endIndex, text[probe].isWhitespace { probe = text.index(after: probe) }
                if probe < text.endIndex, text[probe] == "}" || text[probe] == "]" {
                    output.append(text[probe])
                    index = text.index(after: probe)
                    continue
                }
                indent += 1
                newline()
            case "}", "]":
                indent -= 1
                newline()
                output.append(character)
            case ",":
                output.append(character)
                newline()
            case ":":
                output += ": "
            case " ", "\n", "\r", "\t":
                break
            default:
                var end = index
                while end < text.endIndex, !",}] \n\r\t".contains(text[end]) { end = text.index(after: end) }
                let token = String(text[index..<end])
                output += colours ? literal + token + reset : token
                index = end
                continue
            }
            index = text.index(after: index)
        }
        return output
    }

    /// Whether `data` is one JSON value (an object, an array or a scalar), as RFC 8259 has it
    /// (no trailing comma, no `NaN`, UTF-8).
    public static func isJSON(_ data: Data) -> Bool {
        StrictJSON.isValid(Array(data))
    }
}
