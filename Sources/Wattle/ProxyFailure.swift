/// How a proxy failed a request, in ``WattleError/proxyFailed(proxy:failure:)``.
///
/// No case ever holds the proxy's credentials.
public enum ProxyFailure: Sendable, Hashable, CustomStringConvertible {
    /// No connection to the proxy could be made, its host name did not resolve, or the
    /// connection to it broke during a SOCKS handshake. Transient.
    case unreachable(reason: String)
    /// The proxy answered `CONNECT` with `status` instead of opening the tunnel to `target`
    /// (`host:port`): 407 (or 401 from some proxies) when its credentials are missing or wrong.
    /// Transient for 408, 429, 502, 503 and 504.
    case refusedTunnel(status: Int, target: String)
    /// The handshake with the proxy failed: a SOCKS proxy refused the credentials or the
    /// request, or spoke another protocol; or an `https` proxy's certificate is not trusted.
    /// Not transient.
    case handshakeFailed(reason: String)

    /// Whether retrying later may succeed.
    var isTransient: Bool {
        switch self {
        case .unreachable: true
        case .refusedTunnel(let status, _): WattleError.transientStatuses.contains(status)
        case .handshakeFailed: false
        }
    }

    /// What happened, in words.
    public var description: String {
        switch self {
        case .unreachable(let reason):
            "cannot reach it: \(reason)"
        case .refusedTunnel(let status, let target):
            "it refused the tunnel to \(target) with HTTP \(status)"
                + (status == 407 || status == 401
                    ? "; check the proxy's user name and password (given in its URL as http://user:password@host:port)"
                    : "")
        case .handshakeFailed(let reason):
            "the handshake with it failed: \(reason)"
        }
    }
}
