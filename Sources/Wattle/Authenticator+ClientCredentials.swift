extension Authenticator {
    /// How a client presents its identifier and secret to a token endpoint (RFC 6749
    /// section 2.3.1).
    public enum ClientAuthentication: Sendable, Hashable {
        /// HTTP Basic with the identifier as the username and the secret as the password, each
        /// percent-encoded first as RFC 6749 asks (`client_secret_basic`). Every OAuth 2 server
        /// must accept it. The default.
        case basic
        /// `client_id` and `client_secret` as fields of the body (`client_secret_post`), for
        /// servers that take only that.
        case body
    }

    /// An ``Obtain`` for the OAuth 2 client-credentials grant (RFC 6749 section 4.4): POSTs
    /// `grant_type=client_credentials` (and `scope`, when given) to `endpoint`, authenticated as
    /// the client, and reads the token response.
    ///
    /// ```swift
    /// $0.authenticator = Authenticator(
    ///     store: KeychainTokenStore(origin: URL(string: "https://api.example.com")!),
    ///     obtain: Authenticator.postClientCredentials(
    ///         to: "oauth/token", clientID: clientID, clientSecret: clientSecret,
    ///         additionalParameters: ["audience": "https://api.example.com/"]))
    /// ```
    ///
    /// The endpoint resolves against the base URL like any request; an absolute URL names
    /// another host (the authorization server). The secret is kept in the closure only, never in
    /// a description or a log line.
    ///
    /// - Parameters:
    ///   - scope: the scopes asked for, space-separated, or nil for the server's default.
    ///   - clientAuthentication: where the identifier and secret go. Default ``ClientAuthentication/basic``.
    ///   - encoding: `.form` (the default, as RFC 6749 asks) or `.json`, which some servers
    ///     take; `.query` fails with ``WattleError/invalidRequest(reason:)`` unsent (a secret in a
    ///     URL ends up in access logs).
    ///   - additionalParameters: more fields for the body, such as `audience` or `resource`.
    public static func postClientCredentials(
        to endpoint: String, clientID: String, clientSecret: String, scope: String? = nil,
        clientAuthentication: ClientAuthentication = .basic, encoding: ParameterEncoding = .form,
        additionalParameters: Parameters = [:]
    ) -> Obtain {
        { session in
            guard encoding != .query else {
                throw WattleError.invalidRequest(
                    reason: "client credentials go in the body (.form or .json), never in the URL, where logs keep them"
                )
            }
            var parameters: Parameters = ["grant_type": "client_credentials"]
            if let scope { parameters.append("scope", scope) }
            var headers: HTTPHeaders = [:]
            switch clientAuthentication {
            case .basic:
                // RFC 6749 section 2.3.1: each form-encoded, then the Basic scheme's encoding.
                let basic = try AuthToken.basic(
                    username: PercentEncoding.encodeUnreserved(clientID),
                    password: PercentEncoding.encodeUnreserved(clientSecret))
                headers["Authorization"] = basic.authorizationValue
            case .body:
                parameters.append("client_id", clientID)
                parameters.append("client_secret", clientSecret)
            }
            parameters.items += additionalParameters.items
            var request = encoding.request(endpoint, method: .post, parameters: parameters, headers: headers)
            request.authentication = .none
            return try AuthToken(oauthResponse: try await session.send(request))
        }
    }
}
