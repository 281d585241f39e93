#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

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
    ///     store: KeychainTokenStore(origin: URL(string: "https://api.example.com")!, profile: "reports-service"),
    ///     obtain: Authenticator.postClientCredentials(
    ///         to: "oauth/token", clientID: clientID, clientSecret: clientSecret,
    ///         additionalParameters: ["audience": "https://api.example.com/"]))
    /// ```
    ///
    /// The endpoint resolves against the base URL like any request; an absolute URL names
    /// another host (the authorization server). It must be `https`, or `http` to a loopback
    /// host (`localhost`, `127.x.x.x`, `::1`), as RFC 6749 requires TLS for a client's secret.
    /// The secret is kept in the closure only, never in a description or a log line (a
    /// ``Configuration/willSend`` hook of the session does see the token call's headers and
    /// body).
    ///
    /// With this closure as ``obtain``, the token is kept in the authenticator's store under its
    /// origin and profile whatever the client or scope that obtained it, and a token kept there
    /// is sent whoever obtained it. Prefer
    /// ``clientCredentials(store:endpoint:clientID:clientSecret:scope:clientAuthentication:encoding:additionalParameters:)``,
    /// which binds the stored token to the client and scope; with this one, give each client
    /// and scope a profile of its own (`KeychainTokenStore(origin:profile:)`), apart from a
    /// person's sign-in, so that a token obtained for one is never sent for another.
    ///
    /// A mistake in the arguments fails each request that needs a token with
    /// ``WattleError/authenticationFailed(reason:cause:)``, whose reason says what is wrong, and
    /// sends nothing: `encoding: .query` (a secret in a URL ends up in access logs), an
    /// `http` endpoint that is not loopback, or `additionalParameters` naming a field this
    /// call sets itself.
    ///
    /// - Parameters:
    ///   - scope: the scopes asked for, space-separated, or nil for the server's default.
    ///   - clientAuthentication: where the identifier and secret go. Default
    ///     ``ClientAuthentication/basic``. The identifier and secret are percent-encoded inside
    ///     the Basic credentials, as RFC 6749 section 2.3.1 asks; a server that does not decode
    ///     them refuses a secret with characters outside `A-Z a-z 0-9 - . _ ~`: use
    ///     ``ClientAuthentication/body`` with such a server.
    ///   - encoding: `.form` (the default, as RFC 6749 asks) or `.json`, which some servers
    ///     take.
    ///   - additionalParameters: more fields for the body, such as `audience` or `resource`;
    ///     not `grant_type`, `scope`, `client_id` or `client_secret`.
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
            if let reserved = additionalParameters.items.first(where: { reservedFields.contains($0.name) }) {
                throw WattleError.invalidRequest(
                    reason: "additionalParameters cannot set \"\(reserved.name)\": the client-credentials call sets it")
            }
            let url = try Request(endpoint).url(relativeTo: session.configuration.baseURL)
            guard url.scheme?.lowercased() == "https" || isLoopback(url.host ?? "") else {
                throw WattleError.invalidRequest(
                    reason:
                        "the token endpoint \(Redaction.url(url.absoluteString)) is not https: a client secret goes over TLS only (RFC 6749 section 2.3.1)"
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

    /// An authenticator that obtains its tokens with the client-credentials grant
    /// (``postClientCredentials(to:clientID:clientSecret:scope:clientAuthentication:encoding:additionalParameters:)``,
    /// whose parameters these are) and binds each token it stores to this client.
    ///
    /// ```swift
    /// $0.authenticator = Authenticator.clientCredentials(
    ///     store: KeychainTokenStore(origin: URL(string: "https://api.example.com")!, profile: "reports-service"),
    ///     endpoint: "oauth/token", clientID: clientID, clientSecret: clientSecret, scope: "reports:read")
    /// ```
    ///
    /// A token is stored with its ``AuthToken/binding``, a hash of the endpoint, the client's
    /// identifier, the scope, how the client authenticates, the encoding and the additional
    /// fields (never the secret). A stored token with another binding (obtained for another
    /// client or scope under the same store and profile, as after a configuration change) or
    /// with none (a person's sign-in) is not sent: a token is obtained for this client in its
    /// place, and replaces it in the store. Changing only the secret keeps the stored token.
    /// Set ``refresh`` afterwards for a server whose client tokens come with a refresh token (a
    /// refresh made with ``AuthToken/init(oauthResponse:previous:)`` keeps the binding; another
    /// refresh's token is used by this session but obtained anew by the next; a refresh the
    /// server refuses as a request, `invalid_client` say, obtains a token instead). A token signed in
    /// with on such a session is sent by it, and not taken up by later ones; a sign-out removes
    /// only this client's token. The endpoint is bound as written: the store is keyed by the
    /// API's origin, so two base URLs under one origin (tenants at `https://h/a/` and
    /// `https://h/b/`) with a relative endpoint need a profile each.
    public static func clientCredentials(
        store: any TokenStore, endpoint: String, clientID: String, clientSecret: String, scope: String? = nil,
        clientAuthentication: ClientAuthentication = .basic, encoding: ParameterEncoding = .form,
        additionalParameters: Parameters = [:]
    ) -> Authenticator {
        let binding = clientBinding(
            endpoint: endpoint, clientID: clientID, scope: scope, clientAuthentication: clientAuthentication,
            encoding: encoding, additionalParameters: additionalParameters)
        let obtain = postClientCredentials(
            to: endpoint, clientID: clientID, clientSecret: clientSecret, scope: scope,
            clientAuthentication: clientAuthentication, encoding: encoding, additionalParameters: additionalParameters)
        return Authenticator(
            store: BoundTokenStore(base: store, binding: binding),
            obtain: { session in
                var token = try await obtain(session)
                token.binding = binding
                return token
            })
    }

    /// `cc1:` and the hex BLAKE2b-256 of the client's parameters, each length-prefixed so that
    /// no two lists of them hash alike. Not a secret: the client's secret is not in it, nor the
    /// value of an additional field whose name says it holds a credential (`client_assertion`,
    /// `api_key`: only its name), which may also change from one call to the next.
    static func clientBinding(
        endpoint: String, clientID: String, scope: String?, clientAuthentication: ClientAuthentication,
        encoding: ParameterEncoding, additionalParameters: Parameters
    ) -> String {
        var parts = [
            endpoint, clientID, scope.map { "scope " + $0 } ?? "no scope", "\(clientAuthentication)", "\(encoding)",
        ]
        for item in additionalParameters.items {
            parts += [item.name, Redaction.isSensitiveName(item.name) ? "credential" : canonical(item.value)]
        }
        return "cc1:" + PartialDownload.hash(parts.map { "\($0.utf8.count):\($0)" }.joined())
    }

    /// A field's value as the same text in every process, its type told: a dictionary's keys
    /// sorted (its order is the process's hashing seed's), nested values length-prefixed.
    private static func canonical(_ value: any Sendable) -> String {
        func prefixed(_ text: String) -> String { "\(text.utf8.count):\(text)" }
        switch value {
        case let string as String: return "s" + prefixed(string)
        case let json as JSONValue:
            switch json {
            case .null: return "n"
            case .bool(let flag): return "b\(flag)"
            case .integer(let number): return "i\(number)"
            case .number(let number): return "d\(number)"
            case .string(let string): return "s" + prefixed(string)
            case .array(let elements): return "[" + elements.map(canonical).joined() + "]"
            case .object(let members):
                return "{" + members.sorted { $0.key < $1.key }.map { prefixed($0.key) + canonical($0.value) }.joined()
                    + "}"
            }
        case let dictionary as [String: any Sendable]:
            return "{" + dictionary.sorted { $0.key < $1.key }.map { prefixed($0.key) + canonical($0.value) }.joined()
                + "}"
        case let array as [any Sendable]: return "[" + array.map(canonical).joined() + "]"
        case let parameters as Parameters:
            return "(" + parameters.items.map { prefixed($0.name) + canonical($0.value) }.joined() + ")"
        default:
            if Parameters.isNil(value) { return "n" }
            return prefixed("\(type(of: value))") + prefixed(Parameters.scalarString(value) ?? "\(value)")
        }
    }

    /// The fields ``postClientCredentials(to:clientID:clientSecret:scope:clientAuthentication:encoding:additionalParameters:)``
    /// sets itself.
    private static let reservedFields: Set<String> = ["grant_type", "scope", "client_id", "client_secret"]

    /// Whether `host` is this machine: `localhost`, an IPv4 address in 127.0.0.0/8, or `::1`.
    static func isLoopback(_ host: String) -> Bool {
        let host = host.lowercased()
        if host == "localhost" || host == "::1" || host == "[::1]" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127"
            && parts.allSatisfy { part in
                (1...3).contains(part.utf8.count) && part.utf8.allSatisfy { (0x30...0x39).contains($0) }
                    && Int(part)! <= 255
            }
    }
}
