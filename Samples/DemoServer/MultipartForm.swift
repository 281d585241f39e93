public import Foundation

/// A `multipart/form-data` body (RFC 7578) split into its parts, as a server reads it: the
/// tests check what Wattle and the CLI send against it.
public enum MultipartForm {
    /// One part: its header lines (CRLF between them) and its content.
    public struct Part: Sendable {
        /// The header lines, without the blank line that ends them.
        public var head: String
        /// The content, without the CRLF before the next delimiter.
        public var body: Data
    }

    /// The parts of `body` delimited by `boundary`, up to the closing delimiter (or to the
    /// first malformed part).
    public static func parts(of body: Data, boundary: String) -> [Part] {
        let delimiter = Data("--\(boundary)".utf8)
        let lineBreak = Data("\r\n".utf8)
        var parts: [Part] = []
        var rest = body[...]
        while let start = rest.range(of: delimiter) {
            rest = rest[start.upperBound...]
            guard rest.starts(with: lineBreak) else { break }  // "--": the end
            rest = rest.dropFirst(2)
            guard let end = rest.range(of: lineBreak + delimiter), let blank = rest.range(of: lineBreak + lineBreak),
                blank.lowerBound <= end.lowerBound
            else { break }
            let head = String(decoding: rest[rest.startIndex..<blank.lowerBound], as: UTF8.self)
            parts.append(Part(head: head, body: Data(rest[blank.upperBound..<end.lowerBound])))
            rest = rest[(end.lowerBound + 2)...]
        }
        return parts
    }
}
