#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Which TLS certificates a session accepts, host by host, and which client certificate it
/// presents to the hosts that ask for one (``present(_:to:)``).
///
/// The default verifies every server fully against the system's CA store. For development
/// and test hosts with self-signed certificates, three ways to trust them, strongest first:
///
/// ```swift
/// var trust = TrustPolicy()
/// // 1. Pin the server's public key (the key must match; see PublicKeyPin to compute a pin).
/// trust.pin("dev.internal.test", to: ["sha256//r5pY7vZ2LZ0YkYQfX0eNyN3T5f3Ndq2Y6n0rN3xV7oQ="])
/// // 2. Trust one given certificate (PEM) for a host; its name is still checked.
/// trust.trust(certificatePEM: pem, for: "staging.internal.test")
/// // 3. Accept whatever self-signed certificate the host presents (its name is still checked).
/// trust.selfSignedHosts = ["localhost", "*.dev.example.test"]
/// ```
///
/// Host patterns match exactly and case-insensitively: `localhost` matches `LOCALHOST` but not
/// `evil-localhost`, `local` or `localhost.evil.test`. A pattern starting with `*.` matches
/// exactly one more label (`*.dev.example.test` matches `api.dev.example.test`, not
/// `dev.example.test` or `a.b.dev.example.test`). A pattern with a port (`localhost:8443`)
/// matches only that port. Every host not listed is verified fully: fail closed.
///
/// Peer and host-name verification are never both off: the host name is checked in every
/// form. Allowlisting accepts any certificate for that name; it is for development hosts only,
/// never production.
public struct TrustPolicy: Sendable, Hashable {
    /// Hosts whose self-signed certificate is accepted (host-name check kept).
    public var selfSignedHosts: [String]
    /// Certificates (PEM) trusted for a host pattern, instead of the system CA store.
    public var trustedCertificates: [String: [String]]
    /// Public-key pins (`sha256//<base64>`) required for a host pattern.
    public var pinnedKeys: [String: [String]]
    /// The client certificate presented to the hosts of a pattern that ask for one (mutual
    /// TLS); see ``present(_:to:)``.
    public var clientCertificates: [String: ClientCertificate]

    /// Full verification against the system CA store for every host, and no client certificate.
    public init(
        selfSignedHosts: [String] = [], trustedCertificates: [String: [String]] = [:],
        pinnedKeys: [String: [String]] = [:],
        clientCertificates: [String: ClientCertificate] = [:]
    ) {
        self.selfSignedHosts = selfSignedHosts
        self.trustedCertificates = trustedCertificates
        self.pinnedKeys = pinnedKeys
        self.clientCertificates = clientCertificates
    }

    /// Full verification for every host: the default.
    public static let `default` = TrustPolicy()

    /// Trusts `certificatePEM` (one or more PEM certificates) for hosts matching `pattern`.
    public mutating func trust(certificatePEM: String, for pattern: String) {
        trustedCertificates[pattern, default: []].append(certificatePEM)
    }

    /// Requires the public key of hosts matching `pattern` to match one of `pins`
    /// (`sha256//<base64 of the SHA-256 of the DER SubjectPublicKeyInfo>`). A pinned host whose
    /// certificate is self-signed is accepted when the key matches. A session whose policy
    /// holds a pin of another form (the bare base64 `openssl` prints, say) sends nothing: its
    /// requests fail with ``WattleError/invalidRequest(reason:)`` naming the pin.
    public mutating func pin(_ pattern: String, to pins: [String]) {
        pinnedKeys[pattern, default: []].append(contentsOf: pins)
    }

    /// The first pin that is not `sha256//` and the base64 of 32 bytes, as an error: libcurl
    /// would read it as a key file's name (and a list holding one matches no key at all).
    func invalidPin() -> WattleError? {
        for (pattern, pins) in pinnedKeys.sorted(by: { $0.key < $1.key }) {
            if let error = Self.invalidPin(in: pins, for: pattern) { return error }
        }
        return nil
    }

    /// The first of `pins` (for hosts matching `pattern`) that is not `sha256//` and the base64
    /// of 32 bytes, as an error. Checked again for each request whose own policy pins its host
    /// (``TransportRequest/trust``, which a session's configuration does not check).
    static func invalidPin(in pins: [String], for pattern: String) -> WattleError? {
        // An entry may itself be libcurl's list form, `sha256//A;sha256//B`.
        for pin in pins.lazy.flatMap({ $0.split(separator: ";", omittingEmptySubsequences: false) }) {
            let encoded = pin.hasPrefix("sha256//") ? String(pin.dropFirst(8)) : ""
            if Data(base64Encoded: encoded)?.count != 32 {
                return .invalidRequest(
                    reason:
                        "the pin \"\(Redaction.escaped(String(pin)))\" for \"\(Redaction.escaped(pattern))\" is not sha256// and the base64 of a SHA-256 (as PublicKeyPin.pin(forCertificatePEM:) and `wattle pin` give)"
                )
            }
        }
        return nil
    }

    /// Presents `certificate` to the hosts matching `pattern` when they ask for a client
    /// certificate (mutual TLS), over `https` only, and to no other host: a redirect elsewhere
    /// does not take it along. The server is verified as always. When several patterns match a
    /// host, the most specific wins: one with a port, then an exact name, then a wildcard.
    ///
    /// ```swift
    /// trust.present(try ClientCertificate(certificateFile: cert, privateKeyFile: key), to: "mtls.example.com")
    /// ```
    public mutating func present(_ certificate: ClientCertificate, to pattern: String) {
        clientCertificates[pattern] = certificate
    }

    /// What applies to one host.
    struct HostTrust: Hashable, Sendable {
        /// Accept a certificate that does not chain to a trusted CA.
        var acceptSelfSigned = false
        /// PEM certificates to trust instead of the system store.
        var certificates: [String] = []
        /// Required pins.
        var pins: [String] = []
        /// The client certificate to present, when the host asks.
        var clientCertificate: ClientCertificate?

        /// Whether the chain goes unverified: a self-signed certificate accepted, or with a pin
        /// alone the key checked instead. Trusted certificates keep full verification against
        /// them, allowlisted or not.
        var isRelaxed: Bool { certificates.isEmpty && (acceptSelfSigned || !pins.isEmpty) }
    }

    /// The trust settings for `host:port`.
    func trust(host: String, port: Int) -> HostTrust {
        var result = HostTrust()
        result.acceptSelfSigned = selfSignedHosts.contains { HostPattern.matches($0, host: host, port: port) }
        for (pattern, pems) in trustedCertificates where HostPattern.matches(pattern, host: host, port: port) {
            result.certificates.append(contentsOf: pems)
        }
        for (pattern, pins) in pinnedKeys where HostPattern.matches(pattern, host: host, port: port) {
            result.pins.append(contentsOf: pins)
        }
        // A pin is a stronger check than chain validation: with a pin and no other trust, the
        // key must match and the chain may be self-signed.
        if !result.pins.isEmpty && result.certificates.isEmpty { result.acceptSelfSigned = true }
        if !clientCertificates.isEmpty {
            result.clientCertificate =
                clientCertificates.filter { HostPattern.matches($0.key, host: host, port: port) }
                .max { HostPattern.specificity($0.key) < HostPattern.specificity($1.key) }?.value
        }
        return result
    }
}

/// Host pattern matching for ``TrustPolicy``.
enum HostPattern {
    /// Whether `pattern` (`host`, `host:port`, `*.suffix`, `[v6]:port`) matches `host` on `port`.
    static func matches(_ pattern: String, host: String, port: Int) -> Bool {
        // The common case without allocating: a plain name or address on both sides (no port,
        // brackets, wildcard, surrounding space or trailing dot) matches when equal ignoring case.
        if isPlain(pattern), isPlain(host) { return pattern.caseInsensitiveEquals(host) }
        var patternHost = pattern.trimmingWhitespace().lowercased()
        var patternPort: Int?
        if patternHost.hasPrefix("[") {
            // [::1] or [::1]:8443
            guard let close = patternHost.firstIndex(of: "]") else { return false }
            let rest = patternHost[patternHost.index(after: close)...]
            // Nothing after the bracket, or a port: `[::1]:84x3` or `[::1]junk` is no pattern
            // (it matched every port).
            if !rest.isEmpty {
                guard rest.hasPrefix(":"), let port = Int(rest.dropFirst()) else { return false }
                patternPort = port
            }
            patternHost = String(patternHost[patternHost.index(after: patternHost.startIndex)..<close])
        } else if let colon = patternHost.lastIndex(of: ":"), patternHost.firstIndex(of: ":") == colon {
            patternPort = Int(patternHost[patternHost.index(after: colon)...])
            guard patternPort != nil else { return false }
            patternHost = String(patternHost[..<colon])
        }
        if let patternPort, patternPort != port { return false }
        var candidate = host.lowercased()
        if candidate.hasPrefix("[") && candidate.hasSuffix("]") { candidate = String(candidate.dropFirst().dropLast()) }
        while candidate.hasSuffix(".") { candidate.removeLast() }
        while patternHost.hasSuffix(".") { patternHost.removeLast() }
        guard !patternHost.isEmpty, !candidate.isEmpty else { return false }
        if patternHost.hasPrefix("*.") {
            // A wildcard names hosts, never addresses: `*.0.0.1` must not cover 127.0.0.1.
            guard !isAddress(candidate) else { return false }
            let suffix = patternHost.dropFirst(1)  // ".example.test"
            guard suffix.count > 1, candidate.hasSuffix(suffix) else { return false }
            let label = candidate.dropLast(suffix.count)
            // ASCII only: libcurl maps the full stops of other scripts (U+3002, U+FF0E, U+FF61)
            // to dots, so `a。b` is two labels where it connects. (An internationalized name
            // goes in its xn-- form.)
            return !label.isEmpty && label.utf8.allSatisfy { $0 < 0x80 && $0 != UInt8(ascii: ".") }
                && !label.contains("*")
        }
        return patternHost == candidate
    }

    /// How specific a pattern is, for choosing among several that match: with a port, then an
    /// exact name, then a wildcard (ties broken by the pattern's text, so the choice is stable).
    static func specificity(_ pattern: String) -> (Int, Int, String) {
        let trimmed = pattern.trimmingWhitespace()
        // As `matches` reads a port: after `]` for a bracketed address; else after the only
        // colon (a bare IPv6 address has several and no port).
        let hasPort =
            trimmed.hasPrefix("[")
            ? trimmed.contains("]:") : trimmed.firstIndex(of: ":").map { $0 == trimmed.lastIndex(of: ":") } ?? false
        return (hasPort ? 1 : 0, trimmed.hasPrefix("*.") ? 0 : 1, pattern)
    }

    /// Whether a host is an IPv4 address (four dot-separated numbers) or an IPv6 one (a colon).
    private static func isAddress(_ host: String) -> Bool {
        if host.contains(":") { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4
            && parts.allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }
    }

    /// Non-empty, and no byte that the general matcher treats specially.
    private static func isPlain(_ name: String) -> Bool {
        guard let last = name.utf8.last, last != UInt8(ascii: ".") else { return false }
        return !name.utf8.contains {
            $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: "[") || $0 == UInt8(ascii: "]") || $0 == UInt8(ascii: "*")
                || $0 <= 0x20 || $0 >= 0x7F
        }
    }
}
