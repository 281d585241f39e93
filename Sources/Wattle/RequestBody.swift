#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// The body of a request, already encoded, with its content type.
///
/// ```swift
/// let body = RequestBody.json(NewUser(name: "Ada"))            // any Encodable
/// let body = RequestBody.json(["name": "Ada", "admin": false])  // ordered JSON object
/// let body = RequestBody.form(["grant_type": "refresh_token"])
/// let body = RequestBody.data(bytes, contentType: "image/png")
/// let body = RequestBody.file(videoURL, contentType: "video/mp4")  // streamed from disk
/// ```
public struct RequestBody: Sendable, CustomReflectable {
    /// The encoded bytes (empty for ``none``).
    public var data: Data
    /// The `Content-Type` sent with the body, unless the request sets its own (a request's own
    /// multipart type without a boundary gets this one's boundary); it replaces a
    /// `Content-Type` in ``Configuration/defaultHeaders``.
    public var contentType: String?
    /// The file streamed as the body (``file(_:contentType:)``); ``data`` is then empty, and
    /// ignored if set.
    public private(set) var file: URL?
    /// The pieces of a body sent in order from memory and from files, for a
    /// ``multipart(_:boundary:)`` body with a part from a file; empty otherwise. ``data`` is then
    /// empty, and ignored if set.
    public private(set) var segments: [Segment] = []
    /// A JSON object from parameters that could not be encoded; reported when sent.
    var deferredError: WattleError?

    /// What `dump` shows: the content type, the size of the bytes (not the bytes: a body may
    /// carry a password), and the file or the number of pieces streamed.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "contentType": contentType as Any, "data": "\(data.count) bytes", "file": file?.path as Any,
                "segments": "\(segments.count) pieces",
            ],
            displayStyle: .struct)
    }

    /// No body.
    public static let none = RequestBody(data: Data(), contentType: nil)

    /// An empty body that fails its request unsent with `error`.
    static func failing(_ error: WattleError, contentType: String?) -> RequestBody {
        var body = RequestBody(data: Data(), contentType: contentType)
        body.deferredError = error
        return body
    }

    /// What `JSONEncoder` writes for a `Decimal.nan`: a bare `NaN`, which is not JSON.
    private struct NonFiniteDecimal: Error, CustomStringConvertible {
        var description: String { "a Decimal in it is not a finite number (NaN)" }
    }

    /// Creates a body from bytes and a content type.
    public init(data: Data, contentType: String?) {
        self.data = data
        self.contentType = contentType
    }

    /// Raw bytes, `application/octet-stream` unless another type is given.
    public static func data(_ data: Data, contentType: String = "application/octet-stream") -> RequestBody {
        RequestBody(data: data, contentType: contentType)
    }

    /// A JSON object from ordered parameters (see ``Parameters`` for the value types). A value
    /// that cannot be written as JSON makes sending fail with ``WattleError/invalidRequest(reason:)``.
    public static func json(_ parameters: Parameters) -> RequestBody {
        do {
            return RequestBody(data: try JSONWriter.object(parameters), contentType: "application/json")
        } catch {
            return .failing(error, contentType: "application/json")
        }
    }

    /// Any `Encodable` value as JSON, with the given encoder. A value the encoder rejects, or a
    /// `Decimal.nan` (which `JSONEncoder` writes as a bare `NaN`, not JSON), makes sending fail
    /// with ``WattleError/invalidRequest(reason:)``.
    ///
    /// `Data` is taken as JSON already serialized and sent as it is (as kean/Get does), not
    /// base64-encoded into a JSON string. A `String` is a JSON string (`"text"` goes as
    /// `"\"text\""`): send JSON text with `.data(Data(text.utf8), contentType: "application/json")`.
    ///
    /// A dictionary literal goes to ``json(_:)-(Parameters)`` instead, which keeps its order.
    @_disfavoredOverload
    public static func json<Value: Encodable>(_ value: Value, encoder: JSONEncoder = JSONEncoder()) -> RequestBody {
        if let data = value as? Data { return RequestBody(data: data, contentType: "application/json") }
        do {
            let data = try encoder.encode(value)
            guard !JSONWriter.hasBareNaN(data) else { throw NonFiniteDecimal() }
            return RequestBody(data: data, contentType: "application/json")
        } catch {
            return .failing(
                .invalidRequest(reason: "cannot encode \(Value.self) as JSON: \(error)"),
                contentType: "application/json")
        }
    }

    /// An `application/x-www-form-urlencoded` body, names and values percent-encoded per RFC 3986.
    public static func form(_ parameters: Parameters) -> RequestBody {
        do {
            let text = PercentEncoding.query(try parameters.flattened())
            return RequestBody(data: Data(text.utf8), contentType: "application/x-www-form-urlencoded")
        } catch {
            return .failing(error, contentType: "application/x-www-form-urlencoded")
        }
    }

    /// A file's bytes, streamed from disk as they are sent: never read into memory whole, so a
    /// body of any size costs the same memory. Its size is taken when each attempt starts (a
    /// retry, a redirect that keeps the body and a retry after a token refresh send it again
    /// from the start), and it is sent with that `Content-Length`; it is opened once a
    /// connection is ready for it, so uploads queued for a connection hold no file descriptor.
    ///
    /// A file that cannot be opened or is not a regular file (a folder, a FIFO, a device) fails
    /// the request unsent, and one that turns out shorter than its size when the attempt
    /// started fails it while it is sent, both with ``WattleError/fileError(path:reason:)``; a
    /// `url` that is not a file URL fails with ``WattleError/invalidRequest(reason:)``. The
    /// file is read on Wattle's network thread, in pieces as the connection takes them: a
    /// file on a slow or network disk slows the session's other transfers too.
    public static func file(_ url: URL, contentType: String = "application/octet-stream") -> RequestBody {
        var body = RequestBody(data: Data(), contentType: contentType)
        if url.isFileURL {
            body.file = url
        } else {
            body.deferredError = .invalidRequest(
                reason: "a body file must be a file URL, not \(Redaction.url(url.absoluteString))")
        }
        return body
    }

    /// A UTF-8 text body, `text/plain; charset=utf-8` unless another type is given.
    public static func text(_ text: String, contentType: String = "text/plain; charset=utf-8") -> RequestBody {
        RequestBody(data: Data(text.utf8), contentType: contentType)
    }

    /// Whether this is ``none``.
    var isNone: Bool { data.isEmpty && contentType == nil && deferredError == nil && file == nil && segments.isEmpty }

    /// A body streamed from pieces, in order (a multipart body with parts from files).
    init(segments: [Segment], contentType: String) {
        self.init(data: Data(), contentType: contentType)
        self.segments = segments
    }

    /// A piece of a body streamed from memory and files (``segments``,
    /// ``TransportRequest/bodySegments``).
    public enum Segment: Sendable, Hashable {
        /// Bytes in memory.
        case data(Data)
        /// A file's bytes, read as they are sent: its size taken when each attempt starts, and
        /// opened once a connection is ready, as for ``RequestBody/file(_:contentType:)``.
        case file(URL)
    }
}
