// libFuzzer target: the `wattle` CLI's item parser (`RequestItem.parse`).
//
// Properties: parsing never crashes; a parsed item has a non-empty name (a body file, a
// non-empty path); for ASCII input, the item written back (separator characters and backslashes
// escaped in the name, separator characters in the value) parses to the same item (`Name:` alone
// is a removed header, `Name: ` with the space an empty one).

import WattleCLIKit
import WattleFuzzSupport

func fuzzOne(_ bytes: UnsafeRawBufferPointer) {
    let text = String(decoding: bytes, as: UTF8.self)
    let item: RequestItem
    do {
        item = try RequestItem.parse(text)
    } catch {
        fuzzCheck(!error.message.isEmpty, "an empty error message")
        return
    }
    let (name, separator, value): (String, String, String)
    switch item {
    case .query(let n, let v): (name, separator, value) = (n, "==", v)
    case .stringField(let n, let v): (name, separator, value) = (n, "=", v)
    case .jsonField(let n, let v): (name, separator, value) = (n, ":=", v)
    case .stringFieldFromFile(let n, let path): (name, separator, value) = (n, "=@", path)
    case .jsonFieldFromFile(let n, let path): (name, separator, value) = (n, ":=@", path)
    case .fileUpload(let n, let path): (name, separator, value) = (n, "@", path)
    case .bodyFile(let path):
        fuzzCheck(text.hasPrefix("@") && !path.isEmpty, "\(item) from \(text.debugDescription)")
        // The path is the rest, its escaped separator characters unescaped: written back escaped,
        // it is the same path.
        guard text.utf8.allSatisfy({ $0 < 0x80 }) else { return }
        checkWrittenBack(item, as: "@" + escaped(path, backslashes: false))
        return
    case .header(let n, let v):
        // ": ", not ":": leading spaces are dropped from a header value, and without one a value
        // starting with "=" would read as a JSON field ("a:=b"), as in httpie.
        (name, separator, value) = (n, ": ", v)
        fuzzCheck(!v.hasPrefix(" "), "a header value kept its leading space: \(item)")
    case .removedHeader(let n):
        // "Name:" with nothing after the colon.
        (name, separator, value) = (n, ":", "")
    }
    fuzzCheck(!name.isEmpty, "an item with an empty name: \(item)")
    guard text.utf8.allSatisfy({ $0 < 0x80 }) else { return }
    // The value's separator characters are written escaped (`a=\@x` is text, not a file).
    checkWrittenBack(item, as: escaped(name, backslashes: true) + separator + escaped(value, backslashes: false))
}

/// `text` with each separator character (`=`, `:`, `@`, `;`), and with `backslashes` each
/// backslash (a name's), behind a backslash.
func escaped(_ text: String, backslashes: Bool) -> String {
    var written = ""
    for character in text {
        if character == "=" || character == ":" || character == "@" || character == ";"
            || (backslashes && character == "\\")
        {
            written.append("\\")
        }
        written.append(character)
    }
    return written
}

/// Checks that `written` parses to `item`.
func checkWrittenBack(_ item: RequestItem, as written: String) {
    let again = try? RequestItem.parse(written)
    fuzzCheck(again == item, "\(item) written as \(written.debugDescription) parses as \(String(describing: again))")
}

@main enum FuzzCLIItemMain {
    static func main() {
        FuzzMain.run(name: "FuzzCLIItem") { data, size in
            fuzzOne(UnsafeRawBufferPointer(start: data, count: size))
            return 0
        }
    }
}
