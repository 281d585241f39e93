/// One `ITEM` of the `wattle` command line, httpie-style.
public enum RequestItem: Equatable, Sendable {
    /// `name==value`
    case query(String, String)
    /// `name=value`
    case stringField(String, String)
    /// `name:=json`
    case jsonField(String, String)
    /// `Header:value`; `Header;` for an empty value.
    case header(String, String)
    /// `Header:` with nothing after the colon: the header is not sent, not even as a default
    /// or as one libcurl adds itself (`User-Agent:`, `Accept:`), as in httpie and `curl -H`.
    case removedHeader(String)
    /// `name=@path`: a string field whose value is the file's text.
    case stringFieldFromFile(String, path: String)
    /// `name:=@path`: a raw JSON field whose value is the file's JSON.
    case jsonFieldFromFile(String, path: String)
    /// `name@path`: a file uploaded as a part of a multipart form (`--form`).
    case fileUpload(String, path: String)
    /// `@path`: the whole body from a file; `@-` from standard input.
    case bodyFile(path: String)

    /// Whether the item goes in the body.
    public var isBody: Bool {
        switch self {
        case .query, .header, .removedHeader: false
        default: true
        }
    }

    /// Whether the item is the whole body (`@path`), not a field of one.
    public var isWholeBody: Bool {
        if case .bodyFile = self { return true }
        return false
    }

    /// Whether the item reads standard input (`@-`, `name=@-`, `name:=@-`, `name@-`).
    public var readsStandardInput: Bool {
        switch self {
        case .bodyFile(let path), .stringFieldFromFile(_, let path), .jsonFieldFromFile(_, let path):
            path == "-"
        // (`name@-;type=text/csv`: standard input, of that type.)
        case .fileUpload(_, let path): path == "-" || path.hasPrefix("-;type=")
        default: false
        }
    }

    /// The separators, longest first among those that start alike, so that at one position the
    /// longest wins (`a:=@f` embeds a JSON file, `a:=1` is raw JSON, `a:b` a header).
    private static let separators = ["==", ":=@", ":=", "=@", "=", ":", ";", "@"]

    /// Parses an item: the earliest separator wins, the longest at that position (so `a==b`
    /// is a query, `a:=1` raw JSON, `a=b:c` a string field, `a=b@c` a string field). As in
    /// httpie, a backslash escapes a separator character (`=`, `:`, `@`, `;`) in the name and in
    /// the value (`name=\@text`: the text `@text`, not a file; `q==a\=b`: `a=b`), and a
    /// backslash in the name; any other backslash is kept (`a\b=1`). An item that starts with
    /// `@` is the body from a file (`@-`: standard input). As in httpie, `Header:` alone removes
    /// the header, `Header: ` (a space) and `Header;` send it empty, and `;` takes no value.
    public static func parse(_ text: String) throws(RequestItemError) -> RequestItem {
        let characters = Array(text)
        var name = ""
        var index = 0
        while index < characters.count {
            let character = characters[index]
            if character == "\\", index + 1 < characters.count,
                Self.isEscapable(characters[index + 1]) || characters[index + 1] == "\\"
            {
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
            if let separator = separators.first(where: has) {
                let raw = characters[(index + separator.count)...]
                let value = Self.unescaped(raw)
                if separator == "@", name.isEmpty {
                    guard !value.isEmpty else {
                        throw RequestItemError(message: "\"@\" needs a file name (@-: standard input)")
                    }
                    return .bodyFile(path: value)
                }
                guard !name.isEmpty else {
                    throw RequestItemError(message: "the item \"\(text)\" has no name before \"\(separator)\"")
                }
                switch separator {
                case "==": return .query(name, value)
                case ":=": return .jsonField(name, value)
                case "=": return .stringField(name, value)
                case ":":
                    return raw.isEmpty ? .removedHeader(name) : .header(name, value.drop { $0 == " " }.description)
                case ";":
                    guard raw.isEmpty else {
                        throw RequestItemError(
                            message:
                                "the item \"\(text)\" has text after \";\": Header; sends an empty header, Header:value one with a value"
                        )
                    }
                    return .header(name, "")
                default:
                    guard !value.isEmpty else {
                        throw RequestItemError(message: "the item \"\(text)\" needs a file name after \"\(separator)\"")
                    }
                    switch separator {
                    case ":=@": return .jsonFieldFromFile(name, path: value)
                    case "=@": return .stringFieldFromFile(name, path: value)
                    default: return .fileUpload(name, path: value)
                    }
                }
            }
            name.append(character)
            index += 1
        }
        throw RequestItemError(
            message: "\"\(text)\" is not an item: use name==value, name=value, name:=json, Header:value, "
                + "Header; (empty), Header: (removed), name=@file, name:=@file, name@file (with --form) or @file")
    }
}

extension RequestItem {
    /// The characters a backslash escapes: the separators'.
    fileprivate static func isEscapable(_ character: Character) -> Bool {
        character == "=" || character == ":" || character == "@" || character == ";"
    }

    /// A value with each escaped separator character (`\=`, `\:`, `\@`, `\;`) as itself; any
    /// other backslash kept, as httpie has it.
    fileprivate static func unescaped(_ value: ArraySlice<Character>) -> String {
        guard value.contains("\\") else { return String(value) }
        var text = ""
        var index = value.startIndex
        while index < value.endIndex {
            if value[index] == "\\", index + 1 < value.endIndex, isEscapable(value[index + 1]) {
                text.append(value[index + 1])
                index += 2
            } else {
                text.append(value[index])
                index += 1
            }
        }
        return text
    }
}

/// Why a command-line item could not be parsed.
public struct RequestItemError: Error, Sendable, CustomStringConvertible {
    /// What is wrong, for one line on stderr.
    public let message: String
    /// The message.
    public var description: String { message }
}
