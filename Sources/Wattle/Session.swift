import Logging
import WattleKeychain

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Sends requests: the entry point of Wattle.
///
/// ```swift
/// let session = Session(configuration: Configuration { $0.baseURL = URL(string: "https://api.example.com/") })
/// let user = try await session.get("users/42").decode(User.self)
/// ```
///
/// A session owns one libcurl multi handle driven by one thread; connections and TLS sessions
/// are reused across its requests. Create one per API and keep it; it is safe to use from any
/// number of tasks at once. ``shared`` serves the `String` endpoint helpers.
///
/// A process that forks without `exec` makes its sessions in the child: the child has none of
/// the parent's threads, so a session made before the fork would never answer there. (The
/// sockets of its connections are close-on-exec, so a child that does `exec` gets none.)
public final class Session: Sendable {
    /// The configuration this session was created with.
    public let configuration: Configuration
    /// The transport performing each exchange.
    public let transport: any Transport

    /// Creates a session on Wattle's libcurl engine.
    public convenience init(configuration: Configuration = Configuration()) {
        self.init(configuration: configuration, transport: CurlTransport(configuration: configuration))
    }

    /// Creates a session on a given transport (for example `StubTransport` in tests).
    public convenience init(configuration: Configuration = Configuration(), transport: any Transport) {
        self.init(configuration: configuration, transport: transport, storedToken: nil)
    }

    /// Creates a session on Wattle's libcurl engine whose authenticator's store has already been
    /// read, on the caller's thread: `storedToken` is what it holds (nil: no token). The first
    /// request then sends it without reading the store again, which the session would do on a
    /// thread of Swift's pool. For a one-shot program (the `wattle` CLI) that has the thread to spare.
    package convenience init(configuration: Configuration, storedToken: AuthToken?) {
        self.init(
            configuration: configuration, transport: CurlTransport(configuration: configuration),
            storedToken: .some(storedToken))
    }

    /// - Parameter storedToken: nil when the store has not been read; `.some(nil)` when it holds
    ///   no token.
    private init(configuration: Configuration, transport: any Transport, storedToken: AuthToken??) {
        self.configuration = configuration
        self.transport = transport
        var configured = configuration.defaultHeaders
        configured.add(name: "User-Agent", value: configuration.userAgent)
        configurationHeadersAreValid = (try? configured.validate()) != nil
        defaultHeadersHaveFraming = configuration.defaultHeaders.hasFraming
        baseOrigin = configuration.baseURL.map(Origin.init)
        if let authenticator = configuration.authenticator {
            if baseOrigin == nil {
                configuration.logger.warning(
                    "an authenticator without a baseURL sends its token with no request: the token goes only to the base URL's origin"
                )
            }
            var bare = configuration
            bare.authenticator = nil
            auth = AuthCoordinator(
                authenticator: authenticator, bareSession: Session(configuration: bare, transport: transport),
                logger: configuration.logger, storedToken: storedToken)
        } else {
            auth = nil
        }
    }

    /// The token state, when an authenticator is configured.
    let auth: AuthCoordinator?
    /// Whether the default headers and the user agent passed ``HTTPHeaders/validate()``, so
    /// that each request checks only what it adds. When they did not, each request checks all
    /// of its headers and fails on a bad default it does not replace.
    private let configurationHeadersAreValid: Bool
    /// Whether the default headers name a `Content-Length` or `Transfer-Encoding`, which no
    /// request sends (see `HTTPHeaders.removeFraming()`): checked once, not on every request.
    private let defaultHeadersHaveFraming: Bool
    /// The base URL's origin: the token goes to requests for this origin only.
    let baseOrigin: Origin?

    // pthread-based, not `Synchronization.Mutex`: ThreadSanitizer cannot see that Mutex's
    // hand-over on Linux and reports false races (see `PThreadLocked`).
    private static let sharedSession = PThreadLocked<Session?>(nil)

    /// The session used by the `String` endpoint helpers (`"users".get()`), created with the
    /// default configuration on first use. Replace it with ``configureShared(_:)``.
    public static var shared: Session {
        sharedSession.withLock { session in
            if let session { return session }
            let created = Session()
            session = created
            return created
        }
    }

    /// Replaces ``shared`` with a session using the given configuration.
    ///
    /// ```swift
    /// Session.configureShared { $0.baseURL = URL(string: "https://api.example.com/v1/") }
    /// let users = try await "users".get()
    /// ```
    public static func configureShared(_ configure: (inout Configuration) -> Void) {
        var configuration = Configuration()
        configure(&configuration)
        let session = Session(configuration: configuration)
        sharedSession.withLock { $0 = session }
    }

    /// Replaces ``shared`` with the given session.
    public static func setShared(_ session: Session) {
        sharedSession.withLock { $0 = session }
    }

    /// Sends a request, following redirects, and returns the response.
    ///
    /// - Throws: ``WattleError``; a status outside `200..<300` is
    ///   ``WattleError/httpStatus(_:)`` carrying the whole response, unless the request
    ///   accepts it (``Request/acceptedStatuses``).
    public func send(_ request: Request) async throws(WattleError) -> Response {
        try await sendRetrying(request, download: nil)
    }

    /// Sends with the retry policy, if any, around the authenticated exchange, and returns a
    /// final status the request accepts (``Request/acceptedStatuses``) as its response.
    func sendRetrying(
        _ request: Request, download: TransportRequest.DownloadTarget?, stream: ResponseStreamBuffer? = nil
    ) async throws(WattleError) -> Response {
        guard !request.acceptedStatuses.isEmpty else {
            return try await sendWithRetries(request, download: download, stream: stream)
        }
        do {
            return try await sendWithRetries(request, download: download, stream: stream)
        } catch .httpStatus(let response) where request.acceptedStatuses.contains(response.statusCode) {
            return response
        }
    }

    /// Sends with the retry policy, if any, around the authenticated exchange. The request is
    /// resolved and checked once, whatever the number of attempts.
    private func sendWithRetries(
        _ request: Request, download: TransportRequest.DownloadTarget?, stream: ResponseStreamBuffer?
    ) async throws(WattleError) -> Response {
        let prepared = try prepare(request, download: download, stream: stream)
        // A request bringing its own credentials (an `Authorization` header, or user-info in
        // its absolute URL, which libcurl sends as Basic) is sent with them, not with the stored
        // token. (User-info in the base URL is the configuration's: the token still goes.)
        let usesToken =
            request.authentication == .automatic && !request.headers.contains("Authorization")
            && !OmittedHeaders.contains(request.omittedHeaders, "Authorization")
            && !UserInfo.isPresent(in: request.endpoint)
        guard let retry = configuration.retry else {
            return try await sendAuthenticated(prepared, usesToken: usesToken)
        }
        var attempt = 1
        while true {
            do {
                return try await sendAuthenticated(prepared, usesToken: usesToken)
            } catch {
                // (A streamed body the reader has started on is not sent again.)
                guard stream?.hasStarted != true,
                    let delay = retry.delay(after: error, attempt: attempt, method: request.method)
                else { throw error }
                // A resumable download's bytes the next attempt will not continue are emptied first.
                if let partial = prepared.download?.partial {
                    try await onGlobalExecutor { () throws(WattleError) in try partial.prepareForRetry() }
                }
                configuration.logger.debug(
                    "retrying \(request.method) \(Redaction.url(request.endpoint)) in \(WattleError.format(delay)) after: \(error)"
                )
                do {
                    try await Task.sleep(for: delay)
                } catch {
                    throw .cancelled
                }
                attempt += 1
            }
        }
    }

    /// Adds the token for the API's origin; on an auth failure, refreshes (once for all
    /// concurrent requests) and retries once.
    ///
    /// - Parameter usesToken: false when the request opted out (``Request/Authentication-swift.enum/none``)
    ///   or brings its own credentials (an `Authorization` header, user-info in its URL); it is
    ///   then sent as it is.
    func sendAuthenticated(
        _ prepared: TransportRequest, usesToken: Bool
    ) async throws(WattleError) -> Response {
        guard usesToken, let auth, let authenticator = configuration.authenticator, let baseOrigin,
            Origin(prepared.target) == baseOrigin
        else {
            return try await execute(prepared)
        }
        guard let (token, version) = try await auth.current() else {
            return try await execute(prepared)
        }
        do {
            return try await execute(try Self.authorizing(prepared, with: token))
        } catch .httpStatus(let response)
            where Origin(response.url) == baseOrigin && !response.metrics.leftTheOrigin
            && !response.metrics.changedTheMethod && authenticator.isAuthenticationFailure(response)
        {
            // (A 401 from another origin, or from the API after a redirect went elsewhere and
            // back, did not see the token: not its refusal. One after a redirect that changed
            // the method, a POST's 303, is the error: the server acted on the POST, and sending
            // it again with a new token would do it twice, RFC 9110 section 9.2.2.)
            let retryToken: AuthToken
            if (authenticator.refresh == nil && authenticator.obtain == nil) || token.isBasic {
                // No way to renew (none configured, or Basic credentials, which a refresh
                // cannot renew): a request sent with an older token than the current one
                // retries with it; otherwise the server's answer is the error, body and all (a
                // CLI exits 4 for it, as for any 4xx).
                guard let newer = await auth.newerToken(than: version) else { throw .httpStatus(response) }
                retryToken = newer
            } else {
                guard let fresh = try await auth.refresh(after: version).0 else {
                    throw .authenticationFailed(reason: "signed out: the server refused the token and none is stored")
                }
                retryToken = fresh
            }
            return try await execute(try Self.authorizing(prepared, with: retryToken))
        }
    }

    /// The request with `Authorization` set from a token, checked like every header.
    static func authorizing(_ prepared: TransportRequest, with token: AuthToken) throws(WattleError) -> TransportRequest
    {
        let field = HTTPHeaders.Field(name: "Authorization", value: token.authorizationValue)
        try HTTPHeaders([field]).validate()
        var authorized = prepared
        authorized.headers["Authorization"] = field.value
        return authorized
    }

    /// Sends a prepared request and follows redirects; downloads stream to its target file.
    func execute(_ prepared: TransportRequest) async throws(WattleError) -> Response {
        let start = ContinuousClock.now
        var current = prepared
        let originalURL = current.url
        // The API's origin, or with no base URL the request's own. (Only with a willSend hook:
        // the request path pays nothing for it otherwise.)
        let origin = configuration.willSend == nil ? nil : baseOrigin ?? Origin(prepared.target)
        var hops = 0
        var leftTheOrigin = false
        var changedTheMethod = false
        while true {
            warnIfRelaxed(current)
            var response: Response
            var sent = current
            // The total timeout covers the redirects and the willSend hook's time too: a hop
            // after either gets what is left of it.
            let sharesTotal = hops > 0 || origin != nil
            do throws(WattleError) {
                if let origin { sent = try await withSendHeaders(current, origin: origin) }
                if let stream = sent.responseStream { stream.setRedirectCount(hops) }
                if sharesTotal, let total = prepared.timeouts.total {
                    let left = total - (ContinuousClock.now - start)
                    guard left > .zero else {
                        throw WattleError.timedOut(phase: .total, after: total, url: current.url)
                    }
                    sent.timeouts.total = left
                }
                response = try await transport.perform(sent)
            } catch {
                // A later hop's failure comes after a server answered (a renewal counts it).
                if hops > 0 { AuthCoordinator.renewalReach?.markReached() }
                var error = error
                if sharesTotal, case .timedOut(.total, after: _, let url) = error, let total = prepared.timeouts.total {
                    error = .timedOut(phase: .total, after: total, url: url)  // the configured length
                }
                log(current, outcome: "failed: \(error)", start: start)
                throw error
            }
            let following: TransportRequest?
            do {
                following = try RedirectFollower.nextRequest(
                    after: response, for: current, configuration: configuration, hops: hops, originalURL: originalURL)
            } catch {
                AuthCoordinator.renewalReach?.markReached()
                throw error
            }
            if let next = following {
                hops += 1
                leftTheOrigin = leftTheOrigin || Origin(next.target) != Origin(current.target)
                changedTheMethod = changedTheMethod || next.method != current.method
                current = next
                continue
            }
            response.metrics.redirectCount = hops
            response.metrics.leftTheOrigin = leftTheOrigin
            response.metrics.changedTheMethod = changedTheMethod
            response.sessionDecoder = configuration.jsonDecoder
            log(current, outcome: "\(response.statusCode) (\(response.metrics.bytesReceived) bytes)", start: start)
            if configuration.logger.logLevel <= .trace {
                configuration.logger.trace(
                    """
                    request headers:
                    \(sent.headers.redactedDescription(for: configuration))
                    response headers:
                    \(response.headers.redactedDescription(for: configuration))
                    """)
            }
            guard (200..<300).contains(response.statusCode) else { throw .httpStatus(response) }
            return response
        }
    }

    /// The request with ``Configuration/willSend``'s headers, for a hop to `origin` (the
    /// API's). The next hop is made from the request without them: a hop to another origin
    /// never carries them, and one to the same origin gets its own.
    private func withSendHeaders(
        _ request: TransportRequest, origin: Origin
    ) async throws(WattleError) -> TransportRequest {
        guard let willSend = configuration.willSend, Origin(request.target) == origin else { return request }
        var added = try await willSend(request)
        try added.validate()
        added.removeFraming()
        var adapted = request
        for field in added { adapted.headers.remove(field.name) }
        for field in added { adapted.headers.add(name: field.name, value: field.value) }
        return adapted
    }

    /// Refuses a timeout of zero or less, which libcurl would take as 1 ms (so every request
    /// would fail at once) and curl users read as "none": `nil` is none for `total` and `stall`.
    private static func checkPositive(_ timeouts: Timeouts, request: Duration?) throws(WattleError) {
        func refuse(_ name: String, _ value: Duration, _ none: String) throws(WattleError) {
            throw .invalidRequest(
                reason: "the \(name) timeout must be longer than zero, not \(WattleError.format(value))\(none)")
        }
        if timeouts.connect <= .zero { try refuse("connect", timeouts.connect, "") }
        if let total = timeouts.total, total <= .zero { try refuse("total", total, " (nil is none)") }
        if let stall = timeouts.stall, stall <= .zero { try refuse("stall", stall, " (nil is none)") }
        if let request, request <= .zero { try refuse("request's", request, " (nil is the configuration's)") }
    }

    /// Builds the transport request: URL, merged headers, body, timeouts.
    func prepare(
        _ request: Request, download: TransportRequest.DownloadTarget?, stream: ResponseStreamBuffer? = nil
    ) throws(WattleError) -> TransportRequest {
        guard request.method.isValidToken else {
            throw .invalidRequest(
                reason: "the method \"\(Redaction.escaped(request.method.rawValue))\" is not a valid HTTP method token")
        }
        if let error = request.body.deferredError { throw error }
        if request.method == .head, !request.body.isNone {
            // libcurl would send it as a POST renamed HEAD, then wait for a body that never comes.
            throw .invalidRequest(reason: "a HEAD request has no body")
        }
        let (url, target) = try request.target(relativeTo: configuration.baseURL)
        var headers = configuration.defaultHeaders.merging(request.headers)
        if defaultHeadersHaveFraming || request.headers.hasFraming { headers.removeFraming() }
        if !headers.contains("User-Agent") { headers["User-Agent"] = configuration.userAgent }
        var bodyContentType: HTTPHeaders.Field?
        // The body's own type (a multipart boundary, a form) wins over a default header's; a
        // request's own `Content-Type` wins over both, but for a multipart one without a
        // boundary (`multipart/form-data`, copied from an API's documentation), which gets the
        // body's: the server could not find the parts without it.
        if let contentType = request.body.contentType {
            // No type of the request's own: the body's. One of its own: nil (it stands) unless it
            // is multipart without a boundary.
            let sent = request.headers["Content-Type"].map { RequestBody.multipartType($0, boundaryFrom: contentType) }
            if let type = sent ?? contentType {
                headers["Content-Type"] = type
                bodyContentType = HTTPHeaders.Field(name: "Content-Type", value: type)
            }
        }
        var omitted: [String] = []
        if !request.omittedHeaders.isEmpty {
            omitted = try OmittedHeaders.checked(request.omittedHeaders, requestHeaders: request.headers)
            for name in omitted { headers.remove(name) }
            if bodyContentType.map({ OmittedHeaders.contains(omitted, $0.name) }) == true { bodyContentType = nil }
        }
        if configurationHeadersAreValid {
            // The other fields come from the configuration, checked once in `init`.
            try request.headers.validate()
            if let bodyContentType { try HTTPHeaders.validate(bodyContentType) }
        } else {
            try headers.validate()
        }
        // Checked as configured: a download, a stream or a body from a file drops the total below.
        try Self.checkPositive(configuration.timeouts, request: request.timeout)
        var timeouts = configuration.timeouts
        if let timeout = request.timeout {
            timeouts.total = timeout
        } else if download != nil || stream != nil || request.body.file != nil || !request.body.segments.isEmpty {
            // A body of any size, either way: the stall timeout bounds it instead.
            timeouts.total = nil
        }
        let hasBody = !request.body.isNone || request.method.sendsLengthWithoutBody
        var prepared = TransportRequest(
            method: request.method, url: url, target: target, headers: headers, body: hasBody ? request.body.data : nil,
            timeouts: timeouts, maximumResponseSize: configuration.maximumResponseSize,
            trust: configuration.trust, download: download, pinsChecked: true)
        prepared.maximumHeaderSize = configuration.maximumHeaderSize
        if let file = request.body.file {
            prepared.body = nil
            prepared.bodyFile = file
        } else if !request.body.segments.isEmpty {
            prepared.body = nil
            prepared.bodySegments = request.body.segments
        }
        if let progress = request.uploadProgress { prepared.uploadProgress = progress }
        if let stream { prepared.responseStream = stream }
        if !request.acceptedStatuses.isEmpty { prepared.acceptedStatuses = request.acceptedStatuses }
        if !omitted.isEmpty { prepared.omittedHeaders = omitted }
        return prepared
    }

    /// Hosts already warned about, so each relaxed host is logged once per session (to the
    /// session's logger: per process, a second session's logger was never told).
    private let warnedHosts = PThreadLocked<Set<String>>([])
    /// The most hosts `warnedHosts` holds.
    static let warnedHostsLimit = 1_024
    /// The relaxed host this session's last request went to, already in `warnedHosts`: its next
    /// requests skip building the set's key (0.7 µs a request in a profile of HTTPS requests
    /// to an allowlisted host).
    private let lastRelaxedHost = PThreadLocked<Session.HostAndPort?>(nil)

    struct HostAndPort: Sendable, Equatable {
        var host: String
        var port: Int
    }

    /// Logs a warning the first time a request goes to a host whose TLS verification is relaxed.
    private func warnIfRelaxed(_ request: TransportRequest) {
        let trust = request.hostTrust
        guard trust.isRelaxed else { return }
        let host = request.target.host
        let port = request.target.port
        let hostAndPort = HostAndPort(host: host, port: port)
        if lastRelaxedHost.withLock({ $0 == hostAndPort }) { return }
        let key = "\(host.lowercased()):\(port)"
        let first = warnedHosts.withLock { warned in
            // Bounded: a wildcard pattern (`*.dev.example`) can reach any number of hosts over a
            // process's life. Past the bound the set starts again, so a host may be warned about
            // once more, but memory does not grow.
            if warned.count >= Self.warnedHostsLimit { warned.removeAll() }
            return warned.insert(key).inserted
        }
        lastRelaxedHost.withLock { $0 = hostAndPort }
        guard first else { return }
        let how =
            trust.pins.isEmpty
            ? "any self-signed certificate is accepted"
            : "its certificate is accepted when its public key matches a pin"
        configuration.logger.warning(
            "TLS verification is relaxed for \(host):\(port): \(how) (the host name is still checked). Allowlisting is for development hosts only, never production."
        )
    }

    private func log(_ request: TransportRequest, outcome: @autoclosure () -> String, start: ContinuousClock.Instant) {
        let logger = configuration.logger
        guard logger.logLevel <= .debug else { return }
        let elapsed = ContinuousClock.now - start
        logger.debug(
            "\(request.method) \(Redaction.url(request.target.string)) -> \(outcome()) in \(WattleError.format(elapsed))"
        )
    }
}
