#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import WattleKeychain
public import Wattle

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
/// ```
///
/// Unmatched requests get a 404 naming the request, or go to the fallback handler if one is set.
/// Every request is recorded, in order, in ``requests``.
public final class StubTransport: Transport {
    /// Computes a response for a request.
    public typealias Handler = @Sendable (TransportRequest) async throws(WattleError) -> Response

    private struct Route {
        var method: HTTPMethod?
        var path: String
        var handler: Handler
        var remaining: Int?
    }

    private struct State {
        var routes: [Route] = []
        var requests: [TransportRequest] = []
    }

    private let state = PThreadLocked(State())
    private let fallback: Handler?

    /// Creates a stub; `fallback` answers requests no route matches (default: a 404).
    public init(fallback: Handler? = nil) {
        self.fallback = fallback
    }

    /// Every request performed so far, in order.
    public var requests: [TransportRequest] { state.withLock { $0.requests } }

    /// Answers `method path` (path compared without the query; `nil` method matches any) with
    /// the handler. Later routes are consulted after earlier ones; `times` limits how often a
    /// route answers before the next matching route takes over.
    public func on(_ method: HTTPMethod?, _ path: String, times: Int? = nil, handler: @escaping Handler) {
        state.withLock { $0.routes.append(Route(method: method, path: path, handler: handler, remaining: times)) }
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
        on(method, path, status: status, headers: ["Content-Type": "application/json"], body: Data(json.utf8), times: times)
    }

    /// Answers `method path` by failing with `error` (e.g. `.timedOut`, `.cannotConnect`).
    public func on(_ method: HTTPMethod?, _ path: String, error: WattleError, times: Int? = nil) {
        on(method, path, times: times) { _ throws(WattleError) in throw error }
    }

    /// Records the request and answers it from the first matching route.
    public func perform(_ request: TransportRequest) async throws(WattleError) -> Response {
        if Task.isCancelled { throw .cancelled }
        let handler = state.withLock { state -> Handler? in
            state.requests.append(request)
            let path = request.url.path.isEmpty ? "/" : request.url.path
            guard
                let index = state.routes.firstIndex(where: { route in
                    (route.method == nil || route.method == request.method) && route.path == path
                        && (route.remaining ?? 1) > 0
                })
            else { return nil }
            if let remaining = state.routes[index].remaining { state.routes[index].remaining = remaining - 1 }
            return state.routes[index].handler
        }
        if let handler { return try await handler(request) }
        if let fallback { return try await fallback(request) }
        return Response(
            statusCode: 404, headers: ["Content-Type": "text/plain"],
            data: Data("StubTransport: no stub for \(request.method) \(request.url.path)".utf8), url: request.url,
            method: request.method)
    }
}
