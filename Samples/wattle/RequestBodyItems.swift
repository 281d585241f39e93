import Wattle
import WattleCLIKit

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// The body a command line asks for, httpie-style: its fields as a JSON object (by default) or
/// a form (`--form`: URL-encoded, or multipart when it uploads a file), or one whole file
/// (`@file`, `@-` for standard input).
enum RequestBodyItems {
    private enum Field {
        case string(String)
        case json(String)
        /// A file part: read whole, or streamed from disk as it is sent (`bytes` nil) when it
        /// is a regular file; its type as given (`;type=`), else from its name.
        case file(path: String, bytes: [UInt8]?, type: String?)
    }

    /// The body for `items` (items that are not body items are skipped), or nil for none.
    ///
    /// - Parameters:
    ///   - form: `--form`: fields are form fields, and `name@file` uploads are allowed.
    ///   - readStandardInput: with no body items, take the body from standard input.
    static func body(for items: [RequestItem], form: Bool, readStandardInput: Bool) throws -> RequestBody? {
        var fields: [(String, Field)] = []
        var bodyFile: String?
        for item in items {
            switch item {
            case .query, .header, .removedHeader:
                continue
            case .stringField(let name, let value):
                fields.append((name, .string(value)))
            case .jsonField(let name, let value):
                guard !form else {
                    throw CLIError.usage("\(name):= is a JSON field: not with --form (use \(name)=value)")
                }
                guard JSONPrinter.isJSON(Data(value.utf8)) else {
                    throw CLIError.usage("the value of \(name):= is not valid JSON: \(value)")
                }
                fields.append((name, .json(value)))
            case .stringFieldFromFile(let name, let path):
                guard let text = String(validating: try read(path), as: UTF8.self) else {
                    throw CLIError.usage(
                        "\(name)=@\(path): the file is not UTF-8 text (upload it with --form and \(name)@\(path))")
                }
                fields.append((name, .string(text)))
            case .jsonFieldFromFile(let name, let path):
                guard !form else {
                    throw CLIError.usage("\(name):=@ is a JSON field: not with --form (use \(name)=@\(path))")
                }
                var bytes = try read(path)
                // A UTF-8 byte order mark (some editors write one) is not part of the JSON.
                if bytes.starts(with: byteOrderMark) { bytes.removeFirst(3) }
                guard JSONPrinter.isJSON(Data(bytes)), let text = String(validating: bytes, as: UTF8.self) else {
                    throw CLIError.usage("\(name):=@\(path): the file is not valid JSON")
                }
                fields.append((name, .json(trimmed(text))))
            case .fileUpload(let name, let written):
                guard form else { throw CLIError.usage("\(name)@\(written) uploads a file: it needs --form (-f)") }
                let (path, type) = try fileAndType(written)
                // A regular file is streamed: a file of any size costs no memory.
                let bytes = path != "-" && InputFile.isRegularFile(path) ? nil : try read(path)
                fields.append((name, .file(path: path, bytes: bytes, type: type)))
            case .bodyFile(let path):
                guard bodyFile == nil else { throw CLIError.usage("only one @file can be the body") }
                bodyFile = path
            }
        }
        if let bodyFile {
            guard fields.isEmpty else {
                throw CLIError.usage("the body from @\(bodyFile) cannot be mixed with body fields")
            }
            if bodyFile != "-", InputFile.isRegularFile(bodyFile) {
                // Streamed from disk as it is sent: a file of any size costs no memory.
                return .file(URL(fileURLWithPath: bodyFile), contentType: InputFile.mediaType(forFileName: bodyFile))
            }
            return whole(try read(bodyFile), named: bodyFile)
        }
        if fields.isEmpty {
            // An empty standard input is no body, as if it had not been redirected.
            guard readStandardInput, case let bytes = try read("-"), !bytes.isEmpty else { return nil }
            // With --form, standard input is the form, already encoded (`a=1&b=2`), as in httpie.
            if form { return .data(Data(bytes), contentType: "application/x-www-form-urlencoded") }
            return whole(bytes, named: "-")
        }
        guard form else { return json(fields) }
        return fields.contains(where: { if case .file = $0.1 { true } else { false } })
            ? multipart(fields) : urlEncoded(fields)
    }

    /// httpie's `name@path;type=MIME`: the path and the type it gives, when the whole text is
    /// not a file's name itself. The type is visible ASCII with a `/` (it goes in the part's
    /// `Content-Type` line).
    private static func fileAndType(_ written: String) throws -> (path: String, type: String?) {
        let bytes = Array(written.utf8)
        let marker = Array(";type=".utf8)
        guard bytes.count > marker.count, access(written, F_OK) != 0,
            let start = (0...(bytes.count - marker.count)).last(where: {
                bytes[$0..<($0 + marker.count)].elementsEqual(marker)
            })
        else { return (written, nil) }
        let type = bytes[(start + marker.count)...]
        guard type.contains(UInt8(ascii: "/")), type.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else {
            throw CLIError.usage("\(written): the type after ;type= is not a media type such as text/csv")
        }
        return (String(decoding: bytes[..<start], as: UTF8.self), String(decoding: type, as: UTF8.self))
    }

    /// Text without the whitespace around it (a JSON file's last newline).
    private static func trimmed(_ text: String) -> String {
        let start = text.drop(while: \.isWhitespace)
        guard let last = start.lastIndex(where: { !$0.isWhitespace }) else { return "" }
        return String(start[...last])
    }

    private static func read(_ path: String) throws -> [UInt8] {
        do { return try InputFile.read(path) } catch { throw CLIError.failed(error.description) }
    }

    /// A whole body: its type from the file name, or for standard input JSON when it is JSON.
    private static func whole(_ bytes: [UInt8], named path: String) -> RequestBody {
        guard path == "-" else { return .data(Data(bytes), contentType: InputFile.mediaType(forFileName: path)) }
        // A UTF-8 byte order mark before JSON (some editors write one) is dropped, as for
        // `:=@file`: JSON text has none (RFC 8259, section 8.1), and a server's parser may refuse it.
        let json = bytes.starts(with: byteOrderMark) ? Array(bytes.dropFirst(3)) : bytes
        if JSONPrinter.isJSON(Data(json)) { return .data(Data(json), contentType: "application/json") }
        return .data(Data(bytes), contentType: "application/octet-stream")
    }

    /// UTF-8's byte order mark, U+FEFF.
    private static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]

    private static func json(_ fields: [(String, Field)]) -> RequestBody {
        // File uploads are refused without --form, above.
        let members = lastOfEachName(fields).compactMap { name, field -> String? in
            switch field {
            case .string(let text): "\(RequestInvocation.jsonString(name)):\(RequestInvocation.jsonString(text))"
            case .json(let text): "\(RequestInvocation.jsonString(name)):\(text)"
            case .file: nil
            }
        }
        return .data(Data(("{" + members.joined(separator: ",") + "}").utf8), contentType: "application/json")
    }

    /// The fields with one per name, as in httpie: a repeated name's last value, in the place
    /// of its first (`a=1 b=2 a=3` is `{"a":"3","b":"2"}`). A JSON object with a name twice
    /// is one its readers disagree on (RFC 8259, section 4: some keep the first, some the last).
    /// Names compare by their UTF-8 bytes, as JSON's do, not by `String`'s canonical equivalence.
    static func lastOfEachName<Value>(_ fields: [(String, Value)]) -> [(String, Value)] {
        var kept: [(String, Value)] = []
        var position: [[UInt8]: Int] = [:]
        for (name, value) in fields {
            let key = Array(name.utf8)
            if let index = position[key] {
                kept[index].1 = value
            } else {
                position[key] = kept.count
                kept.append((name, value))
            }
        }
        return kept
    }

    private static func urlEncoded(_ fields: [(String, Field)]) -> RequestBody {
        // JSON fields are refused with --form, and a file makes the form multipart.
        .form(
            Parameters(
                fields.compactMap { name, field -> (String, any Sendable)? in
                    guard case .string(let text) = field else { return nil }
                    return (name, text)
                }))
    }

    private static func multipart(_ fields: [(String, Field)]) -> RequestBody {
        .multipart(
            fields.map { name, field in
                switch field {
                case .string(let text), .json(let text):
                    return .field(name, text)
                case .file(let path, let bytes, let given):
                    let filename = path.split(separator: "/").last.map(String.init) ?? path
                    let type = given ?? InputFile.mediaType(forFileName: filename)
                    guard let bytes else {
                        return .file(
                            name, contentsOf: URL(fileURLWithPath: path), filename: filename, contentType: type)
                    }
                    return .file(name, filename: filename, contentType: type, data: Data(bytes))
                }
            })
    }
}
