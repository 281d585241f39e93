/// One `ITEM` of the `wattle` command line, httpie-style.
public enum RequestItem: Equatable, Sendable {
    /// `name==value`
    case query(String, String)
    /// `name=value`
    case stringField(String, String)
    /// `name:=json`
    case jsonField(String, String)
    /// `Header:value`
    case header(String, String)

    /// Whether the item goes in the body.
    public var isBody: Bool {
        switch self {
        case .stringField, .jsonField: true
        default: false
        }
    }

    /// Parses an item: the earliest separator wins, the longest at that position (so `a==b`
    /// is a query, `a:=1` raw JSON, `a=b:c` a string field). A backslash escapes a separator
    /// character in the name.
    public static func parse(_ text: String) throws(RequestItemError) -> RequestItem {
        let characters = Array(text)
        var name = ""
        var index = 0
        while index < characters.count {
            let character = characters[index]
            if character == "\\", index + 1 < characters.count {
                name.append(characters[index + 1])
                index += 2
                continue
            }
            // Compare in place: building the rest of the string at every position made
            // parsing quadratic (a 20,000-character item took 42 s; found by fuzzing).
            func has(_ pattern: String) -> Bool {
                var position = index
                for expected in pattern {
                    guard position < characters.count, characters[position] == expected else { return false }
                    position += 1
                }
                return true
            }
            let separator: String? = has("==") ? "==" : has(":=") ? ":=" : has("=") ? "=" : has(":") ? ":" : nil
            if let separator {
                let value = String(characters[(index + separator.count)...])
                guard !name.isEmpty else { throw RequestItemError(message: "the item \"\(text)\" has no name before \"\(separator)\"") }
                switch separator {
                case "==": return .query(name, value)
                case ":=": return .jsonField(name, value)
                case "=": return .stringField(name, value)
                default: return .header(name, value.drop { $0 == " " }.description)
                }
            }
            name.append(character)
            index += 1
        }
        throw RequestItemError(message: "\"\(text)\" is not an item: use name==value, name=value, name:=json or Header:value")
    }
}

/// Why a command-line item could not be parsed.
public struct RequestItemError: Error, Sendable, CustomStringConvertible {
    /// What is wrong, for one line on stderr.
    public let message: String
    /// The message.
    public var description: String { message }
}
