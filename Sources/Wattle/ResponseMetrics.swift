/// Timings and counters of one exchange, from libcurl's `CURLINFO_*`.
///
/// Times are measured from the start of the transfer: ``nameLookup`` ends when DNS is done,
/// ``connect`` when TCP is connected, ``tlsHandshake`` when TLS is done (zero for `http`),
/// ``firstByte`` when the first response byte arrived, ``total`` at the end.
public struct ResponseMetrics: Sendable, Hashable {
    /// Time until name resolution completed.
    public var nameLookup: Duration = .zero
    /// Time until the TCP connection was established.
    public var connect: Duration = .zero
    /// Time until the TLS handshake completed (zero for plain HTTP or a reused connection).
    public var tlsHandshake: Duration = .zero
    /// Time until the first byte of the response.
    public var firstByte: Duration = .zero
    /// Time of the whole exchange (the last hop, when redirects were followed).
    public var total: Duration = .zero
    /// Bytes of request body sent.
    public var bytesSent: Int64 = 0
    /// Bytes of response body received (after content decoding).
    public var bytesReceived: Int64 = 0
    /// The HTTP version used: `"1.0"`, `"1.1"`, `"2"` or `"3"`, or empty if none.
    public var httpVersion: String = ""
    /// Whether an existing connection was reused (no new connect or TLS handshake).
    public var reusedConnection = false
    /// The IP address connected to.
    public var remoteAddress: String = ""
    /// The port connected to.
    public var remotePort: Int = 0
    /// How many redirects were followed before this response.
    public var redirectCount = 0
    /// Whether a redirect before this response went to another origin than the request's:
    /// its credential headers, the session's token among them, were dropped from then on.
    var leftTheOrigin = false
    /// Whether a redirect before this response turned the request into another method (a
    /// POST answered 303 and sent on as a GET): the server has acted on the request as sent.
    var changedTheMethod = false

    /// Creates empty metrics (for stubbed responses).
    public init() {}
}
