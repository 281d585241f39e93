public import Logging

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// How a ``Session`` behaves: base URL, headers, timeouts, connections, redirects, limits.
///
/// A value type: build one, then create a session with it.
///
/// ```swift
/// let session = Session(configuration: Configuration {
///     $0.baseURL = URL(string: "https://api.example.com/v1/")
///     $0.defaultHeaders["Accept"] = "application/json"
///     $0.timeouts.total = .seconds(20)
/// })
/// ```
public struct Configuration: Sendable {
    /// The URL that relative endpoints resolve against: an endpoint extends its path (`users`
    /// under `https://api.example.com/v1/` is `https://api.example.com/v1/users`). Its query is
    /// kept, before the endpoint's own and the parameters (`https://x.example/openai?api-version=1`
    /// and `deployments` with `["n": 2]` give `…/openai/deployments?api-version=1&n=2`); its
    /// fragment is dropped.
    public var baseURL: URL?
    /// Headers sent with every request; a request's own headers replace same-named ones. A
    /// `Content-Type` here is sent only with requests whose body has no type of its own: a
    /// JSON, form, multipart, text or data body sends its own (a multipart one names its
    /// boundary).
    ///
    /// Unless these or the request name them, Wattle also sends `Accept: */*` and an
    /// `Accept-Encoding` listing the codings libcurl decodes (`deflate, gzip, br, zstd` with
    /// Debian 12's libcurl); a body sent compressed is decoded before ``Response/data``.
    public var defaultHeaders: HTTPHeaders = [:]
    /// Connect, total and stall timeouts.
    public var timeouts = Timeouts()
    /// The HTTP version to negotiate. Default ``HTTPVersion/http2OverTLS``: HTTP/2 over TLS
    /// when the server offers it (ALPN), HTTP/1.1 otherwise and for plain `http`.
    public var httpVersion: HTTPVersion = .http2OverTLS
    /// Whether concurrent requests to one host share one HTTP/2 connection
    /// (`CURLMOPT_PIPELINING` multiplexing with `CURLOPT_PIPEWAIT`). Default `true`.
    public var multiplexing = true
    /// The most connections open to one host at once; further requests queue, their
    /// ``Timeouts/total`` running while they wait. Default 32.
    public var connectionsPerHost = 32
    /// How many idle connections are kept for reuse (`CURLMOPT_MAXCONNECTS`). Keep it at least
    /// the expected concurrency, or connections are closed and reopened. Default 64.
    public var connectionCacheSize = 64
    /// Which TLS certificates are trusted, host by host. Default: full verification against
    /// the system CA store for every host. See ``TrustPolicy``.
    public var trust = TrustPolicy.default
    /// Applies a stored token to requests for ``baseURL``'s origin and refreshes it; nil for
    /// none. Without a ``baseURL`` no request carries the token: the session logs a warning,
    /// and a sign-in fails.
    public var authenticator: Authenticator?
    /// Headers computed for each request to the API just before it goes out: a signature over
    /// the method, URL and body (``TransportRequest/body``, or for a streamed body
    /// ``TransportRequest/bodyFile`` or ``TransportRequest/bodySegments``), a request ID, a
    /// timestamp.
    ///
    /// Called for requests to ``baseURL``'s origin (with no base URL, to each request's own
    /// origin): for every attempt (again for a retry, for the retry after a token refresh,
    /// and for the refresh itself), after the stored token is applied, and for every redirect
    /// hop to that origin, with the hop's URL. A request or a hop to another origin (a
    /// presigned upload URL, an identity provider) gets no call and none of these headers.
    /// The headers returned replace same-named ones and are checked like every header;
    /// throwing fails the request, unsent. Nil (the default) for none.
    ///
    /// ```swift
    /// $0.willSend = { request in ["X-Request-ID": UUID().uuidString] }
    /// ```
    public var willSend: (@Sendable (TransportRequest) async throws(WattleError) -> HTTPHeaders)?
    /// Retries idempotent requests on transient failures; nil (the default) for none.
    public var retry: RetryPolicy?
    /// Whether and how far redirects are followed. Default: up to 10 hops.
    public var redirects = RedirectPolicy.follow(maximumHops: 10)
    /// The largest response body kept in memory, in bytes; larger bodies fail with
    /// ``WattleError/responseTooLarge(limit:url:)``. Downloads to a file are not limited.
    /// Default 100 MiB.
    public var maximumResponseSize = 100 * 1024 * 1024
    /// The largest response header section accepted, in bytes; more fails with
    /// ``WattleError/headersTooLarge(limit:url:)``. Default 256 KiB.
    public var maximumHeaderSize = 256 * 1024
    /// Decodes the JSON of this session's responses in ``Response/decode(_:decoder:)`` (error
    /// responses' included) unless a call passes its own: set the API's strategies here once,
    /// as `.convertFromSnakeCase` or `.iso8601`. Default: a plain `JSONDecoder`. Set it up
    /// before the session is made and leave it: the session shares it between threads.
    /// (``Response/json()`` and the token responses of ``AuthToken`` read JSON as it is.)
    public var jsonDecoder = JSONDecoder()
    /// Encodes the `json:` bodies of ``Session/post(_:json:encoder:headers:)``,
    /// ``Session/put(_:json:encoder:headers:)`` and ``Session/patch(_:json:encoder:headers:)``
    /// unless a call passes its own. Default: a plain `JSONEncoder`. Set it up before the
    /// session is made and leave it. (``RequestBody/json(_:encoder:)`` encodes with the encoder
    /// it is given, when it is made.)
    public var jsonEncoder = JSONEncoder()
    /// The `User-Agent` header, unless a request sets its own.
    public var userAgent = "Wattle/\(Wattle.version) libcurl/\(CurlGlobal.libcurlVersion)"
    /// The proxy. Default ``Proxy/environment``.
    public var proxy = Proxy.environment
    /// Header names, besides `Authorization`, `Cookie` and `Proxy-Authorization`, that carry
    /// credentials: dropped when a redirect changes origin, redacted in the session's logs.
    /// Names match in any case (`"X-Goog-Api-Key"` covers `x-goog-api-key`). Names that say
    /// they hold a credential (`PRIVATE-TOKEN`, `X-Vault-Token`, `X-Client-Secret`,
    /// `X-Session-Id`) are treated so without being listed here; `description` and `dump` of
    /// ``HTTPHeaders``, which know no configuration, redact those and the built-in names.
    public var sensitiveHeaders: Set<String> = ["x-api-key", "x-auth-token", "x-access-token", "api-key"]
    /// Fixed host-to-address mappings, like curl's `--resolve`: requests to `host:port` connect
    /// to `address` without DNS, while TLS still checks the certificate against `host`.
    public var hostOverrides: [HostOverride] = []
    /// Whether the session keeps the cookies servers set and sends them back. Default
    /// ``CookieStorage/none``.
    public var cookies = CookieStorage.none
    /// Where Wattle logs: one line per request at `debug`, credentials redacted.
    public var logger = Logger(label: "wattle")

    /// Creates the default configuration.
    public init() {}

    /// Creates a configuration by changing the defaults in a closure.
    public init(_ configure: (inout Configuration) -> Void) {
        self.init()
        configure(&self)
    }

    /// The HTTP version a session negotiates.
    public enum HTTPVersion: Sendable, Hashable {
        /// HTTP/1.1 only.
        case http1_1
        /// HTTP/2 over TLS when the server offers it, HTTP/1.1 otherwise.
        case http2OverTLS
        /// HTTP/2 without negotiation, also over plain `http` (h2c prior knowledge).
        ///
        /// On libcurl before 8.0.0 (Debian 12 ships 7.88.1) a plain-`http` connection that
        /// speaks HTTP/2 this way fails when reused, so there each plain-`http` request opens
        /// its own connection (a warning is logged when the session is made); over `https`
        /// connections are reused and multiplexed as usual.
        case http2PriorKnowledge
    }

    /// Which proxy to use.
    ///
    /// Plain `http` requests are forwarded by the proxy; `https` requests go through a tunnel
    /// (`CONNECT`), so the proxy sees neither the request nor its headers, and the server's
    /// certificate is verified as without a proxy (``TrustPolicy`` applies to the server,
    /// never to the proxy). A proxy that cannot be reached, refuses the tunnel or fails its
    /// SOCKS handshake gives ``WattleError/proxyFailed(proxy:failure:)`` (see there for what
    /// libcurl cannot tell apart from the server's failures).
    ///
    /// Its description never shows the password of a proxy URL.
    public enum Proxy: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
        /// `http_proxy`, `https_proxy`, `all_proxy` and `no_proxy` from the environment, as curl reads them.
        case environment
        /// No proxy, whatever the environment says.
        case none
        /// This proxy for every request (`no_proxy` in the environment does not apply), e.g.
        /// `http://proxy:3128`, `http://user:password@proxy:3128` or `socks5h://127.0.0.1:1080`.
        /// A URL that is not a usable proxy URL fails every request, unsent, with
        /// ``WattleError/invalidURL(_:reason:)``.
        case url(String)

        /// The case, with a proxy URL's user name and password left out.
        public var description: String {
            switch self {
            case .environment: "environment"
            case .none: "none"
            case .url(let url): "url(\(Redaction.proxyURL(url)))"
            }
        }

        /// The same as ``description``.
        public var debugDescription: String { description }

        /// A mirror without the proxy URL's credentials (for `dump`).
        public var customMirror: Mirror {
            switch self {
            case .environment, .none: Mirror(self, children: [:])
            case .url(let url): Mirror(self, children: ["url": Redaction.proxyURL(url)])
            }
        }
    }

    /// Whether a session keeps the cookies servers set.
    ///
    /// ```swift
    /// let session = Session(configuration: Configuration {
    ///     $0.baseURL = URL(string: "https://intranet.example.com/api/")
    ///     $0.cookies = .inMemory   // the session cookie of a form login is sent back
    /// })
    /// ```
    public enum CookieStorage: Sendable, Hashable {
        /// No cookie is kept or sent: `Set-Cookie` is ignored, and a request carries only a
        /// `Cookie` header it sets itself. The default, and right for a session that serves
        /// many users, as a server's does: one jar would mix their cookies.
        case none
        /// A jar in memory, for this session alone, as a browser or `URLSession` keeps one.
        /// libcurl's cookie engine stores what each `Set-Cookie` says (a redirect's included)
        /// and sends each cookie back as RFC 6265 scopes it:
        /// - to its host, or its domain when the cookie names one, never a public suffix such
        ///   as `co.uk` (when libcurl is built with libpsl, as Debian's and most are; without it,
        ///   only a domain without a dot is refused);
        /// - under its path;
        /// - when it is `Secure`, over `https` only, where alone it can be set (libcurl counts
        ///   `localhost`, `127.0.0.1` and `::1` as secure over plain `http` too);
        /// - until it expires.
        ///
        /// Ports are not part of a cookie's scope (RFC 6265). The jar goes with the session, and
        /// serves its token refreshes too; ``Session/cookies()`` lists it and
        /// ``Session/removeAllCookies()`` empties it (at sign-out, say). With another transport
        /// (`StubTransport`), no cookie is kept.
        ///
        /// A request that sets its own `Cookie` header sends those cookies after the jar's, in
        /// the one `Cookie` field (a name in both is sent twice), and they are not kept. libcurl
        /// stops adding cookies at about 8 KB of them, the request's own included.
        case inMemory
        /// A jar as ``inMemory`` keeps it, also kept sealed in a keychain item, so that the
        /// next session (the next run of a program) starts with it, as a browser's or
        /// `curl -b jar -c jar` does:
        ///
        /// ```swift
        /// $0.cookies = .keychain(KeychainCookieJar(name: "intranet"))
        /// ```
        ///
        /// The item is read before the session's first request (and before
        /// ``Session/cookies()``); a request that finds it unreadable (a locked keychain, say)
        /// fails with ``WattleError/cookieJar(reason:)``, unsent, and the next one tries again:
        /// a session that did not read the stored cookies never writes. After each response
        /// that sets a cookie, the jar's changes are written back (merged, see below), before
        /// the request returns; a write that fails is logged as an error and tried again after
        /// the next such response. Cookies without an expiry are kept too, as `curl -c` and
        /// httpie's sessions keep them; ``Session/removeAllCookies()`` empties the item as well
        /// (if that fails, it throws, and later writes merge instead of emptying it then).
        ///
        /// Sessions (or processes) may share one item: each write merges this session's
        /// changes since it last read or wrote the item into what is stored, reading and
        /// writing in one keychain transaction. A cookie whose line changed here since then
        /// (set, changed, or removed by a server) replaces the stored one; the others' cookies
        /// stay (one that merely expired here does not remove another's fresher one, and one a
        /// server sets again unchanged is not a change). A session reads the item once, so
        /// cookies another stores later reach it in its next run. ``Session/removeAllCookies()``
        /// empties the item whole, other sessions' cookies included, and another session's
        /// next write does not bring back the cookies it holds unchanged.
        case keychain(KeychainCookieJar)

        /// Whether libcurl's cookie engine runs for the session.
        var keepsCookies: Bool { self != .none }

        /// The keychain item holding the jar, when there is one.
        var persistentJar: KeychainCookieJar? {
            if case .keychain(let jar) = self { jar } else { nil }
        }
    }

    /// Whether and how far redirects are followed.
    ///
    /// Whatever the policy, a hop to another origin (scheme, host or port) carries no
    /// credential header: `Authorization`, `Cookie`, `Proxy-Authorization`, the
    /// ``Configuration/sensitiveHeaders``, and any header whose name says it holds a token, a
    /// key, a secret, a password or a session. A redirect that would send the request's body
    /// again (a 307 or 308; a 301 or 302 after a method other than POST) is not followed to
    /// another origin (the body could be a password, and the hop could be from `https` to
    /// `http`): the 3xx is returned, as ``WattleError/httpStatus(_:)``, unless
    /// ``resendsBodyToOtherOrigins`` allows it.
    public struct RedirectPolicy: Sendable, Hashable {
        /// The most redirects followed for one request; `0` follows none.
        public var maximumHops: Int
        /// Whether a redirect that keeps the request's body is followed to another origin. Default false.
        public var resendsBodyToOtherOrigins = false
        /// Follows up to `maximumHops` redirects.
        public static func follow(maximumHops: Int, resendingBodyToOtherOrigins: Bool = false) -> RedirectPolicy {
            RedirectPolicy(maximumHops: maximumHops, resendsBodyToOtherOrigins: resendingBodyToOtherOrigins)
        }
        /// Follows no redirect: a 3xx response is returned as an ``WattleError/httpStatus(_:)`` error.
        public static let none = RedirectPolicy(maximumHops: 0)
    }

    /// A fixed mapping from `host:port` to an address.
    public struct HostOverride: Sendable, Hashable {
        /// The host name as written in URLs.
        public var host: String
        /// The port.
        public var port: Int
        /// The address to connect to instead, e.g. `127.0.0.1`.
        public var address: String
        /// Creates a mapping.
        public init(host: String, port: Int, address: String) {
            self.host = host
            self.port = port
            self.address = address
        }
    }

    /// Whether a header name carries a credential under this configuration.
    func isSensitiveHeader(_ name: String) -> Bool {
        Redaction.isSensitiveHeader(name) || sensitiveHeaders.contains { $0.caseInsensitiveEquals(name) }
    }
}

/// Facts about the Wattle library itself.
public enum Wattle {
    /// The library version.
    public static let version = "0.1.0"
}
