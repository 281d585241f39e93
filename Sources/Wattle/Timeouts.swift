/// The three timeouts of a request. Each must be longer than zero (`nil` is none for
/// ``total`` and ``stall``): a request with a zero or negative one fails unsent with
/// ``WattleError/invalidRequest(reason:)``.
///
/// ```swift
/// config.timeouts = Timeouts(connect: .seconds(5), total: .seconds(30), stall: .seconds(10))
/// ```
public struct Timeouts: Sendable, Hashable {
    /// Resolving, connecting and the TLS handshake together (`CURLOPT_CONNECTTIMEOUT_MS`).
    public var connect: Duration
    /// The whole exchange, from start to the last byte (`CURLOPT_TIMEOUT_MS`), redirects
    /// followed included: each hop gets what is left of it, after the time
    /// ``Configuration/willSend`` took for it (a hook that returns after the whole timeout
    /// has passed fails the request, unsent, with ``WattleError/timedOut(phase:after:url:)``;
    /// the hook itself is not interrupted, so it must return promptly). `nil` for none. Each attempt of a
    /// ``RetryPolicy``, and the resend after a token refresh, starts it afresh. Downloads,
    /// streamed responses and bodies sent from a file (``RequestBody/file(_:contentType:)``, a
    /// multipart body with a part from disk) ignore it unless the request sets its own
    /// timeout: a transfer of any size then runs while it progresses, bounded by ``stall``.
    /// Time spent waiting for a connection (at ``Configuration/connectionsPerHost``) counts:
    /// only this limit bounds that wait.
    public var total: Duration?
    /// How long the transfer may go without receiving or sending a byte (see
    /// ``stallMinimumBytes``) before it is abandoned; checked by Wattle every 100 ms once a
    /// connection is assigned; `nil` for none.
    public var stall: Duration?
    /// The bytes that must move within each ``stall`` period for the transfer to count as
    /// progressing. Default 1: only silence is a stall. Raise it to also abandon a server that
    /// trickles (say, 1,024 to refuse one sending a byte a second).
    public var stallMinimumBytes: Int

    /// Creates timeouts. The defaults are 10 s to connect, 60 s in total, 30 s of stall.
    public init(
        connect: Duration = .seconds(10), total: Duration? = .seconds(60), stall: Duration? = .seconds(30),
        stallMinimumBytes: Int = 1
    ) {
        self.connect = connect
        self.total = total
        self.stall = stall
        self.stallMinimumBytes = max(1, stallMinimumBytes)
    }
}
