import CCurl

/// libcurl's process-wide state, initialised exactly once.
enum CurlGlobal {
    /// `curl_global_init` runs the first time this is read, and never again.
    static let initialized: Bool = curl_global_init(wattle_curl_global_all) == CURLE_OK

    /// The version of the libcurl Wattle runs on.
    static let libcurlVersion: String = String(cString: wattle_curl_version_string())
}
