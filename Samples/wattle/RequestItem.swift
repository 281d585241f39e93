/// One `ITEM` of the command line, httpie-style.
enum RequestItem: Equatable {
    /// `name==value`
    case query(String, String)
    /// `name=value`
    case stringField(String, String)
    /// `name:=json`
    case jsonField(String, String)
    /// `Header:value`
    case header(String, String)

    /// Whether the item goes in the body.
    var isBody: Bool {
        switch self {
        case .stringField, .jsonField: true
        default: false
        }
    }

    /// Parses an item: the earliest separator wins, the longest at that position (so `a==b`
    /// is a query, `a:=1` raw JSON, `a=b:c` a string field). A backslash escapes a separator
    /// character in the name.
    static func parse(_ text: String) throws -> RequestItem {
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
            let rest = String(characters[index...])
            let separator: String? =
                rest.hasPrefix("==") ? "==" : rest.hasPrefix(":=") ? ":=" : rest.hasPrefix("=") ? "=" : rest.hasPrefix(":") ? ":" : nil
            if let separator {
                let value = String(characters[(index + separator.count)...])
                guard !name.isEmpty else { throw CLIError.usage("the item \"\(text)\" has no name before \"\(separator)\"") }
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
        throw CLIError.usage("\"\(text)\" is not an item: use name==value, name=value, name:=json or Header:value")
    }
}
