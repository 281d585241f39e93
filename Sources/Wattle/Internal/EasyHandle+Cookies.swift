import CCurl

/// The session's cookie jar, through one of its engine's handles (whose share holds the jar).
/// Engine thread only.
extension EasyHandle {
    /// libcurl's cookie list (`CURLINFO_COOKIELIST`), one Netscape line per cookie; nil when
    /// libcurl could not list them (out of memory).
    func cookieLines() -> [String]? {
        var list: UnsafeMutableRawPointer?
        guard wattle_curl_easy_getinfo_pointer(easy, CURLINFO_COOKIELIST, &list) == CURLE_OK else { return nil }
        guard let list else { return [] }
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

    /// Adds Netscape cookie lines to the jar, each already checked to be one (`CURLOPT_COOKIELIST`
    /// takes words such as `ALL` as commands); false when libcurl refused one outright. (It
    /// answers `CURLE_OK` for a line it drops: list the jar to know what it kept.)
    func addCookieLines(_ lines: [String]) -> Bool {
        lines.allSatisfy { wattle_curl_easy_setopt_string(easy, CURLOPT_COOKIELIST, $0) == CURLE_OK }
    }

    /// Empties the jar.
    func removeAllCookies() {
        _ = wattle_curl_easy_setopt_string(easy, CURLOPT_COOKIELIST, "ALL")
    }
}
