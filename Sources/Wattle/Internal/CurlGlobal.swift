import CCurl

/// libcurl's process-wide state, initialised exactly once.
enum CurlGlobal {
    /// `curl_global_init` runs the first time this is read, and never again.
    static let initialized: Bool = curl_global_init(wattle_curl_global_all) == CURLE_OK

    /// The version of the libcurl Wattle runs on.
    static let libcurlVersion: String = String(cString: wattle_curl_version_string())

    /// Whether libcurl can reuse a connection that speaks HTTP/2 by prior knowledge over plain
    /// TCP. Before 8.0.0 each transfer on such a connection added another HTTP/2 layer and sent
    /// the connection preface again, and the server failed the connection ("Error in the HTTP2
    /// framing layer"; curl/curl#10634, fixed in 8.0.0). Debian 12 ships 7.88.1.
    static let reusesCleartextPriorKnowledgeConnections: Bool = wattle_curl_version_number() >= 0x08_00_00
}
