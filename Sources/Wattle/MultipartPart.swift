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
/// ])
/// ```
public struct MultipartPart: Sendable, Hashable {
    /// The form field name.
    public var name: String
    /// The file name, for file parts.
    public var filename: String?
    /// The part's content type, if any.
    public var contentType: String?
    /// The part's bytes.
    public var data: Data

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
    public static func file(_ name: String, filename: String, contentType: String = "application/octet-stream", data: Data)
        -> MultipartPart
    {
        MultipartPart(name: name, filename: filename, contentType: contentType, data: data)
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
    /// occurs inside a part is replaced by a fresh one.
    public static func multipart(_ parts: [MultipartPart], boundary: String? = nil) -> RequestBody {
        var chosen = boundary ?? "wattle-\(UUID().uuidString)"
        while parts.contains(where: { $0.data.firstRange(of: Data(chosen.utf8)) != nil }) {
            chosen = "wattle-\(UUID().uuidString)"
        }
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
            data.append(part.data)
            data.append(Data("\r\n".utf8))
        }
        data.append(Data("--\(chosen)--\r\n".utf8))
        return RequestBody(data: data, contentType: "multipart/form-data; boundary=\(chosen)")
    }
}
