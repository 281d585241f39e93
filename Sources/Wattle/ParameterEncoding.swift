/// Where the parameters of a convenience call (`post(_:parameters:)` and friends) go.
public enum ParameterEncoding: Sendable, Hashable {
    /// In the URL query (the default for GET, HEAD, DELETE and OPTIONS).
    case query
    /// A JSON object body (the default for POST, PUT, PATCH and every other method).
    case json
    /// An `application/x-www-form-urlencoded` body.
    case form

    /// The default for a method: `query` for GET, HEAD, DELETE and OPTIONS, `json` otherwise.
    public static func `default`(for method: HTTPMethod) -> ParameterEncoding {
        switch method {
        case .get, .head, .delete, .options: .query
        default: .json
        }
    }

    /// A request for `endpoint` with `parameters` placed per this encoding. Nil parameters
    /// place nothing: no query and no body (an empty JSON object is `[:]`, as in Alamofire).
    func request(_ endpoint: String, method: HTTPMethod, parameters: Parameters?, headers: HTTPHeaders) -> Request {
        guard let parameters else { return Request(endpoint, method: method, headers: headers) }
        switch self {
        case .query:
            return Request(endpoint, method: method, query: parameters, headers: headers)
        case .json:
            let body: RequestBody = parameters.isEmpty && method == .get ? .none : .json(parameters)
            return Request(endpoint, method: method, headers: headers, body: body)
        case .form:
            return Request(endpoint, method: method, headers: headers, body: .form(parameters))
        }
    }
}
