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
    /// let signedIn = await session.cookies().contains { $0.name == "sessionid" }
    /// ```
    public func cookies() async -> [Cookie] {
        guard let engine = cookieEngine else { return [] }
        let lines = await engine.withHandle { handle -> [String] in
            guard let handle else { return [] }
            var list: UnsafeMutableRawPointer?
            guard wattle_curl_easy_getinfo_pointer(handle.easy, CURLINFO_COOKIELIST, &list) == CURLE_OK, let list else { return [] }
            let first = list.assumingMemoryBound(to: curl_slist.self)
            defer { curl_slist_free_all(first) }
            var lines: [String] = []
            var node: UnsafeMutablePointer<curl_slist>? = first
            while let current = node {
                if let data = current.pointee.data { lines.append(String(cString: data)) }
                node = current.pointee.next
            }
            return lines
        }
        let now = Date()
        return lines.compactMap(Cookie.init(netscapeLine:)).filter { $0.expiresAt.map { $0 > now } ?? true }
    }

    /// Forgets every cookie the session keeps, as signing out of a cookie-based API should.
    /// Requests already under way may still store cookies their responses set.
    public func removeAllCookies() async {
        guard let engine = cookieEngine else { return }
        await engine.withHandle { handle in
            if let handle { _ = wattle_curl_easy_setopt_string(handle.easy, CURLOPT_COOKIELIST, "ALL") }
        }
    }

    /// The engine holding the session's cookie jar; nil when the session keeps no cookies.
    private var cookieEngine: CurlEngine? {
        configuration.cookies == .inMemory ? (transport as? CurlTransport)?.engine : nil
    }
}
