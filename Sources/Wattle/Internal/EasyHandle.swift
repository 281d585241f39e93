import CCurl

#if canImport(Glibc)
import Glibc
#endif

/// A curl easy handle the engine keeps between transfers (engine thread only).
///
/// The options that are the same for every transfer of a session (protocols, signals, the
/// error buffer, content decoding, keep-alive, the share handle, the HTTP version, proxy,
/// host overrides, the callbacks) are set once, when the handle is made. Each transfer then
/// sets every option that can differ between transfers (see `CurlTransfer.configure`), so no
/// option of one transfer can leak into the next without a `curl_easy_reset`, which frees and
/// copies every option again. The exceptions, a CA blob for a trusted certificate and a client
/// certificate's blobs, mark the handle for a reset before its next use; a custom `Host`
/// header in a session with a cookie jar, whose trace no reset clears, marks it spent.
final class EasyHandle {
    let easy: UnsafeMutableRawPointer
    /// `CURLOPT_ERRORBUFFER`: libcurl's readable message for a failure.
    let errorBuffer: UnsafeMutablePointer<CChar>
    /// The last transfer set options that the next one would not overwrite.
    var needsReset = false
    /// The handle holds state no reset clears (see `CurlTransfer.configure`): freed after its
    /// transfer instead of kept.
    var isSpent = false
    /// The header list of the last transfer, and what it was built from: reused when the next
    /// transfer sends the same fields (the common case for an API client).
    private(set) var headerList: UnsafeMutablePointer<curl_slist>?
    private var headerListSource: (headers: HTTPHeaders, hasBody: Bool, omitted: [String])?
    /// The handle's `CURLOPT_BUFFERSIZE` (curl's default until a transfer changes it).
    var receiveBufferSize = CurlTransfer.receiveBufferSize
    /// ``CurlEngine/Settings/freshCleartextConnections``: each transfer sets whether it opens
    /// its own connection.
    let freshCleartextConnections: Bool
    /// The configured proxy, named by the errors it causes.
    let proxy: ProxyEndpoint?
    /// Whether libcurl takes the proxy from the environment (``Configuration/Proxy/environment``).
    let proxyFromEnvironment: Bool
    /// Whether the handle runs the cookie engine on the session's jar (any ``Configuration/CookieStorage`` but `none`).
    let keepsCookies: Bool

    /// A new handle with the session's fixed options, or nil when libcurl cannot make one.
    init?(settings: CurlEngine.Settings) {
        guard let easy = curl_easy_init() else { return nil }
        self.easy = easy
        freshCleartextConnections = settings.freshCleartextConnections
        proxy = settings.proxyEndpoint
        proxyFromEnvironment = settings.proxy == nil
        keepsCookies = settings.keepsCookies
        errorBuffer = .allocate(capacity: wattle_curl_error_size)
        errorBuffer.initialize(repeating: 0, count: wattle_curl_error_size)
        // Every stored property is set by now, so returning nil runs `deinit`, which frees the
        // handle and the buffer (freeing them here too was a double free).
        guard setFixedOptions(settings) == nil else { return nil }
    }

    deinit {
        curl_easy_cleanup(easy)
        if let headerList { curl_slist_free_all(headerList) }
        errorBuffer.deallocate()
    }

    /// Makes the handle as new: every option back to libcurl's default, then the fixed ones.
    func reset(settings: CurlEngine.Settings) -> CURLcode? {
        curl_easy_reset(easy)
        needsReset = false
        receiveBufferSize = CurlTransfer.receiveBufferSize
        return setFixedOptions(settings)
    }

    /// Frees libcurl's copy of the last request body (`CURLOPT_POSTFIELDS` set to nothing
    /// releases a `CURLOPT_COPYPOSTFIELDS` copy); the next transfer sets its method again.
    func forgetBody() {
        _ = wattle_curl_easy_setopt_pointer(easy, CURLOPT_POSTFIELDS, nil)
    }

    /// Clears the callbacks' pointers to the finished transfer, which may be freed while the
    /// handle waits for the next one: a callback libcurl made meanwhile (none is known in 7.88)
    /// would find nothing rather than freed memory.
    func forgetTransfer() {
        // Seven calls, not a loop over an array: this runs once per request.
        _ = wattle_curl_easy_setopt_pointer(easy, CURLOPT_WRITEDATA, nil)
        _ = wattle_curl_easy_setopt_pointer(easy, CURLOPT_HEADERDATA, nil)
        _ = wattle_curl_easy_setopt_pointer(easy, CURLOPT_PREREQDATA, nil)
        _ = wattle_curl_easy_setopt_pointer(easy, CURLOPT_XFERINFODATA, nil)
        _ = wattle_curl_easy_setopt_pointer(easy, CURLOPT_READDATA, nil)
        _ = wattle_curl_easy_setopt_pointer(easy, CURLOPT_SEEKDATA, nil)
        _ = wattle_curl_easy_setopt_pointer(easy, CURLOPT_PRIVATE, nil)
    }

    /// The options every transfer of the engine shares; the first failure, if any.
    private func setFixedOptions(_ settings: CurlEngine.Settings) -> CURLcode? {
        var failed: CURLcode?
        func check(_ code: CURLcode) {
            if code != CURLE_OK, failed == nil { failed = code }
        }
        check(wattle_curl_easy_setopt_string(easy, CURLOPT_PROTOCOLS_STR, "http,https"))
        check(wattle_curl_easy_setopt_long(easy, CURLOPT_NOSIGNAL, 1))
        check(wattle_curl_easy_setopt_pointer(easy, CURLOPT_ERRORBUFFER, errorBuffer))
        check(wattle_curl_easy_setopt_long(easy, CURLOPT_FOLLOWLOCATION, 0))
        // Turns decoding on for the codings this libcurl was built with; the header itself is
        // sent from the header list (``CurlGlobal/acceptEncodingLine``).
        check(wattle_curl_easy_setopt_string(easy, CURLOPT_ACCEPT_ENCODING, ""))
        check(wattle_curl_easy_setopt_long(easy, CURLOPT_TCP_KEEPALIVE, 1))
        // Connections are not inherited by processes the program starts (see CCurl.h).
        check(wattle_curl_easy_setopt_cloexec_sockets(easy))
        check(wattle_curl_easy_setopt_share(easy, settings.share))
        if settings.keepsCookies {
            // "" turns the cookie engine on, reading no file; the cookies live in the share.
            check(wattle_curl_easy_setopt_string(easy, CURLOPT_COOKIEFILE, ""))
        }
        check(wattle_curl_easy_setopt_long(easy, CURLOPT_HTTP_VERSION, settings.httpVersion))
        if settings.multiplexing {
            check(wattle_curl_easy_setopt_long(easy, CURLOPT_PIPEWAIT, 1))
        }
        if let proxy = settings.proxy {
            check(wattle_curl_easy_setopt_string(easy, CURLOPT_PROXY, proxy))
        }
        if settings.proxyEndpoint != nil {
            // A configured proxy takes every request: `no_proxy` in the environment does not apply.
            check(wattle_curl_easy_setopt_string(easy, CURLOPT_NOPROXY, ""))
        }
        if let resolve = settings.resolveList {
            check(wattle_curl_easy_setopt_slist(easy, CURLOPT_RESOLVE, resolve))
        }
        // Checked for every HTTPS transfer, whatever else its trust says.
        check(wattle_curl_easy_setopt_long(easy, CURLOPT_SSL_VERIFYHOST, 2))
        check(wattle_curl_easy_setopt_data_function(easy, CURLOPT_WRITEFUNCTION, CurlTransfer.writeCallback))
        check(wattle_curl_easy_setopt_data_function(easy, CURLOPT_HEADERFUNCTION, CurlTransfer.headerCallback))
        check(wattle_curl_easy_setopt_prereq_function(easy, CurlTransfer.prerequestCallback))
        check(wattle_curl_easy_setopt_data_function(easy, CURLOPT_READFUNCTION, CurlTransfer.readCallback))
        check(wattle_curl_easy_setopt_seek_function(easy, CurlTransfer.seekCallback))
        check(wattle_curl_easy_setopt_xferinfo_function(easy, CurlTransfer.progressCallback))
        return failed
    }

    /// The `CURLOPT_HTTPHEADER` list for these fields (``headerLines(for:hasBody:omitting:)``),
    /// built only when they differ from the last transfer's. Throws, keeping the last list, when
    /// libcurl cannot allocate it.
    func headerList(
        for headers: HTTPHeaders, hasBody: Bool, omitting omitted: [String] = []
    ) throws(CurlStringList.AllocationFailed) -> UnsafeMutablePointer<curl_slist>? {
        if let source = headerListSource, source.hasBody == hasBody, Self.sameBytes(source.headers, headers),
            source.omitted.count == omitted.count, zip(source.omitted, omitted).allSatisfy(Self.sameBytes)
        {
            return headerList
        }
        let list = try CurlStringList.make(Self.headerLines(for: headers, hasBody: hasBody, omitting: omitted))
        if let headerList { curl_slist_free_all(headerList) }
        headerList = list
        headerListSource = (headers, hasBody, omitted)
        return list
    }

    /// Whether two header sets are the same bytes. Not `==`: `String`'s equality is Unicode
    /// canonical equivalence, under which `"café"` written with `é` and with `e` plus a
    /// combining accent are equal, and the second request would send the first one's bytes.
    static func sameBytes(_ a: HTTPHeaders, _ b: HTTPHeaders) -> Bool {
        guard a.count == b.count else { return false }
        for (x, y) in zip(a, b) where !sameBytes(x.name, y.name) || !sameBytes(x.value, y.value) {
            return false
        }
        return true
    }

    private static func sameBytes(_ a: String, _ b: String) -> Bool {
        let contiguous = a.utf8.withContiguousStorageIfAvailable { x in
            b.utf8.withContiguousStorageIfAvailable { y in
                x.count == y.count && (x.count == 0 || memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0)
            }
        }
        return (contiguous ?? nil) ?? a.utf8.elementsEqual(b.utf8)
    }

    /// The header list's lines. Wattle's own follow the caller's: the codings libcurl decodes
    /// (``CurlGlobal/acceptEncodingLine``) unless given, and for a body `Expect:` off (no
    /// 100-continue round trip) and no curl-made `Content-Type`.
    ///
    /// `Accept: */*` is not in the list: libcurl sends that same line itself when the list names
    /// no `Accept`. Each line of the list costs libcurl a pass of its checks for the headers it
    /// handles itself on every request, and only a request with a body can get an `Expect`.
    ///
    /// Each omitted name (``Request/omittedHeaders``) not among the fields is a `Name:` line,
    /// libcurl's way to leave out a header it would add itself (`Accept`, or `Authorization`
    /// from a URL's user-info), and Wattle adds none of its own by that name.
    static func headerLines(for headers: HTTPHeaders, hasBody: Bool, omitting omitted: [String] = []) -> [String] {
        var lines: [String] = []
        lines.reserveCapacity(headers.count + omitted.count + 3)
        for field in headers {
            // "Name;" is libcurl's way to send a header with an empty value. A value of spaces
            // and tabs is empty too (RFC 9110, 5.5): libcurl skips a "Name:  " line as blank.
            let blank = field.value.utf8.allSatisfy { $0 == 0x20 || $0 == 0x09 }
            lines.append(blank ? "\(field.name);" : "\(field.name): \(field.value)")
        }
        func adds(_ name: String) -> Bool { !headers.contains(name) && !OmittedHeaders.contains(omitted, name) }
        if let line = CurlGlobal.acceptEncodingLine, adds("Accept-Encoding") { lines.append(line) }
        if hasBody, adds("Expect") { lines.append("Expect:") }
        if hasBody, adds("Content-Type") { lines.append("Content-Type:") }
        for name in omitted where !headers.contains(name) { lines.append("\(name):") }
        return lines
    }
}
