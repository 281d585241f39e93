public import Wattle
import WattleKeychain

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// A ``Transport`` that answers from scripted responses, for tests that need no network.
///
/// ```swift
/// let stub = StubTransport()
/// stub.on(.get, "/users/42", json: #"{"id":42,"name":"Ada"}"#)
/// stub.on(.post, "/users", status: 201, json: #"{"id":43}"#)
/// let session = Session(configuration: Configuration { $0.baseURL = URL(string: "https://api.test/") },
///                       transport: stub)
/// let user = try await session.get("users/42").decode(User.self)
/// #expect(stub.requests.count == 1)
/// #expect(stub.unusedRoutes == ["POST /users"])
/// ```
///
/// A route matches the request's method and its URL's path as sent, percent-encoded, from the
/// first slash: `/v1/users/42` for `"users/42"` against the base URL `https://api.test/v1/`.
/// A route whose path has a query (`/search?q=swift&page=2`) matches that query exactly too;
/// one without matches any query.
///
/// What happens above the transport is the session's own, as with the network: headers,
/// query encoding, the stored token and its refresh, redirects, retries and status errors.
/// Below it, the stub does what the libcurl transport does: a download's 2xx body is written
/// to the download's file, ``TransportRequest/maximumResponseSize`` is enforced, body files
/// must be readable (``TransportRequest/sentBody()`` reads what would be sent), upload progress is told once (the whole body), and a task cancelled
/// while its handler ran gets ``WattleError/cancelled``. Not below it: the cookie jar
/// (``Configuration/cookies``) is libcurl's, so through a stub a `Set-Cookie` is not kept, no
/// `Cookie` is added, and ``Session/addCookies(_:)`` keeps nothing; set a `Cookie` header on
/// the request, or read it in the handler, to test cookie handling of your own.
///
/// A request no route matches fails with ``WattleError/invalidRequest(reason:)`` naming it and
/// the routes there are (a forgotten or misspelled route is not mistaken for the server's
/// 404), or goes to the fallback handler if one is set. Every request is recorded, in order,
/// in ``requests``.
public final class StubTransport: Transport {
    /// Computes a response for a request.
    public typealias Handler = @Sendable (TransportRequest) async throws(WattleError) -> Response

    private struct Route {
        var method: HTTPMethod?
        var path: String
        var query: String?
        var handler: Handler
        var remaining: Int?
        var answered = 0

        /// `METHOD path` (`*` for any method), a query shown as `?…`: errors never show one.
        var name: String { "\(method.map { "\($0)" } ?? "*") \(path)\(query == nil ? "" : "?…")" }

        func matches(_ method: HTTPMethod, path: String, query: String?) -> Bool {
            (self.method == nil || self.method == method) && self.path == path
                && (self.query == nil || self.query == (query ?? "")) && (remaining ?? 1) > 0
        }
    }

    private struct State {
        var routes: [Route] = []
        var requests: [TransportRequest] = []
    }

    private let state = PThreadLocked(State())
    private let fallback: Handler?

    /// Creates a stub; `fallback` answers requests no route matches (default: they fail with
    /// ``WattleError/invalidRequest(reason:)``).
    public init(fallback: Handler? = nil) {
        self.fallback = fallback
    }

    /// Every request performed so far, in order (matched or not).
    public var requests: [TransportRequest] { state.withLock { $0.requests } }

    /// The routes that have not answered as scripted, as `METHOD path` (`*` for any method,
    /// `?…` for a route's query):
    /// those given `times` that have answers left, and those without it that never answered.
    /// Empty when the test used every response it set up.
    public var unusedRoutes: [String] {
        state.withLock { state in
            state.routes.compactMap { route in
                if let remaining = route.remaining { return remaining > 0 ? "\(route.name) (\(remaining) left)" : nil }
                return route.answered == 0 ? route.name : nil
            }
        }
    }

    /// Forgets every route and every recorded request.
    public func reset() {
        state.withLock { $0 = State() }
    }

    /// Answers `method path` with the handler (`nil` method matches any). Later routes are
    /// consulted after earlier ones; `times` limits how often a route answers before the next
    /// matching route takes over.
    ///
    /// - Parameter path: the path from its first slash as sent, percent-encoded, optionally
    ///   with `?` and a query that must then match exactly.
    public func on(_ method: HTTPMethod?, _ path: String, times: Int? = nil, handler: @escaping Handler) {
        let query = path.firstIndex(of: "?").map { String(path[path.index(after: $0)...]) }
        let bare = query == nil ? path : String(path.prefix { $0 != "?" })
        state.withLock {
            $0.routes.append(Route(method: method, path: bare, query: query, handler: handler, remaining: times))
        }
    }

    /// Answers `method path` with a fixed status, headers and body.
    public func on(
        _ method: HTTPMethod?, _ path: String, status: Int = 200, headers: HTTPHeaders = [:], body: Data = Data(),
        times: Int? = nil
    ) {
        on(method, path, times: times) { request in
            Response(statusCode: status, headers: headers, data: body, url: request.url, method: request.method)
        }
    }

    /// Answers `method path` with a JSON body (`Content-Type: application/json`).
    public func on(_ method: HTTPMethod?, _ path: String, status: Int = 200, json: String, times: Int? = nil) {
        on(
            method, path, status: status, headers: ["Content-Type": "application/json"], body: Data(json.utf8),
            times: times)
    }

    /// Answers `method path` by failing with `error` (e.g. `.timedOut`, `.cannotConnect`).
    public func on(_ method: HTTPMethod?, _ path: String, error: WattleError, times: Int? = nil) {
        on(method, path, times: times) { _ throws(WattleError) in throw error }
    }

    /// Records the request and answers it from the first matching route.
    public func perform(_ request: TransportRequest) async throws(WattleError) -> Response {
        if Task.isCancelled { throw .cancelled }
        let sentPath = request.url.path(percentEncoded: true)
        let path = sentPath.isEmpty ? "/" : sentPath
        let query = request.url.query(percentEncoded: true)
        // A body file that cannot be sent fails the request before it would go out: recorded,
        // but no route answers it (nor counts it).
        let streamed = Result { () throws(WattleError) -> Int64? in
            guard let stream = try UploadStream.opening(bodyOf: request) else { return nil }
            // Opened as libcurl's transport opens them once connected: an unreadable file fails.
            do throws(UploadStream.Failure) {
                try stream.openFiles()
            } catch {
                throw error.error
            }
            return stream.size
        }
        let unsendable: WattleError? = if case .failure(let error) = streamed { error } else { nil }
        let (handler, routes) = state.withLock { state -> (Handler?, [String]) in
            state.requests.append(request)
            guard unsendable == nil else { return (nil, []) }
            guard let index = state.routes.firstIndex(where: { $0.matches(request.method, path: path, query: query) })
            else { return (nil, state.routes.map(\.name)) }
            if let remaining = state.routes[index].remaining { state.routes[index].remaining = remaining - 1 }
            state.routes[index].answered += 1
            return (state.routes[index].handler, [])
        }
        if let unsendable { throw unsendable }
        if let report = request.uploadProgress {
            // The body, sent at once (an empty one, as with libcurl, not reported).
            let size = (try? streamed.get()) ?? Int64(request.body?.count ?? 0)
            if size > 0 { report(UploadProgress(sentBytes: size, totalBytes: size)) }
        }
        guard let answer = handler ?? fallback else {
            // The path only: a query may carry a credential, and errors never show one.
            throw .invalidRequest(
                reason: """
                    StubTransport has no route for \(request.method) \(path)\
                    \(query == nil ? "" : "?…"); routes: \(routes.isEmpty ? "none" : routes.joined(separator: ", "))
                    """)
        }
        let response = try await answer(request)
        if Task.isCancelled { throw .cancelled }
        return try Self.delivered(response, for: request)
    }

    /// The response as the libcurl transport delivers it: a download's 2xx body in its file
    /// (progress told once), a stream's 2xx body whole, any other body held to the response
    /// size limit as libcurl's transport holds it.
    private static func delivered(_ response: Response, for request: TransportRequest) throws(WattleError) -> Response {
        var response = response
        if let download = request.download, (200..<300).contains(response.statusCode) {
            do {
                try response.data.write(to: download.file)
            } catch {
                throw .fileError(path: download.file.path, reason: "cannot write the download: \(error)")
            }
            let size = Int64(response.data.count)
            download.progress?(DownloadProgress(receivedBytes: size, expectedBytes: size))
            response.data = Data()
            return response
        }
        // A stream's 2xx body has no size limit (with this transport it arrives whole).
        if request.streamsResponse, (200..<300).contains(response.statusCode) { return response }
        if let limit = request.maximumResponseSize, response.data.count > limit {
            // A download's or a stream's error body is cut to the limit, unless its status is
            // one the request accepts as its answer; any other body is refused.
            guard request.streamsBody, !request.acceptedStatuses.contains(response.statusCode) else {
                throw .responseTooLarge(limit: limit, url: request.url)
            }
            response.data = response.data.prefix(max(0, limit))
        }
        return response
    }
}
