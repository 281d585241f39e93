#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// A cookie a session keeps (``Configuration/CookieStorage/inMemory`` or
/// ``Configuration/CookieStorage/keychain(_:)``), as ``Session/cookies()`` lists it and
/// ``Session/addCookies(_:)`` takes it.
///
/// A cookie's value is a credential as often as not (a session cookie is a sign-in), so its
/// description and mirror never show it:
///
/// ```swift
/// for cookie in try await session.cookies() { print(cookie) }
/// // Cookie(session=…, host 127.0.0.1, path /, secure, HttpOnly, expires with the session)
/// ```
public struct Cookie: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The name.
    public var name: String
    /// The value, as the server set it.
    public var value: String
    /// The host it goes to, or with ``includesSubdomains`` the domain it goes to.
    public var domain: String
    /// Whether it goes to the subdomains of ``domain`` too: the cookie named a `Domain`.
    /// False for a host-only cookie.
    public var includesSubdomains: Bool
    /// The path it goes under.
    public var path: String
    /// Whether it goes over `https` only.
    public var isSecure: Bool
    /// Whether it was set `HttpOnly` (it matters to browsers' scripts; Wattle sends it as any other).
    public var isHTTPOnly: Bool
    /// When it expires; nil for a cookie set without `Expires` or `Max-Age`, which lasts as
    /// long as the session.
    public var expiresAt: Date?

    /// Creates a cookie (for comparing with ``Session/cookies()`` in tests, say).
    public init(
        name: String, value: String, domain: String, includesSubdomains: Bool = false, path: String = "/",
        isSecure: Bool = false, isHTTPOnly: Bool = false, expiresAt: Date? = nil
    ) {
        self.name = name
        self.value = value
        self.domain = domain
        self.includesSubdomains = includesSubdomains
        self.path = path
        self.isSecure = isSecure
        self.isHTTPOnly = isHTTPOnly
        self.expiresAt = expiresAt
    }

    /// Reads one line of libcurl's cookie list (Netscape format: domain, subdomains, path,
    /// secure, expiry, name and value, tab-separated; `#HttpOnly_` before the domain of an
    /// HttpOnly cookie). Nil for a line that is not one.
    init?(netscapeLine line: String) {
        let fields = line.split(separator: "\t", maxSplits: 6, omittingEmptySubsequences: false)
        guard fields.count >= 6, let expiry = Int64(fields[4]) else { return nil }
        var domain = Substring(fields[0])
        isHTTPOnly = domain.hasPrefix("#HttpOnly_")
        if isHTTPOnly { domain = domain.dropFirst("#HttpOnly_".count) }
        if domain.hasPrefix(".") { domain = domain.dropFirst() }
        self.domain = String(domain)
        includesSubdomains = fields[1] == "TRUE"
        path = String(fields[2])
        isSecure = fields[3] == "TRUE"
        expiresAt = expiry == 0 ? nil : Date(timeIntervalSince1970: TimeInterval(expiry))
        name = String(fields[5])
        value = fields.count == 7 ? String(fields[6]) : ""
    }

    /// The cookie as a line of libcurl's cookie list, for ``Session/addCookies(_:)``; the
    /// reverse of ``init(netscapeLine:)``.
    ///
    /// - Throws: ``WattleError/cookieJar(reason:)`` for a cookie the line or a `Cookie` header
    ///   cannot carry, or that libcurl would drop: an empty name or one that is not an RFC 9110
    ///   token; a value with a control character or `;`; a domain that is not an ASCII host
    ///   name (IPv6 literals included); a path that does not start with `/` or has a control
    ///   character or `;`; a `__Secure-` name that is not ``isSecure``, or a `__Host-` one that
    ///   is not secure, host-only and on path `/` (RFC 6265bis); a domain cookie
    ///   (``includesSubdomains``) for a public suffix (`co.uk`) or a name of one label (`test`).
    ///   The reason never shows the value.
    func netscapeLine() throws(WattleError) -> String {
        let shownName = Redaction.escaped(name)
        guard !name.isEmpty else { throw .cookieJar(reason: "a cookie's name is empty") }
        if let bad = name.utf8.first(where: { !HTTPHeaders.isTokenByte($0) }) {
            throw .cookieJar(
                reason:
                    "the cookie name \"\(shownName)\" contains \(Redaction.describe(byte: bad)), which a name cannot")
        }
        if let bad = value.utf8.first(where: Self.isRefusedInValue) {
            throw .cookieJar(
                reason:
                    "the value of the cookie \"\(shownName)\" contains \(Redaction.describe(byte: bad)), which a cookie cannot carry"
            )
        }
        let host = bareDomain
        guard !host.isEmpty, host.utf8.allSatisfy(Self.isHostByte) else {
            throw .cookieJar(
                reason: "the domain \"\(Redaction.escaped(domain))\" of the cookie \"\(shownName)\" is not a host name "
                    + "(letters, digits, - and .; an internationalized name in its xn-- form)")
        }
        // libcurl skips its public-suffix check for a line without a request's host.
        if includesSubdomains, PublicSuffix.isSuffix(host) {
            throw .cookieJar(
                reason:
                    "the cookie \"\(shownName)\" is for \"\(Redaction.escaped(host))\" and its subdomains, a public suffix or a name of one label whose subdomains belong to others (no server can set such a cookie)"
            )
        }
        guard path.hasPrefix("/") else {
            throw .cookieJar(
                reason: "the path \"\(Redaction.escaped(path))\" of the cookie \"\(shownName)\" does not start with /")
        }
        if let bad = path.utf8.first(where: Self.isRefusedInValue) {
            throw .cookieJar(
                reason: "the path of the cookie \"\(shownName)\" contains \(Redaction.describe(byte: bad))")
        }
        // libcurl drops these silently otherwise (and compares the prefixes case-sensitively).
        if name.hasPrefix("__Secure-"), !isSecure {
            throw .cookieJar(reason: "the cookie \"\(shownName)\" has the __Secure- prefix, so it must be secure")
        }
        if name.hasPrefix("__Host-"), !isSecure || includesSubdomains || path != "/" {
            throw .cookieJar(
                reason:
                    "the cookie \"\(shownName)\" has the __Host- prefix, so it must be secure, host-only and on path /")
        }
        let field = { (flag: Bool) in flag ? "TRUE" : "FALSE" }
        return
            "\(isHTTPOnly ? "#HttpOnly_" : "")\(includesSubdomains ? "." : "")\(host)\t\(field(includesSubdomains))\t\(path)\t"
            + "\(field(isSecure))\t\(Self.expiryField(expiresAt))\t\(name)\t\(value)"
    }

    /// What makes two cookies one in a jar: name, host or domain (lower case, without a
    /// leading dot), path (one trailing `/` aside, as libcurl compares paths: `/p` and `/p/`
    /// are one), and whether it covers subdomains.
    var identity: String {
        let comparedPath = path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
        return "\(name)\t\(bareDomain)\t\(comparedPath)\t\(includesSubdomains)"
    }

    /// The domain in lower case without a leading dot (RFC 6265 ignores one).
    private var bareDomain: String {
        let host = domain.lowercased()
        return host.hasPrefix(".") ? String(host.dropFirst()) : host
    }

    /// Whether the cookie has not expired at `now` (a session cookie never has).
    func isLive(at now: Date) -> Bool { expiresAt.map { $0 > now } ?? true }

    /// The expiry as the line's seconds since 1970: 0 for a session cookie, at least 1 for an
    /// expiry in the past (which removes the cookie), at most `Int64.max` (libcurl clamps a
    /// huge `Max-Age` there, and `Int64(_:)` of more would trap).
    static func expiryField(_ expiresAt: Date?) -> Int64 {
        guard let expiresAt else { return 0 }
        let seconds = expiresAt.timeIntervalSince1970.rounded(.up)
        if seconds.isNaN || seconds < 1 { return 1 }
        return seconds >= 9.2e18 ? Int64.max : Int64(seconds)
    }

    /// Control characters (a tab ends a field of the line) and `;` (ends a cookie in the header).
    private static func isRefusedInValue(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == 0x7F || byte == UInt8(ascii: ";")
    }

    /// Letters, digits, `-`, `.` and `_`. (A `:` would let a line start `Set-Cookie:`, which
    /// libcurl reads as a header; IPv6 literals are left out with it.)
    private static func isHostByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        default: byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_")
        }
    }

    /// `Cookie(name=…, host example.com, path /, secure, expires in 3600 s)`: never the value.
    public var description: String {
        var parts = ["\(name)=…", "\(includesSubdomains ? "domain" : "host") \(domain)", "path \(path)"]
        if isSecure { parts.append("secure") }
        if isHTTPOnly { parts.append("HttpOnly") }
        // Clamped: `Int(_:)` of 1e19 seconds, or of NaN, traps.
        let seconds = expiresAt.map { date -> Int64 in
            let interval = date.timeIntervalSinceNow.rounded()
            if interval.isNaN { return 0 }
            return interval >= 9.2e18 ? .max : interval <= -9.2e18 ? .min : Int64(interval)
        }
        parts.append(seconds.map { "expires in \($0) s" } ?? "expires with the session")
        return "Cookie(\(parts.joined(separator: ", ")))"
    }

    /// The same as ``description``.
    public var debugDescription: String { description }

    /// A mirror without the value, so `dump` shows none.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "name": name, "value": "…", "domain": domain, "includesSubdomains": includesSubdomains, "path": path,
                "isSecure": isSecure, "isHTTPOnly": isHTTPOnly, "expiresAt": expiresAt as Any,
            ])
    }
}
