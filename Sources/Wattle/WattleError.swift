#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Every failure Wattle reports, each with the context a person needs to act on it.
///
/// ```swift
/// do {
///     let user = try await session.get("users/42").decode(User.self)
/// } catch .httpStatus(let response) {
///     print(response.statusCode, response.string ?? "")   // the body is kept
/// } catch .timedOut(let phase, let after, _) {
///     print("timed out in \(phase) after \(after)")
/// }
/// ```
///
/// Descriptions never contain a token, a password or another credential: header values are
/// never included, and bodies quoted in ``decoding(type:underlying:bodyPrefix:)`` are redacted.
public enum WattleError: Error, Sendable, CustomStringConvertible, CustomReflectable {
    /// The URL could not be built or is not an `http`/`https` URL.
    case invalidURL(String, reason: String)
    /// A header name or value was refused (a control character such as CR, LF or NUL in it, or a
    /// name that is not a token).
    /// `name` is escaped so control characters are visible; the value is never included.
    case invalidHeader(name: String, reason: String)
    /// The request itself is malformed: a bad method, or a body that cannot be encoded.
    case invalidRequest(reason: String)
    /// The host name did not resolve.
    case cannotResolveHost(String)
    /// No connection could be made to `host:port` (refused, unreachable).
    case cannotConnect(host: String, port: Int, reason: String)
    /// The configured proxy failed the request before it reached the server: it could not be
    /// reached, it refused the tunnel, or the handshake with it failed (`failure` says which).
    /// `proxy` is the proxy's `scheme://host:port`, never its credentials; for one that
    /// `http_proxy` and its kin chose, "scheme://host:port (from the environment)" when known, else
    /// "from the environment". A configured `https` proxy's untrusted certificate is
    /// ``ProxyFailure/handshakeFailed(reason:)`` (``TrustPolicy`` never applies to proxies).
    /// For a plain `http` request, an `https` proxy from the environment whose certificate
    /// fails is ``ProxyFailure/handshakeFailed(reason:)`` too. Not covered, as libcurl does not
    /// tell them apart from the server's: a timeout connecting to a proxy
    /// (``timedOut(phase:after:url:)``), and, for an `https` request, an `https` proxy from the
    /// environment's untrusted certificate (``untrustedCertificate(host:reason:)``, naming the
    /// server).
    case proxyFailed(proxy: String, failure: ProxyFailure)
    /// The connection was lost or closed by the server before the response was complete.
    case connectionLost(host: String, reason: String)
    /// A timeout fired: `phase` says which one, `after` its configured length.
    case timedOut(phase: TimeoutPhase, after: Duration, url: URL)
    /// The server's certificate was not trusted. `reason` is libcurl's (for example
    /// "self-signed certificate" or "certificate has expired").
    case untrustedCertificate(host: String, reason: String)
    /// Mutual TLS failed on the client's side: the configured ``ClientCertificate`` could not
    /// be used (its key does not match, or the TLS library refused it), or `host` refused the
    /// one sent, or asked for one and none was configured for it. `reason` says which; it never
    /// contains the key. Only refusals the server words as a TLS alert about certificates are
    /// told apart (TLS 1.3's "certificate required", "bad certificate", "unknown CA", …);
    /// a TLS 1.2 "handshake failure", or an HTTP 400 as nginx answers, stays what it is.
    case clientCertificate(host: String, reason: String)
    /// The server's public key did not match any pin configured for `host`.
    case pinMismatch(host: String)
    /// More redirects than the configured limit.
    case tooManyRedirects(limit: Int, url: URL)
    /// The server answered with a status outside `200..<300`; the whole response, body
    /// included, is attached.
    indirect case httpStatus(Response)
    /// The body could not be decoded as `type`. `bodyPrefix` is the start of the body, with
    /// credential-looking JSON fields redacted.
    case decoding(type: String, underlying: String, bodyPrefix: String)
    /// The task was cancelled; the transfer was stopped.
    case cancelled
    /// The response body exceeded the configured maximum size (in bytes), or a stream's
    /// ``ResponseStream/collect(upTo:)`` or ``ResponseStream/lines(maximumLength:)`` limit.
    case responseTooLarge(limit: Int, url: URL)
    /// The response's header section exceeded the limit (in bytes), or one header line was
    /// longer than libcurl accepts.
    case headersTooLarge(limit: Int, url: URL)
    /// Authentication failed and could not be recovered (for example, a token refresh failed).
    /// `cause` is the failure of the call made for it, when one was made and failed: the token
    /// endpoint's network, TLS or timeout error, or its answer (``httpStatus(_:)``); nil when
    /// no call was made (no authenticator, nothing to refresh, the refresh cap, a token request
    /// refused before it was sent). It tells a
    /// refresh that failed because the network did (try again later) from one the server
    /// refused (sign in again); `reason` already quotes it.
    indirect case authenticationFailed(reason: String, cause: WattleError? = nil)
    /// A file for a download could not be created, written or moved into place.
    case fileError(path: String, reason: String)
    /// The session's cookie jar could not be read or written
    /// (``Configuration/CookieStorage/keychain(_:)``), or a cookie given to
    /// ``Session/addCookies(_:)`` was refused. `reason` never contains a cookie's value.
    case cookieJar(reason: String)
    /// Any other transport failure: libcurl's code and its message.
    case transport(code: Int, message: String)

    /// The phase in which a timeout fired.
    public enum TimeoutPhase: String, Sendable, CustomStringConvertible {
        /// Resolving, connecting and the TLS handshake (``Timeouts/connect``).
        case connect
        /// The whole exchange took longer than ``Timeouts/total``.
        case total
        /// No data moved for ``Timeouts/stall``.
        case stall
        /// The phase name.
        public var description: String { rawValue }
    }

    /// The response attached to the error, if the server answered.
    public var response: Response? {
        if case .httpStatus(let response) = self { return response }
        return nil
    }

    /// Whether retrying the same request later may succeed: timeouts, lost connections,
    /// connection failures, an unreachable proxy, and statuses 408, 429, 502, 503 and 504
    /// (from the server, or from its proxy in answer to `CONNECT`).
    public var isTransient: Bool {
        switch self {
        case .timedOut, .connectionLost, .cannotConnect: true
        case .proxyFailed(_, let failure): failure.isTransient
        case .httpStatus(let response): Self.transientStatuses.contains(response.statusCode)
        default: false
        }
    }

    /// Statuses after which the same request may succeed later, from a server or a proxy.
    static let transientStatuses: Set<Int> = [408, 429, 502, 503, 504]

    /// One line saying what happened, to what, and what to do. Never contains a credential.
    public var description: String {
        switch self {
        case .invalidURL(let url, let reason):
            "Invalid URL \"\(Redaction.url(url))\": \(reason)."
        case .invalidHeader(let name, let reason):
            "Invalid header \"\(name)\": \(reason). The request was not sent."
        case .invalidRequest(let reason):
            "Invalid request: \(reason). The request was not sent."
        case .cannotResolveHost(let host):
            "Cannot resolve host \"\(host)\": check the host name and your DNS settings."
        case .cannotConnect(let host, let port, let reason):
            "Cannot connect to \(host):\(port): \(reason). Check that the server is running and reachable."
        case .proxyFailed(let proxy, let failure):
            "The proxy \(proxy) failed: \(failure)."
        case .connectionLost(let host, let reason):
            "The connection to \(host) was lost before the response was complete: \(reason)."
        case .timedOut(let phase, let after, let url):
            "Timed out in the \(phase) phase after \(Self.format(after)) for \(Redaction.url(url.absoluteString)). "
                + "Raise the \(phase) timeout in Configuration.timeouts if the server is slow."
        case .untrustedCertificate(let host, let reason):
            "The certificate of \(host) is not trusted (\(reason)). If \(host) is a development host, "
                + "allowlist it with TrustPolicy.selfSignedHosts, or better, trust its certificate or pin its key; "
                + "never allowlist a production host."
        case .clientCertificate(let host, let reason):
            "Client certificate for \(host): \(reason). Configure it with TrustPolicy.present(_:to:)."
        case .pinMismatch(let host):
            "The public key of \(host) does not match its configured pin. The server's key changed or the "
                + "connection is being intercepted; update the pin only if you expected the change."
        case .tooManyRedirects(let limit, let url):
            "Too many redirects (more than \(limit)) starting at \(Redaction.url(url.absoluteString))."
        case .httpStatus(let response):
            "HTTP \(response.statusCode) from \(Redaction.url(response.url.absoluteString)) (\(response.data.count) bytes of body)."
        case .decoding(let type, let underlying, let prefix):
            "Cannot decode \(type): \(underlying). Body starts with: \(prefix)"
        case .cancelled:
            "The request was cancelled."
        case .responseTooLarge(let limit, let url):
            "The response from \(Redaction.url(url.absoluteString)) is larger than the limit of \(limit) bytes; "
                + "raise the limit (Configuration.maximumResponseSize; for a stream, the one given to "
                + "collect(upTo:), or to lines(maximumLength:) for one line) or use download(to:)."
        case .headersTooLarge(let limit, let url):
            "The response headers from \(Redaction.url(url.absoluteString)) are larger than the limit of \(limit) bytes."
        case .authenticationFailed(let reason, _):
            "Authentication failed: \(reason)."
        case .fileError(let path, let reason):
            "File error at \(path): \(reason)."
        case .cookieJar(let reason):
            "Cookie jar: \(reason)."
        case .transport(let code, let message):
            "Transport error \(code): \(message)."
        }
    }

    static func format(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        // Whole seconds when milliseconds would not fit (a `Retry-After` of 10^19 seconds).
        guard seconds.magnitude < UInt64(Int64.max / 1000) else { return "\(seconds) s" }
        let milliseconds = seconds * 1000 + attoseconds / 1_000_000_000_000_000
        return milliseconds % 1000 == 0 ? "\(milliseconds / 1000) s" : "\(milliseconds) ms"
    }
}

extension WattleError: LocalizedError {
    /// The same text as ``description``, so `error.localizedDescription` carries the context
    /// (and, as the description, no credential).
    public var errorDescription: String? { description }
}

extension WattleError {
    /// What `dump` shows: the ``description``, whose URLs are redacted, rather than the
    /// associated values as they are (a URL's query may carry a token).
    public var customMirror: Mirror {
        Mirror(self, children: ["description": description], displayStyle: .enum)
    }
}
