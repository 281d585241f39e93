#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

extension Session {
    /// `GET endpoint?parameters`.
    ///
    /// ```swift
    /// let response = try await session.get("search", parameters: ["q": "swift & curl", "page": 2])
    /// ```
    public func get(_ endpoint: String, parameters: Parameters = [:], headers: HTTPHeaders = [:])
        async throws(WattleError) -> Response
    {
        try await send(Request(endpoint, method: .get, query: parameters, headers: headers))
    }

    /// `POST` with the parameters as a JSON object (or per `encoding`).
    ///
    /// Without parameters (nil, the default) the request has no body and is sent with
    /// `Content-Length: 0`, as Alamofire does; pass `[:]` to send the empty object `{}`.
    public func post(
        _ endpoint: String, parameters: Parameters? = nil, encoding: ParameterEncoding = .json,
        headers: HTTPHeaders = [:]
    ) async throws(WattleError) -> Response {
        try await send(encoding.request(endpoint, method: .post, parameters: parameters, headers: headers))
    }

    /// `POST` with any `Encodable` value as the JSON body, encoded by `encoder`, else the
    /// session's ``Configuration/jsonEncoder``.
    ///
    /// ```swift
    /// let created = try await session.post("users", json: NewUser(name: "Ada")).decode(User.self)
    /// ```
    public func post<Body: Encodable & Sendable>(
        _ endpoint: String, json: Body, encoder: JSONEncoder? = nil, headers: HTTPHeaders = [:]
    ) async throws(WattleError) -> Response {
        try await send(
            Request(
                endpoint, method: .post, headers: headers,
                body: .json(json, encoder: encoder ?? configuration.jsonEncoder)))
    }

    /// `PUT` with the parameters as a JSON object (or per `encoding`); without parameters (nil,
    /// the default), with no body, as for `post`.
    public func put(
        _ endpoint: String, parameters: Parameters? = nil, encoding: ParameterEncoding = .json,
        headers: HTTPHeaders = [:]
    ) async throws(WattleError) -> Response {
        try await send(encoding.request(endpoint, method: .put, parameters: parameters, headers: headers))
    }

    /// `PUT` with any `Encodable` value as the JSON body (encoded as for `post`).
    public func put<Body: Encodable & Sendable>(
        _ endpoint: String, json: Body, encoder: JSONEncoder? = nil, headers: HTTPHeaders = [:]
    ) async throws(WattleError) -> Response {
        try await send(
            Request(
                endpoint, method: .put, headers: headers,
                body: .json(json, encoder: encoder ?? configuration.jsonEncoder)))
    }

    /// `PATCH` with the parameters as a JSON object (or per `encoding`); without parameters (nil,
    /// the default), with no body, as for `post`.
    public func patch(
        _ endpoint: String, parameters: Parameters? = nil, encoding: ParameterEncoding = .json,
        headers: HTTPHeaders = [:]
    ) async throws(WattleError) -> Response {
        try await send(encoding.request(endpoint, method: .patch, parameters: parameters, headers: headers))
    }

    /// `PATCH` with any `Encodable` value as the JSON body (encoded as for `post`).
    public func patch<Body: Encodable & Sendable>(
        _ endpoint: String, json: Body, encoder: JSONEncoder? = nil, headers: HTTPHeaders = [:]
    ) async throws(WattleError) -> Response {
        try await send(
            Request(
                endpoint, method: .patch, headers: headers,
                body: .json(json, encoder: encoder ?? configuration.jsonEncoder)))
    }

    /// `DELETE endpoint?parameters`.
    public func delete(_ endpoint: String, parameters: Parameters = [:], headers: HTTPHeaders = [:])
        async throws(WattleError) -> Response
    {
        try await send(Request(endpoint, method: .delete, query: parameters, headers: headers))
    }

    // MARK: Completion handlers

    /// Sends a request and calls `completion` with the response; on failure the response's
    /// ``Response/error`` is set (and its status is 0 when the server never answered).
    ///
    /// `completion` is called once, on a thread of Swift's global concurrent pool, never the
    /// main thread: hop to the main actor (or your queue) for UI work, and keep it from
    /// blocking. The completion variants of ``get(_:parameters:headers:completion:)`` and the
    /// other methods, and of the `String` helpers, do the same.
    ///
    /// Returns the task doing the work, which can be cancelled (`completion` then gets
    /// ``WattleError/cancelled``).
    @discardableResult
    public func send(_ request: Request, completion: @escaping @Sendable (Response) -> Void) -> Task<Void, Never> {
        Task {
            completion(await self.responseOrError(request))
        }
    }

    /// `GET`, delivering the response (with ``Response/error`` set on failure) to `completion`.
    @discardableResult
    public func get(
        _ endpoint: String, parameters: Parameters = [:], headers: HTTPHeaders = [:],
        completion: @escaping @Sendable (Response) -> Void
    ) -> Task<Void, Never> {
        send(Request(endpoint, method: .get, query: parameters, headers: headers), completion: completion)
    }

    /// `POST`, delivering the response (with ``Response/error`` set on failure) to `completion`.
    @discardableResult
    public func post(
        _ endpoint: String, parameters: Parameters? = nil, encoding: ParameterEncoding = .json,
        headers: HTTPHeaders = [:],
        completion: @escaping @Sendable (Response) -> Void
    ) -> Task<Void, Never> {
        send(
            encoding.request(endpoint, method: .post, parameters: parameters, headers: headers), completion: completion)
    }

    /// `PUT`, delivering the response (with ``Response/error`` set on failure) to `completion`.
    @discardableResult
    public func put(
        _ endpoint: String, parameters: Parameters? = nil, encoding: ParameterEncoding = .json,
        headers: HTTPHeaders = [:],
        completion: @escaping @Sendable (Response) -> Void
    ) -> Task<Void, Never> {
        send(encoding.request(endpoint, method: .put, parameters: parameters, headers: headers), completion: completion)
    }

    /// `PATCH`, delivering the response (with ``Response/error`` set on failure) to `completion`.
    @discardableResult
    public func patch(
        _ endpoint: String, parameters: Parameters? = nil, encoding: ParameterEncoding = .json,
        headers: HTTPHeaders = [:],
        completion: @escaping @Sendable (Response) -> Void
    ) -> Task<Void, Never> {
        send(
            encoding.request(endpoint, method: .patch, parameters: parameters, headers: headers), completion: completion
        )
    }

    /// `DELETE`, delivering the response (with ``Response/error`` set on failure) to `completion`.
    @discardableResult
    public func delete(
        _ endpoint: String, parameters: Parameters = [:], headers: HTTPHeaders = [:],
        completion: @escaping @Sendable (Response) -> Void
    ) -> Task<Void, Never> {
        send(Request(endpoint, method: .delete, query: parameters, headers: headers), completion: completion)
    }

    /// The response, or a response carrying the error.
    func responseOrError(_ request: Request) async -> Response {
        await responseOrError(request) { () async throws(WattleError) -> Response in try await send(request) }
    }

    /// What `exchange` returns for `request`, or a response carrying its error.
    func responseOrError(
        _ request: Request, _ exchange: () async throws(WattleError) -> Response
    ) async -> Response {
        do {
            return try await exchange()
        } catch {
            if case .httpStatus(var response) = error {
                response.error = error
                return response
            }
            let url =
                (try? request.url(relativeTo: configuration.baseURL))
                ?? configuration.baseURL ?? URL(string: "about:blank")!
            return Response(statusCode: 0, url: url, method: request.method, error: error)
        }
    }
}
