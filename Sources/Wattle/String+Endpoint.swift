/// Endpoint helpers: a `String` names an endpoint on ``Session/shared``.
///
/// ```swift
/// Session.configureShared { $0.baseURL = URL(string: "https://api.example.com/v1/") }
/// let users = try await "users".get(parameters: ["page": 2]).decode([User].self)
/// let created = try await "users".post(parameters: ["name": "Ada"])
/// "users/42".delete { response in
///     if let error = response.error { print(error) }
/// }
/// ```
extension String {
    /// `GET` this endpoint on ``Session/shared``, parameters in the query.
    public func get(parameters: Parameters = [:], headers: HTTPHeaders = [:]) async throws(WattleError) -> Response {
        try await Session.shared.get(self, parameters: parameters, headers: headers)
    }

    /// `POST` to this endpoint on ``Session/shared``, parameters as a JSON object (or per `encoding`).
    /// Without parameters (nil, the default), no body: `Content-Length: 0`.
    public func post(parameters: Parameters? = nil, encoding: ParameterEncoding = .json, headers: HTTPHeaders = [:])
        async throws(WattleError) -> Response
    {
        try await Session.shared.post(self, parameters: parameters, encoding: encoding, headers: headers)
    }

    /// `PUT` to this endpoint on ``Session/shared``, parameters as a JSON object (or per `encoding`).
    /// Without parameters (nil, the default), no body: `Content-Length: 0`.
    public func put(parameters: Parameters? = nil, encoding: ParameterEncoding = .json, headers: HTTPHeaders = [:])
        async throws(WattleError) -> Response
    {
        try await Session.shared.put(self, parameters: parameters, encoding: encoding, headers: headers)
    }

    /// `PATCH` this endpoint on ``Session/shared``, parameters as a JSON object (or per `encoding`).
    /// Without parameters (nil, the default), no body: `Content-Length: 0`.
    public func patch(parameters: Parameters? = nil, encoding: ParameterEncoding = .json, headers: HTTPHeaders = [:])
        async throws(WattleError) -> Response
    {
        try await Session.shared.patch(self, parameters: parameters, encoding: encoding, headers: headers)
    }

    /// `DELETE` this endpoint on ``Session/shared``, parameters in the query.
    public func delete(parameters: Parameters = [:], headers: HTTPHeaders = [:]) async throws(WattleError) -> Response {
        try await Session.shared.delete(self, parameters: parameters, headers: headers)
    }

    /// `GET` this endpoint on ``Session/shared``; `completion` gets the response, with
    /// ``Response/error`` set on failure.
    @discardableResult
    public func get(
        parameters: Parameters = [:], headers: HTTPHeaders = [:], completion: @escaping @Sendable (Response) -> Void
    ) -> Task<Void, Never> {
        Session.shared.get(self, parameters: parameters, headers: headers, completion: completion)
    }

    /// `POST` to this endpoint on ``Session/shared``; `completion` gets the response, with
    /// ``Response/error`` set on failure.
    @discardableResult
    public func post(
        parameters: Parameters? = nil, encoding: ParameterEncoding = .json, headers: HTTPHeaders = [:],
        completion: @escaping @Sendable (Response) -> Void
    ) -> Task<Void, Never> {
        Session.shared.post(self, parameters: parameters, encoding: encoding, headers: headers, completion: completion)
    }

    /// `PUT` to this endpoint on ``Session/shared``; `completion` gets the response, with
    /// ``Response/error`` set on failure.
    @discardableResult
    public func put(
        parameters: Parameters? = nil, encoding: ParameterEncoding = .json, headers: HTTPHeaders = [:],
        completion: @escaping @Sendable (Response) -> Void
    ) -> Task<Void, Never> {
        Session.shared.put(self, parameters: parameters, encoding: encoding, headers: headers, completion: completion)
    }

    /// `PATCH` this endpoint on ``Session/shared``; `completion` gets the response, with
    /// ``Response/error`` set on failure.
    @discardableResult
    public func patch(
        parameters: Parameters? = nil, encoding: ParameterEncoding = .json, headers: HTTPHeaders = [:],
        completion: @escaping @Sendable (Response) -> Void
    ) -> Task<Void, Never> {
        Session.shared.patch(self, parameters: parameters, encoding: encoding, headers: headers, completion: completion)
    }

    /// `DELETE` this endpoint on ``Session/shared``; `completion` gets the response, with
    /// ``Response/error`` set on failure.
    @discardableResult
    public func delete(
        parameters: Parameters = [:], headers: HTTPHeaders = [:], completion: @escaping @Sendable (Response) -> Void
    ) -> Task<Void, Never> {
        Session.shared.delete(self, parameters: parameters, headers: headers, completion: completion)
    }
}
