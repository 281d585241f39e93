#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// What a server answered: status, headers, body, the final URL and metrics.
///
/// ```swift
/// let response = try await "users".get(parameters: ["page": 1])
/// response.statusCode          // 200
/// response.headers["content-type"]
/// let users = try response.decode([User].self)
/// ```
///
/// In the completion-handler forms a failed request still delivers a `Response`, with
/// ``error`` set (and ``statusCode`` 0 when the server never answered).
public struct Response: Sendable, CustomStringConvertible, CustomReflectable {
    /// The HTTP status code, or 0 when no response was received.
    public var statusCode: Int
    /// The response headers (of the final response, after redirects).
    ///
    /// A response from the network keeps its header section as received and makes the fields
    /// when this is first read, so a response nobody asks for headers costs no parsing.
    public var headers: HTTPHeaders {
        get {
            switch headerStorage {
            case .fields(let headers): headers
            case .section(let section): section.headers
            }
        }
        set { headerStorage = .fields(newValue) }
    }
    /// The fields, or a header section parsed when first read.
    private var headerStorage: HeaderStorage
    /// The session's ``Configuration/jsonDecoder``, for ``decode(_:decoder:)``: set on the
    /// responses a session returns or throws.
    var sessionDecoder: JSONDecoder?
    /// The body, after content decoding (empty for downloads, whose body is in ``fileURL``).
    public var data: Data
    /// The URL of the final response, after redirects.
    public var url: URL
    /// The method of the final request.
    public var method: HTTPMethod
    /// Where a download was saved, for ``Session/download(_:to:durability:resumable:progress:)-(Request,_,_,_,_)``.
    public var fileURL: URL?
    /// The failure, in the completion-handler forms; `nil` on success.
    public var error: WattleError?
    /// Timings, sizes, HTTP version and connection reuse.
    public var metrics: ResponseMetrics

    /// Creates a response (for transports and stubs).
    public init(
        statusCode: Int,
        headers: HTTPHeaders = [:],
        data: Data = Data(),
        url: URL,
        method: HTTPMethod = .get,
        fileURL: URL? = nil,
        error: WattleError? = nil,
        metrics: ResponseMetrics = ResponseMetrics()
    ) {
        self.statusCode = statusCode
        headerStorage = .fields(headers)
        self.data = data
        self.url = url
        self.method = method
        self.fileURL = fileURL
        self.error = error
        self.metrics = metrics
    }

    /// The response's fields, as `dump` and the debugger show them: ``headers`` as fields with
    /// credentials redacted (``HTTPHeaders/customMirror``), the URL without user-info and with
    /// credential-looking query values redacted, and the body's size, not its bytes (a body may
    /// carry a token), as ``description`` does; ``string`` shows the body.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "statusCode": statusCode, "headers": headers, "data": "\(data.count) bytes",
                "url": Redaction.url(url.absoluteString),
                "method": method, "fileURL": fileURL as Any, "error": error as Any, "metrics": metrics,
            ],
            displayStyle: .struct)
    }

    /// A response whose headers are parsed from `headerSection` when first read.
    init(
        statusCode: Int, headerSection: HeaderSection, data: Data, url: URL, method: HTTPMethod, fileURL: URL?,
        metrics: ResponseMetrics
    ) {
        self.init(statusCode: statusCode, data: data, url: url, method: method, fileURL: fileURL, metrics: metrics)
        headerStorage = .section(headerSection)
    }

    /// The header section the headers are read from, when they have not been replaced.
    var headerSection: HeaderSection? {
        if case .section(let section) = headerStorage { section } else { nil }
    }

    /// Where ``headers`` come from.
    private enum HeaderStorage: Sendable {
        case fields(HTTPHeaders)
        case section(HeaderSection)
    }

    /// Whether the status is in `200..<300` and there is no error.
    public var isSuccess: Bool { error == nil && (200..<300).contains(statusCode) }

    /// The body as text, decoded with the charset of `Content-Type` (UTF-8 by default), or
    /// `nil` if it is not valid in that charset. Decoded: UTF-8, ISO-8859-1, US-ASCII,
    /// Windows-1252, and UTF-16 and UTF-32 (with a byte-order mark, or `le`/`be`). A body in
    /// another charset is given only when its bytes are ASCII (read alike by all of them), and
    /// is `nil` otherwise: decode ``data`` yourself.
    public var string: String? {
        CharsetDecoding.decode(data, charset: headers["Content-Type"].flatMap(Self.charset(of:)))
    }

    /// The body parsed as any JSON value, for when there is no `Decodable` type for it.
    ///
    /// - Throws: ``WattleError/decoding(type:underlying:bodyPrefix:)`` when the body is not JSON.
    public func json() throws(WattleError) -> JSONValue {
        do {
            return try JSONDecoder().decode(JSONValue.self, from: data)
        } catch {
            throw .decoding(type: "JSON", underlying: Self.describe(error), bodyPrefix: Redaction.bodyPrefix(data))
        }
    }

    /// The body decoded as `type`, with `decoder`, else the session's
    /// ``Configuration/jsonDecoder`` (for a response a session returned or threw), else a
    /// plain `JSONDecoder`.
    ///
    /// - Throws: ``WattleError/decoding(type:underlying:bodyPrefix:)`` naming the type, the
    ///   decoder's reason (with the coding path) and the start of the body.
    public func decode<Value: Decodable>(_ type: Value.Type = Value.self, decoder: JSONDecoder? = nil)
        throws(WattleError) -> Value
    {
        do {
            return try (decoder ?? sessionDecoder ?? JSONDecoder()).decode(Value.self, from: data)
        } catch {
            throw .decoding(
                type: "\(Value.self)", underlying: Self.describe(error), bodyPrefix: Redaction.bodyPrefix(data))
        }
    }

    /// `200 GET https://host/path (1234 bytes)`: no headers, no body, credentials redacted.
    public var description: String {
        var text = "\(statusCode) \(method) \(Redaction.url(url.absoluteString)) (\(data.count) bytes)"
        if let error { text += " error: \(error)" }
        return text
    }

    static func charset(of contentType: String) -> String? {
        for part in contentType.split(separator: ";").dropFirst() {
            let pair = part.split(separator: "=", maxSplits: 1).map { $0.trimmingWhitespace() }
            if pair.count == 2, pair[0].lowercased() == "charset" {
                return pair[1].trimming(while: { $0 == "\"" }).lowercased()
            }
        }
        return nil
    }

    /// The decoder's reason, with the coding path and the underlying error when the decoder
    /// gives one, without a final period (the error adds one).
    static func describe(_ error: any Error) -> String {
        var text = reason(error)
        while text.hasSuffix(".") { text.removeLast() }
        return text
    }

    private static func reason(_ error: any Error) -> String {
        guard let decodingError = error as? DecodingError else { return "\(error)" }
        func detail(_ context: DecodingError.Context) -> String {
            var text = context.debugDescription
            if let underlying = context.underlyingError {
                while text.hasSuffix(".") { text.removeLast() }
                text += " (\(underlying))"
            }
            return text
        }
        func path(_ context: DecodingError.Context) -> String {
            let path = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
            return path.isEmpty ? "at the top level" : "at \(path)"
        }
        switch decodingError {
        case .typeMismatch(let type, let context):
            return "expected \(type) \(path(context)): \(detail(context))"
        case .valueNotFound(let type, let context):
            return "missing \(type) value \(path(context))"
        case .keyNotFound(let key, let context):
            return "missing key \"\(key.stringValue)\" \(path(context))"
        case .dataCorrupted(let context):
            return "corrupted data \(path(context)): \(detail(context))"
        @unknown default:
            return "\(decodingError)"
        }
    }
}
