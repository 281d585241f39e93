#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A proxy given as ``Configuration/Proxy/url(_:)``, checked once per session: what libcurl
/// gets, and what errors name (never its credentials).
struct ProxyEndpoint: Sendable {
    /// The URL as libcurl gets it, credentials included.
    let url: String
    /// `scheme://host:port`, for messages: no user name, no password.
    let display: String
    /// The host (an IPv6 address without brackets) and the port libcurl connects to.
    let host: String
    let port: Int
    /// Whether libcurl speaks TLS to the proxy itself (`https://`).
    let isHTTPS: Bool

    /// The proxy schemes libcurl speaks, with the port it uses when the URL has none.
    private static let defaultPorts = [
        "http": 1080, "https": 443, "socks": 1080, "socks4": 1080, "socks4a": 1080, "socks5": 1080, "socks5h": 1080,
    ]

    /// Checks a proxy URL the way libcurl reads it (`host:port` alone means `http://`), or
    /// fails with ``WattleError/invalidURL(_:reason:)`` naming it without credentials.
    init(parsing text: String) throws(WattleError) {
        let trimmed = text.trimmingWhitespace()
        let full = trimmed.contains("://") ? trimmed : "http://" + trimmed
        func invalid(_ reason: String) -> WattleError {
            .invalidURL(Redaction.proxyURL(full), reason: "not a usable proxy URL: \(reason)")
        }
        guard !trimmed.isEmpty else { throw invalid("it is empty; use Configuration.Proxy.none for no proxy") }
        guard let components = URLComponents(string: full), let scheme = components.scheme?.lowercased() else {
            throw invalid(
                "it cannot be parsed (a user name or password with /, ?, # or @ in it must be percent-encoded)")
        }
        guard let defaultPort = Self.defaultPorts[scheme] else {
            throw invalid(
                "the scheme \"\(Redaction.escaped(scheme))\" is not one of http, https, socks, socks4, socks4a, socks5, socks5h"
            )
        }
        guard let host = components.host, !host.isEmpty else { throw invalid("it has no host") }
        guard components.path.isEmpty || components.path == "/", components.query == nil, components.fragment == nil
        else {
            // This also refuses SOCKS over a Unix socket (`socks5h://localhost/run/tor.sock`).
            throw invalid(
                "a proxy URL has no path, query or fragment (a user name or password with /, ?, # or @ in it must be percent-encoded)"
            )
        }
        let port = components.port ?? defaultPort
        guard (1...65535).contains(port) else { throw invalid("the port \(port) is out of range") }
        url = full
        self.host = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        self.port = port
        isHTTPS = scheme == "https"
        let bracketed = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        display = Redaction.escaped("\(scheme)://\(bracketed):\(port)")
    }
}
