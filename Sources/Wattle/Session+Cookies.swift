#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Session {
    /// The cookies the session keeps (``Configuration/cookies``), expired ones left out; none
    /// with ``Configuration/CookieStorage/none`` or a transport other than Wattle's libcurl
    /// engine.
    ///
    /// ```swift
    /// let signedIn = try await session.cookies().contains { $0.name == "sessionid" }
    /// ```
    ///
    /// - Throws: ``WattleError/cookieJar(reason:)`` when the jar is kept in a keychain
    ///   (``Configuration/CookieStorage/keychain(_:)``) that cannot be read.
    public func cookies() async throws(WattleError) -> [Cookie] {
        guard let engine = cookieEngine else { return [] }
        try await persistentCookieJar?.ensureLoaded()
        let lines = await engine.withHandle { $0?.cookieLines() ?? [] }
        let now = Date()
        return lines.compactMap(Cookie.init(netscapeLine:)).filter { $0.isLive(at: now) }
    }

    /// Puts cookies in the session's jar, as if a server had set them, replacing any with the
    /// same name, domain, path and ``Cookie/includesSubdomains``: a sign-in cookie obtained
    /// elsewhere, or a test's fixture. With ``Configuration/CookieStorage/keychain(_:)`` the
    /// jar is stored before this returns. Does nothing when the session keeps no cookies.
    ///
    /// ```swift
    /// try await session.addCookies([Cookie(name: "sessionid", value: id, domain: "intranet.example.com", isSecure: true)])
    /// ```
    ///
    /// A ``Cookie/expiresAt`` in the past removes the cookie it would replace.
    ///
    /// - Throws: ``WattleError/cookieJar(reason:)``:
    ///   - before adding any, when a cookie cannot be carried: an empty name or one that is not
    ///     a token; a control character or `;` in the value or path; a path not starting with
    ///     `/`; a domain that is not an ASCII host name (give an internationalized one in its
    ///     `xn--` form); a `__Secure-` or `__Host-` name without what its prefix requires; a
    ///     domain cookie for a public suffix (`co.uk`, `github.io`) or a name of one label;
    ///   - when libcurl did not keep one that passed those checks (the others are added);
    ///   - when the jar cannot be read or stored (the cookies are in the jar in memory).
    public func addCookies(_ cookies: [Cookie]) async throws(WattleError) {
        var checked: [String] = []
        for cookie in cookies { checked.append(try cookie.netscapeLine()) }
        guard let engine = cookieEngine, !checked.isEmpty else { return }
        try await persistentCookieJar?.ensureLoaded()
        let lines = checked
        let listed = await engine.withHandle { handle -> [String]? in
            guard let handle else { return nil }
            _ = handle.addCookieLines(lines)
            return handle.cookieLines()
        }
        guard let listed else {
            throw .cookieJar(reason: "the session has stopped, or libcurl could not list its cookies")
        }
        // libcurl answers CURLE_OK for a line it drops: what it kept is the jar.
        let now = Date()
        let kept = Set(listed.compactMap(Cookie.init(netscapeLine:)).map(\.identity))
        let dropped = cookies.first { $0.isLive(at: now) && !kept.contains($0.identity) }
        try await persistentCookieJar?.save()
        if let dropped {
            throw .cookieJar(reason: "libcurl did not keep the cookie \"\(Redaction.escaped(dropped.name))\"")
        }
    }

    /// Forgets every cookie the session keeps, as signing out of a cookie-based API should;
    /// with ``Configuration/CookieStorage/keychain(_:)`` the stored item is removed too.
    /// Requests already under way may still store cookies their responses set.
    ///
    /// - Throws: ``WattleError/cookieJar(reason:)`` when the stored item cannot be removed
    ///   (the jar in memory is empty all the same).
    public func removeAllCookies() async throws(WattleError) {
        guard let engine = cookieEngine else { return }
        if let persistentCookieJar {
            try await persistentCookieJar.removeAll()
        } else {
            await engine.withHandle { $0?.removeAllCookies() }
        }
    }

    /// The engine holding the session's cookie jar; nil when the session keeps no cookies.
    private var cookieEngine: CurlEngine? {
        configuration.cookies.keepsCookies ? (transport as? CurlTransport)?.engine : nil
    }

    /// The keychain item the jar is kept in, when there is one.
    private var persistentCookieJar: PersistentCookieJar? { (transport as? CurlTransport)?.persistentJar }
}
