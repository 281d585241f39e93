#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// One part of a `multipart/form-data` body (RFC 7578), for ``RequestBody/multipart(_:boundary:)``.
///
/// ```swift
/// let body = RequestBody.multipart([
///     .field("title", "Holiday"),
///     .file("photo", filename: "koala.jpg", contentType: "image/jpeg", data: jpeg),
///     .file("video", contentsOf: movieURL, contentType: "video/mp4"),  // streamed from disk
/// ])
/// ```
public struct MultipartPart: Sendable, Hashable {
    /// The form field name.
    public var name: String
    /// The file name, for file parts.
    public var filename: String?
    /// The part's content type, if any.
    public var contentType: String?
    /// The part's bytes (empty for a part from ``fileURL``).
    public var data: Data
    /// The file whose bytes are the part's content, streamed from disk as they are sent
    /// (``file(_:contentsOf:filename:contentType:)``); ``data`` is then ignored.
    public var fileURL: URL?

    /// Creates a part.
    public init(name: String, filename: String? = nil, contentType: String? = nil, data: Data) {
        self.name = name
        self.filename = filename
        self.contentType = contentType
        self.data = data
    }

    /// A text field.
    public static func field(_ name: String, _ value: String) -> MultipartPart {
        MultipartPart(name: name, data: Data(value.utf8))
    }

    /// A file.
    public static func file(
        _ name: String, filename: String, contentType: String = "application/octet-stream", data: Data
    )
        -> MultipartPart
    {
        MultipartPart(name: name, filename: filename, contentType: contentType, data: data)
    }

    /// A file from disk, streamed as it is sent: never read into memory whole, so a part of
    /// any size costs the same memory. Its file name is the URL's last path component unless
    /// one is given.
    ///
    /// As with ``RequestBody/file(_:contentType:)``, the file's size is taken when each attempt
    /// starts and it is opened once a connection is ready, and one that cannot be opened or is
    /// not a regular file fails the request unsent with ``WattleError/fileError(path:reason:)``; a `url` that is not a file
    /// URL fails it with ``WattleError/invalidRequest(reason:)``.
    public static func file(
        _ name: String, contentsOf url: URL, filename: String? = nil, contentType: String = "application/octet-stream"
    ) -> MultipartPart {
        var part = MultipartPart(
            name: name, filename: filename ?? url.lastPathComponent, contentType: contentType, data: Data())
        part.fileURL = url
        return part
    }

    /// Whether `text` has a byte a header value may not hold (``HTTPHeaders``' rule: a control
    /// character other than HTAB, or DEL). On the bytes: `"\r\n"` is one `Character`, which a
    /// search for `"\r"` or `"\n"` does not find.
    static func hasControlCharacter(_ text: String) -> Bool {
        text.utf8.contains(where: HTTPHeaders.isControlByte)
    }

    /// Why `boundary` cannot delimit a body (RFC 2046 section 5.1.1: 1 to 70 of its `bchars`,
    /// not ending in a space), or nil when it can.
    static func problem(withBoundary boundary: String) -> String? {
        let bytes = boundary.utf8
        guard (1...70).contains(bytes.count) else {
            return "the multipart boundary is \(bytes.count) bytes; it must be 1 to 70"
        }
        if let bad = bytes.first(where: { !isBoundaryByte($0) }) {
            return "the multipart boundary contains \(Redaction.describe(byte: bad)), which a boundary cannot hold"
        }
        if bytes.last == UInt8(ascii: " ") { return "the multipart boundary ends in a space" }
        return nil
    }

    /// The boundary as the `Content-Type`'s parameter: quoted when it holds a character a
    /// token cannot (a space, `(`, `:`, `?`...), as RFC 2046 requires; parsers that split at
    /// the space found another boundary than the body's.
    static func boundaryParameter(_ boundary: String) -> String {
        boundary.utf8.allSatisfy(HTTPHeaders.isTokenByte) ? boundary : "\"\(boundary)\""
    }

    /// RFC 2046 `bchars`: DIGIT, ALPHA, `'()+_,-./:=?` and space.
    private static func isBoundaryByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default:
            "'()+_,-./:=? ".utf8.contains(byte)
        }
    }

    /// Whether `bytes` occur in what the part puts in the body from memory: its name, file name
    /// and content type, and its bytes unless they come from a file (not read for this).
    func holds(_ bytes: Data) -> Bool {
        let texts = [name, filename ?? "", contentType ?? ""]
        return texts.contains { Data($0.utf8).firstRange(of: bytes) != nil }
            || (fileURL == nil && data.firstRange(of: bytes) != nil)
    }

    /// A part's name or file name in quotes as browsers write it (the HTML standard's
    /// multipart/form-data encoding, and curl's since 7.81): `"` as `%22`, CR as `%0D` and LF as
    /// `%0A`, a backslash as it is. Servers that read these fields as browsers send them (Node's
    /// and the web platform's form parsers) take no backslash escapes: `\"` ended the name
    /// there, and a Windows path's `\` arrived doubled.
    static func quoted(_ value: String) -> String {
        // By scalar, not `Character`: `"` followed by a combining mark is one `Character` that
        // is not `"`, and let a bare quote through (`x"\u{301}; name="is_admin`).
        var result = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": result += "%22"
            case "\r": result += "%0D"
            case "\n": result += "%0A"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}

extension RequestBody {
    /// A request's own multipart `Content-Type` with the body's boundary added, when it names
    /// none (`multipart/form-data`, or `multipart/mixed; charset=utf-8`) and the body is
    /// multipart; nil otherwise (the request's own type is sent as it is).
    static func multipartType(_ own: String, boundaryFrom bodyType: String) -> String? {
        guard bodyType.hasPrefix("multipart/"), own.utf8.count >= 10, own.prefix(10).lowercased() == "multipart/",
            bodyType.contains("; boundary="),
            let parameters = bodyType.firstIndex(of: ";"), !own.lowercased().contains("boundary=")
        else { return nil }
        var type = Substring(own)
        while let last = type.last, last == " " || last == ";" || last == "\t" { type = type.dropLast() }
        return String(type) + String(bodyType[parameters...])
    }

    /// A `multipart/form-data` body. The boundary is random unless given; a random one that
    /// occurs inside a part held in memory is replaced by a fresh one. A boundary you give is
    /// kept as it is (your own `Content-Type` may name it), so one that a part held in memory
    /// contains after `--` (which would end the part there), or one RFC 2046 does not allow
    /// (empty, over 70 bytes, a character outside its set, a last space), or a part's content
    /// type with a control character in it, fails the request unsent with
    /// ``WattleError/invalidRequest(reason:)``.
    ///
    /// With a part from a file (``MultipartPart/file(_:contentsOf:filename:contentType:)``) the
    /// body is sent from its ``segments``: the parts' headers and in-memory parts from memory,
    /// each file from disk as it goes out, with a `Content-Length` taken when each attempt
    /// starts. Files are not read to look for the boundary: a random one (122 random bits)
    /// does not occur in them by chance, and a boundary you give is your choice to make.
    public static func multipart(_ parts: [MultipartPart], boundary: String? = nil) -> RequestBody {
        // A boundary of the caller's that cannot be one fails, even where a part holds it.
        if let boundary, let reason = MultipartPart.problem(withBoundary: boundary) {
            return .failing(.invalidRequest(reason: reason), contentType: "multipart/form-data")
        }
        if let boundary, let part = parts.first(where: { $0.holds(Data("--\(boundary)".utf8)) }) {
            // Replacing it would leave a `Content-Type` of the caller's own naming the old one.
            return .failing(
                .invalidRequest(
                    reason:
                        "the multipart boundary \(MultipartPart.quoted(boundary)) occurs in the part \(MultipartPart.quoted(part.name)) (after --, where it would end the part): give another boundary, or none for a random one"
                ), contentType: "multipart/form-data")
        }
        var chosen = boundary ?? "wattle-\(UUID().uuidString)"
        while boundary == nil, parts.contains(where: { $0.holds(Data(chosen.utf8)) }) {
            chosen = "wattle-\(UUID().uuidString)"
        }
        let contentType = "multipart/form-data; boundary=\(MultipartPart.boundaryParameter(chosen))"
        if let part = parts.first(where: { $0.contentType.map(MultipartPart.hasControlCharacter) == true }) {
            // A CR or LF would end the part's header early (`"image/jpeg\r\n"` put the file's
            // first bytes after a blank line), or add a header of the caller's own.
            return .failing(
                .invalidRequest(
                    reason:
                        "the content type of the multipart part \(MultipartPart.quoted(part.name)) contains a control character"
                ), contentType: contentType)
        }
        if let part = parts.first(where: { $0.fileURL?.isFileURL == false }), let url = part.fileURL {
            return .failing(
                .invalidRequest(
                    reason:
                        "the multipart part \(MultipartPart.quoted(part.name)) must be a file URL, not \(Redaction.url(url.absoluteString))"
                ), contentType: contentType)
        }
        var segments: [Segment] = []
        var data = Data()
        for part in parts {
            data.append(Data("--\(chosen)\r\n".utf8))
            var disposition = "Content-Disposition: form-data; name=\(MultipartPart.quoted(part.name))"
            if let filename = part.filename { disposition += "; filename=\(MultipartPart.quoted(filename))" }
            data.append(Data((disposition + "\r\n").utf8))
            if let type = part.contentType {
                data.append(Data("Content-Type: \(type)\r\n".utf8))
            }
            data.append(Data("\r\n".utf8))
            if let file = part.fileURL {
                segments.append(.data(data))
                segments.append(.file(file))
                data = Data()
            } else {
                data.append(part.data)
            }
            data.append(Data("\r\n".utf8))
        }
        data.append(Data("--\(chosen)--\r\n".utf8))
        guard !segments.isEmpty else { return RequestBody(data: data, contentType: contentType) }
        segments.append(.data(data))
        return RequestBody(segments: segments, contentType: contentType)
    }
}
