/// The three timeouts of a request.
///
/// ```swift
/// config.timeouts = Timeouts(connect: .seconds(5), total: .seconds(30), stall: .seconds(10))
/// ```
public struct Timeouts: Sendable, Hashable {
    /// Resolving, connecting and the TLS handshake together (`CURLOPT_CONNECTTIMEOUT_MS`).
    public var connect: Duration
    /// The whole exchange, from start to the last byte (`CURLOPT_TIMEOUT_MS`); `nil` for none.
    /// Downloads ignore it unless the request sets its own timeout.
    public var total: Duration?
    /// How long the transfer may go without receiving or sending a byte before it is abandoned
    /// (`CURLOPT_LOW_SPEED_TIME`, whole seconds, at least one); `nil` for none.
    public var stall: Duration?

    /// Creates timeouts. The defaults are 10 s to connect, 60 s in total, 30 s of stall.
    public init(connect: Duration = .seconds(10), total: Duration? = .seconds(60), stall: Duration? = .seconds(30)) {
        self.connect = connect
        self.total = total
        self.stall = stall
    }
}
