#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Parses the raw header lines libcurl hands to `CURLOPT_HEADERFUNCTION`.
///
/// Runs once per response on every header byte, so it scans with `memchr` rather than byte by
/// byte through bounds-checked indexing (which took ~3,000 instructions a response).
enum HeaderLineParser {
    /// The status code of a status line (`HTTP/1.1 200 OK`, `HTTP/2 404`), or nil.
    static func statusCode(_ line: UnsafeRawBufferPointer) -> Int? {
        guard line.count >= 10, line[0] == UInt8(ascii: "H"), line[1] == UInt8(ascii: "T"),
            line[2] == UInt8(ascii: "T"), line[3] == UInt8(ascii: "P"), line[4] == UInt8(ascii: "/")
        else { return nil }
        guard let space = line.firstIndex(of: UInt8(ascii: " ")) else { return nil }
        var code = 0
        var digits = 0
        var index = space + 1
        while index < line.count, digits < 3, line[index] >= 48, line[index] <= 57 {
            code = code * 10 + Int(line[index] - 48)
            digits += 1
            index += 1
        }
        return digits == 3 ? code : nil
    }

    /// `Name: value` with surrounding whitespace and the line ending trimmed, or nil for the
    /// blank line, a continuation line or a line without a colon.
    static func field(_ line: UnsafeRawBufferPointer) -> (name: String, value: String)? {
        guard let first = line.first, first != UInt8(ascii: " "), first != UInt8(ascii: "\t"),
            let colon = index(of: UInt8(ascii: ":"), in: line, from: 0), colon > 0
        else { return nil }
        let name = String(decoding: UnsafeRawBufferPointer(rebasing: line[..<colon]), as: UTF8.self)
        var start = colon + 1
        var end = line.count
        while end > start, isWhitespaceOrNewline(line[end - 1]) { end -= 1 }
        while start < end, line[start] == UInt8(ascii: " ") || line[start] == UInt8(ascii: "\t") { start += 1 }
        return (name, text(UnsafeRawBufferPointer(rebasing: line[start..<end])))
    }

    /// A value's bytes as text: UTF-8, else ISO-8859-1 (RFC 9110 section 5.5: `obs-text` is
    /// opaque; read byte for byte, the bytes can be had again, where U+FFFD would lose them).
    static func text(_ bytes: UnsafeRawBufferPointer) -> String {
        if let text = String(validating: bytes, as: UTF8.self) { return text }
        var scalars = String.UnicodeScalarView()
        scalars.reserveCapacity(bytes.count)
        for byte in bytes { scalars.append(Unicode.Scalar(byte)) }
        return String(scalars)
    }

    /// Every field of a header block (the lines after the status line), folded lines joined,
    /// up to the blank line that ends it: what follows are trailer fields (libcurl passes a
    /// chunked body's, and HTTP/2's, to the header callback), which RFC 9110 section 6.5.1 keeps
    /// out of the header section.
    static func fields(_ block: [UInt8]) -> HTTPHeaders {
        var fields: [HTTPHeaders.Field] = []
        block.withUnsafeBytes { all in
            var lines = 0
            var start = 0
            while let end = index(of: UInt8(ascii: "\n"), in: all, from: start) {
                lines += 1
                start = end + 1
            }
            fields.reserveCapacity(lines + 1)
            start = 0
            while start < all.count {
                let end = index(of: UInt8(ascii: "\n"), in: all, from: start).map { $0 + 1 } ?? all.count
                let line = UnsafeRawBufferPointer(rebasing: all[start..<end])
                if line.allSatisfy({ $0 == UInt8(ascii: "\r") || $0 == UInt8(ascii: "\n") }) { break }
                if let field = field(line) {
                    fields.append(HTTPHeaders.Field(name: field.name, value: field.value))
                } else if let folded = continuation(line), !fields.isEmpty {
                    fields[fields.count - 1].value += " " + folded
                }
                start = end
            }
        }
        return HTTPHeaders(fields)
    }

    /// The index of the first `byte` in `buffer` at or after `start`, or nil.
    private static func index(of byte: UInt8, in buffer: UnsafeRawBufferPointer, from start: Int) -> Int? {
        guard start < buffer.count, let base = buffer.baseAddress,
            let found = memchr(base + start, Int32(byte), buffer.count - start)
        else { return nil }
        return base.distance(to: UnsafeRawPointer(found))
    }

    /// The text of an obsolete folded continuation line (starting with space or tab), or nil.
    static func continuation(_ line: UnsafeRawBufferPointer) -> String? {
        guard let first = line.first, first == UInt8(ascii: " ") || first == UInt8(ascii: "\t") else { return nil }
        let folded = text(line).trimmingWhitespace()
        return folded.isEmpty ? nil : folded
    }

    private static func isWhitespaceOrNewline(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\r")
            || byte == UInt8(ascii: "\n")
    }
}

extension StringProtocol {
    /// The text without leading and trailing whitespace (spaces, tabs and line breaks).
    func trimmingWhitespace() -> String {
        trimming(while: \.isWhitespace)
    }

    /// The text without the leading and trailing characters for which `drop` is true.
    func trimming(while drop: (Character) -> Bool) -> String {
        var start = startIndex
        var end = endIndex
        while start < end, drop(self[start]) { start = index(after: start) }
        while end > start, drop(self[index(before: end)]) { end = index(before: end) }
        return String(self[start..<end])
    }
}
