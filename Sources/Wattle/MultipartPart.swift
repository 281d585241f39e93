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
    /// As with ``RequestBody/file(_:contentType:)``, the file is opened and its size taken when
    /// each attempt starts, and one that cannot be opened or is not a regular file fails the
    /// request unsent with ``WattleError/fileError(path:reason:)``; a `url` that is not a file
    /// URL fails it with ``WattleError/invalidRequest(reason:)``.
    public static func file(
        _ name: String, contentsOf url: URL, filename: String? = nil, contentType: String = "application/octet-stream"
    ) -> MultipartPart {
        var part = MultipartPart(
            name: name, filename: filename ?? url.lastPathComponent, contentType: contentType, data: Data())
        part.fileURL = url
        return part
    }

    /// A quoted-string for a header parameter: `"` and `\` escaped, CR and LF refused by turning
    /// them into spaces (they would end the part's header).
    static func quoted(_ value: String) -> String {
        var result = "\""
        for character in value {
            switch character {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\r", "\n", "\r\n": result += " "
            default: result.append(character)
            }
        }
        return result + "\""
    }
}

extension RequestBody {
    /// A `multipart/form-data` body. The boundary is random unless given; a boundary that
    /// occurs inside a part held in memory is replaced by a fresh one.
    ///
    /// With a part from a file (``MultipartPart/file(_:contentsOf:filename:contentType:)``) the
    /// body is sent from its ``segments``: the parts' headers and in-memory parts from memory,
    /// each file from disk as it goes out, with a `Content-Length` taken when each attempt
    /// starts. Files are not read to look for the boundary: a random one (122 random bits)
    /// does not occur in them by chance, and a boundary you give is your choice to make.
    public static func multipart(_ parts: [MultipartPart], boundary: String? = nil) -> RequestBody {
        var chosen = boundary ?? "wattle-\(UUID().uuidString)"
        while parts.contains(where: { $0.fileURL == nil && $0.data.firstRange(of: Data(chosen.utf8)) != nil }) {
            chosen = "wattle-\(UUID().uuidString)"
        }
        let contentType = "multipart/form-data; boundary=\(chosen)"
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
            if let type = part.contentType, !type.contains("\r"), !type.contains("\n") {
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
