import CCurl

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// libcurl's process-wide state, initialised exactly once.
enum CurlGlobal {
    /// `curl_global_init` runs the first time this is read, and never again.
    static let initialized: Bool = curl_global_init(wattle_curl_global_all) == CURLE_OK

    /// The file named by `SSLKEYLOGFILE` when it is set (not empty): libcurl's OpenSSL backend
    /// appends every TLS connection's secrets to it, from which anyone who reads it can decrypt
    /// the traffic, tokens and passwords included (a debugging aid, as in browsers). Read once.
    static let keyLogFile: String? = {
        guard let value = getenv("SSLKEYLOGFILE"), value.pointee != 0 else { return nil }
        return String(cString: value)
    }()

    /// The version of the libcurl Wattle runs on.
    static let libcurlVersion: String = String(cString: wattle_curl_version_string())

    /// The `Accept-Encoding` line a request sends unless it names its own: the codings the
    /// running libcurl decodes, in the order its `CURLOPT_ACCEPT_ENCODING` "" lists them
    /// ("deflate, gzip, br, zstd" on Debian 12), or `nil` when it decodes none.
    ///
    /// Wattle sends this line itself, in the transfer's header list, and still sets
    /// `CURLOPT_ACCEPT_ENCODING` (which turns decoding on). When the list has the header,
    /// libcurl skips its own per-request `aprintf` of the line, and libcurl 7.88's printf
    /// appends byte by byte: the line went through it twice, ~3.3k instructions a request.
    static let acceptEncodingLine: String? = {
        let features = wattle_curl_version_features()
        // Appended to one string: `joined(separator:)` builds generic metadata on its first use in
        // a process (see RedirectFollower.isRedirect).
        var codings = ""
        func add(_ coding: String) { codings += codings.isEmpty ? coding : ", " + coding }
        if features & wattle_curl_feature_libz != 0 {
            add("deflate")
            add("gzip")
        }
        if features & wattle_curl_feature_brotli != 0 { add("br") }
        if features & wattle_curl_feature_zstd != 0 { add("zstd") }
        return codings.isEmpty ? nil : "Accept-Encoding: " + codings
    }()

    /// Whether libcurl can reuse a connection that speaks HTTP/2 by prior knowledge over plain
    /// TCP. Before 8.0.0 each transfer on such a connection added another HTTP/2 layer and sent
    /// the connection preface again, and the server failed the connection ("Error in the HTTP2
    /// framing layer"; curl/curl#10634, fixed in 8.0.0). Debian 12 ships 7.88.1.
    static let reusesCleartextPriorKnowledgeConnections: Bool = wattle_curl_version_number() >= 0x08_00_00
}
