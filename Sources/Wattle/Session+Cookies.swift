import CCurl
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
        let lines = await engine.withHandle { handle in handle.flatMap(PersistentCookieJar.cookieList) ?? [] }
        let now = Date()
        return lines.compactMap(Cookie.init(netscapeLine:)).filter { $0.expiresAt.map { $0 > now } ?? true }
    }

    /// Puts cookies in the session's jar, as if a server had set them, replacing any of the
    /// same name, domain and path: a sign-in cookie obtained elsewhere, or a test's fixture.
    /// With ``Configuration/CookieStorage/keychain(_:)`` the jar is stored before this returns.
    /// Does nothing when the session keeps no cookies.
    ///
    /// ```swift
    /// try await session.addCookies([Cookie(name: "sessionid", value: id, domain: "intranet.example.com", isSecure: true)])
    /// ```
    ///
    /// A ``Cookie/expiresAt`` in the past removes the cookie of that name, domain and path.
    ///
    /// - Throws: ``WattleError/cookieJar(reason:)``, none added, when a cookie cannot be
    ///   carried (an empty name or one that is not a token; a control character or `;` in the
    ///   value or path; a path not starting with `/`; a domain that is not an ASCII host name,
    ///   so give an internationalized one in its `xn--` form), or when the jar cannot be stored.
    public func addCookies(_ cookies: [Cookie]) async throws(WattleError) {
        var checked: [String] = []
        for cookie in cookies { checked.append(try cookie.netscapeLine()) }
        let lines = checked
        guard let engine = cookieEngine, !lines.isEmpty else { return }
        try await persistentCookieJar?.ensureLoaded()
        let added = await engine.withHandle { handle -> Bool in
            guard let handle else { return false }
            return lines.allSatisfy { wattle_curl_easy_setopt_string(handle.easy, CURLOPT_COOKIELIST, $0) == CURLE_OK }
        }
        guard added else { throw .cookieJar(reason: "the session has stopped, or libcurl could not take the cookies") }
        try await persistentCookieJar?.save()
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
            await engine.withHandle { handle in
                if let handle { _ = wattle_curl_easy_setopt_string(handle.easy, CURLOPT_COOKIELIST, "ALL") }
            }
        }
    }

    /// The engine holding the session's cookie jar; nil when the session keeps no cookies.
    private var cookieEngine: CurlEngine? {
        configuration.cookies.keepsCookies ? (transport as? CurlTransport)?.engine : nil
    }

    /// The keychain item the jar is kept in, when there is one.
    private var persistentCookieJar: PersistentCookieJar? { (transport as? CurlTransport)?.persistentJar }
}
