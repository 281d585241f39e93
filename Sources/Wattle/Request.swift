#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// A request to send: an endpoint, a method, query parameters, headers, a body and a timeout.
///
/// The endpoint resolves against ``Configuration/baseURL``: with a base of
/// `https://api.example.com/v1/`, `"users"` and `"/users"` both mean
/// `https://api.example.com/v1/users`. An absolute `http`/`https` URL stands as it is.
///
/// ```swift
/// var request = Request("users", method: .get, query: ["q": "ada lovelace", "page": 2])
/// request.headers["Accept-Language"] = "en"
/// request.timeout = .seconds(5)
/// let response = try await session.send(request)
/// ```
public struct Request: Sendable, CustomStringConvertible, CustomReflectable {
    /// The endpoint: a path relative to the base URL, or an absolute URL.
    public var endpoint: String
    /// The method.
    public var method: HTTPMethod
    /// Query parameters, appended in order after any query already in the endpoint.
    public var query: Parameters
    /// Headers for this request; they replace same-named ``Configuration/defaultHeaders``.
    public var headers: HTTPHeaders
    /// The body.
    public var body: RequestBody
    /// The total timeout for this request, replacing ``Timeouts/total``: redirects followed
    /// included, each attempt afresh.
    public var timeout: Duration?
    /// Whether the session's stored token goes with this request. Default
    /// ``Authentication-swift.enum/automatic``.
    public var authentication: Authentication
    /// Told how much of the body (data or a file) has been sent, as it goes out, on Wattle's
    /// network thread: keep it quick. A retry, a redirect that keeps the body, or libcurl
    /// resending it on a new connection starts again from 0. An empty body is not reported.
    /// Nil (the default) for none.
    ///
    /// ```swift
    /// var upload = Request("videos", method: .post, body: .file(movie, contentType: "video/mp4"))
    /// upload.uploadProgress = { print("\(Int($0.fractionCompleted * 100))%") }
    /// ```
    public var uploadProgress: (@Sendable (UploadProgress) -> Void)?
    /// Statuses outside `200..<300` that end this request as its response instead of as
    /// ``WattleError/httpStatus(_:)``: a 304 for a conditional `GET`, a 404 that means "none".
    /// Empty (the default) for none.
    ///
    /// They change how the final answer is delivered, not how it is reached: redirects are
    /// followed, the retry policy retries and a 401 refreshes the token as for any request, and
    /// the status the request ends with is then returned if it is here. ``Response/isSuccess``
    /// stays false for it. For a download, the body of such a status is in ``Response/data``
    /// and the destination file is left as it was. Its body is held to
    /// ``Configuration/maximumResponseSize``, past which the request fails with
    /// ``WattleError/responseTooLarge(limit:url:)``, as any request's.
    ///
    /// ```swift
    /// var request = Request("users/42", headers: ["If-None-Match": etag])
    /// request.acceptedStatuses = [304, 404]
    /// let response = try await session.send(request)
    /// switch response.statusCode {
    /// case 304: return cachedUser
    /// case 404: return nil
    /// default: return try response.decode(User.self)
    /// }
    /// ```
    public var acceptedStatuses: Set<Int> = []
    /// Header names this request goes without, though it would otherwise send them: a
    /// ``Configuration/defaultHeaders`` field, the ``Configuration/userAgent``, the body's
    /// `Content-Type`, and the lines libcurl or Wattle add by themselves (`Accept: */*`,
    /// `Accept-Encoding`, `Expect`). Names compare without regard to case. What `curl -H 'Name:'`
    /// and httpie's `Name:` item do (the `wattle` CLI's `Name:` item sets this). Empty (the
    /// default) for none.
    ///
    /// Omitting `Authorization` sends the request with no stored token and no credentials at
    /// all. A header ``Configuration/willSend`` returns is sent even when named here: the hook
    /// decides for each attempt.
    ///
    /// Refused, unsent, with ``WattleError/invalidRequest(reason:)``: a name that is not an
    /// HTTP token; a name also in ``headers`` (the request cannot both send and omit it); `Host`,
    /// `Content-Length` and `Transfer-Encoding`, which frame the message; and `Cookie`, whose
    /// cookie-jar cookies libcurl adds whatever the request says (a session with
    /// ``Configuration/CookieStorage/none`` sends none).
    ///
    /// ```swift
    /// var request = Request("status")
    /// request.omittedHeaders = ["User-Agent", "Accept-Encoding"]
    /// ```
    public var omittedHeaders: [String] = []

    /// Creates a request.
    public init(
        _ endpoint: String,
        method: HTTPMethod = .get,
        query: Parameters = [:],
        headers: HTTPHeaders = [:],
        body: RequestBody = .none,
        timeout: Duration? = nil,
        authentication: Authentication = .automatic
    ) {
        self.endpoint = endpoint
        self.method = method
        self.query = query
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self.authentication = authentication
    }

    /// `METHOD endpoint`, with credential-looking query values redacted.
    public var description: String { "\(method) \(Redaction.url(endpoint))" }

    /// What `dump` shows: the endpoint as ``description`` shows it, the query and headers with
    /// credential-looking values redacted, and the body's size, not its bytes.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "endpoint": Redaction.fullURL(endpoint), "method": method, "query": query, "headers": headers,
                "body": body, "timeout": timeout as Any, "authentication": authentication,
                "omittedHeaders": omittedHeaders,
            ],
            displayStyle: .struct)
    }

    /// The absolute URL of this request against a base URL.
    public func url(relativeTo baseURL: URL?) throws(WattleError) -> URL {
        try EndpointResolver.resolve(endpoint, query: query, baseURL: baseURL)
    }

    /// The absolute URL and its parts, for ``Session``.
    func target(relativeTo baseURL: URL?) throws(WattleError) -> (url: URL, target: TransportRequest.Target) {
        try EndpointResolver.resolveTarget(endpoint, query: query, baseURL: baseURL)
    }
}
