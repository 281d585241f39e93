import CCurl

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#endif

/// One exchange on one curl easy handle.
///
/// Created on the caller's task, then owned by the engine thread: every mutable property below
/// is touched only on that thread, from `configure` to `finish`. The continuation is set
/// before the transfer is handed to the engine and resumed exactly once, by the engine.
final class CurlTransfer: @unchecked Sendable {
    let request: TransportRequest
    /// Checked, not unsafe: an unsafe continuation's resume is inlined into this module, where
    /// ThreadSanitizer sees its read of the task's context but not the runtime's hand-over to
    /// the resumed task, and reports a race that is not there; the checked one resumes inside
    /// the runtime. Its cost, one small allocation per request, is a few percent at most (an A/B
    /// at 32 concurrent: 0.60-0.64x of raw libcurl against 0.66-0.68x, within run-to-run noise;
    /// sequential the same). Set once and taken once (unchecked exclusivity: see `rawHeaders`).
    @exclusivity(unchecked) var continuation: CheckedContinuation<Completed, any Error>?
    /// What the engine thread hands back: the parts of a ``Response`` that need the curl
    /// handle. The caller's task turns them into a `Response` (parsing the header lines), so
    /// that work is spread over the callers instead of queueing on the one engine thread.
    struct Completed {
        var statusCode: Int
        var rawHeaders: [UInt8]
        var body: Data
        var fileURL: URL?
        var metrics: ResponseMetrics
        /// A `.synced` download's file, written and still open: the engine has it flushed to
        /// disk and closed off its thread before the caller resumes (an `fsync` of a large
        /// file there would hold up every other transfer of the session).
        var unsyncedDescriptor: Int32 = -1
    }
    /// Set on the engine thread when a cancel arrives before the start.
    var cancelledBeforeStart = false
    /// Its place in the engine's list of transfers in the multi handle, or nil when it is not
    /// there (engine thread only).
    var activeIndex: Int?

    /// The handle this transfer runs on, from `configure` until the engine recycles it.
    private(set) var handle: EasyHandle?
    var easy: UnsafeMutableRawPointer? { handle?.easy }
    private var statusCode = 0
    // Unchecked: engine-thread state, each access a plain read, write or one standard-library
    // call that cannot reach back into this transfer, so no two can overlap; the runtime's
    // dynamic exclusivity check on these `append`s (~115 instructions with its thread-local
    // lookup) ran on every header line and body piece.
    @exclusivity(unchecked) private var rawHeaders: [UInt8] = []
    @exclusivity(unchecked) private var body = Data()
    private var abort: AbortReason?
    private var downloadDescriptor: Int32 = -1
    /// A download's small pieces gathered before they are written (see ``receiveBody(_:)``);
    /// allocated with the file, freed when it is closed.
    private var pendingDownload: UnsafeMutableRawBufferPointer?
    private var pendingDownloadCount = 0
    /// Bytes of the download written to its file, and how many of them the kernel has been
    /// asked to start writing to disk (see `writeDownload`; the second for synced downloads only).
    private var downloadWritten = 0
    private var downloadWritebackStarted = 0
    private var downloadedBytes: Int64 = 0
    /// Body bytes handed to a stream's reader.
    private var streamedBytes: Int64 = 0
    /// A resumable download: the offset this transfer asked the server to start at (0 for the
    /// whole body), and where its body went in the partial file (the offset, for a `206`).
    private var requestedOffset: Int64 = 0
    private var downloadBase: Int64 = 0
    /// A resumable download's `206`: the file's length its `Content-Range` gives, where the
    /// body must end. A body with no length of its own (ended by the connection's close) is
    /// checked against it; libcurl checks only a `Content-Length` or a chunked end.
    private var rangeEnd: Int64?
    /// The download's file was opened for this response's body: only then is progress
    /// reported (a resumed one's counts from `downloadBase`, known from the head).
    private var downloadOpened = false
    private var lastReportedProgress: Int64 = -1
    /// The response has a `Content-Encoding`: its length counts encoded bytes, while progress
    /// counts decoded ones, so no total is reported (checked for downloads with progress only).
    private var bodyIsEncoded = false
    /// The head has a `Set-Cookie` field (watched in a session that keeps cookies only).
    private var sawSetCookie = false
    private var uploadedBytes: curl_off_t = 0
    /// A body streamed from a file or from pieces (``TransportRequest/bodyFile``,
    /// ``TransportRequest/bodySegments``), open from `openUpload` until the engine takes the
    /// handle back; its size when this transfer started is sent as the `Content-Length`.
    private var upload: UploadStream?
    private var uploadSize: Int64 { upload?.size ?? 0 }
    /// Whether a connection was assigned: queued transfers (waiting for a connection slot)
    /// are not stalled, only waiting.
    var connected = false
    /// A streamed body's reader has too much to read: receiving is paused until it catches up
    /// (`resume()`), and the transfer is not stalled meanwhile, only waiting.
    private var paused = false
    /// The streamed body's head has been handed to its reader.
    private var streamStarted = false
    /// Bytes moved so far (headers, body, upload); the engine's stall check compares it over time.
    var activity = 0
    /// `activity` when the stall check last saw enough progress.
    var lastActivityCount = 0
    /// When the stall check last saw enough progress (unchecked exclusivity: see `rawHeaders`).
    @exclusivity(unchecked) var lastActivityTime = ContinuousClock.now
    /// When the engine handed the transfer to libcurl (engine thread; see `hasOverrunTotal`).
    @exclusivity(unchecked) var handedToCurlAt = ContinuousClock.now

    private var headerBytes = 0
    /// A download with progress: its header lines are read for `Content-Encoding` (see
    /// `bodyIsEncoded`). Taken once, so that a header line does not copy the download target.
    private let watchesContentEncoding: Bool
    /// A download whose file is flushed to disk when it finishes (``DownloadDurability/synced``);
    /// its writeback is started early (see `startWriteback`).
    private let syncsDownload: Bool

    enum AbortReason {
        case tooLarge
        /// A download's error response passed the in-memory limit: the response stands, with
        /// the body kept so far (its status is what the caller needs; the rest is not read).
        case errorBodyCut
        case headersTooLarge
        case file(String)
        /// A resumable download's answer cannot go into its partial file as it is (a whole
        /// body over bytes already there, or another range): the session starts it over.
        case range(String)
        /// A body file could not be read to its size.
        case uploadFile(UploadStream.Failure)
    }

    init(request: TransportRequest) {
        self.request = request
        watchesContentEncoding = request.download?.progress != nil
        syncsDownload = request.download?.durability == .synced
    }

    deinit {
        closeDownload()
    }

    /// Lets go of the handle once the engine has taken it back (and of the body file: curl is
    /// done reading it).
    func releaseHandle() {
        handle = nil
        upload = nil
    }

    // MARK: Setup (engine thread)

    /// curl's default receive buffer (`CURL_MAX_WRITE_SIZE`), for responses kept in memory.
    static let receiveBufferSize = 16 * 1024
    /// The receive buffer of a download to a file.
    static let downloadReceiveBufferSize = 512 * 1024

    /// Sets every option of this exchange that can differ between transfers on a handle that
    /// has the session's fixed options (see ``EasyHandle``). Every such option is set here on
    /// every transfer, to this transfer's value or back to the default, so nothing carries over
    /// from the handle's previous transfer; the options that cannot be set back (a trusted CA
    /// blob, a client certificate) mark the handle for a reset instead.
    func configure(_ handle: EasyHandle) -> WattleError? {
        self.handle = handle
        let easy = handle.easy
        handle.errorBuffer.pointee = 0
        let me = Unmanaged.passUnretained(self).toOpaque()
        var failed: (String, CURLcode)?
        func check(_ code: CURLcode, _ what: String) {
            if code != CURLE_OK, failed == nil { failed = (what, code) }
        }

        // `withCString`: a native string's own bytes, where passing the `String` for the
        // `const char *` made a NUL-terminated copy (`utf8CString`) on every transfer.
        check(request.target.string.withCString { wattle_curl_easy_setopt_string(easy, CURLOPT_URL, $0) }, "URL")
        if handle.freshCleartextConnections {
            // HTTP/2 by prior knowledge over plain TCP on a libcurl that fails reused such
            // connections: a connection of its own, closed after. Over TLS, ALPN marks the
            // connection as HTTP/2 and reuse works.
            let fresh = request.target.isHTTPS ? 0 : 1
            check(wattle_curl_easy_setopt_long(easy, CURLOPT_FRESH_CONNECT, fresh), "FRESH_CONNECT")
            check(wattle_curl_easy_setopt_long(easy, CURLOPT_FORBID_REUSE, fresh), "FORBID_REUSE")
        }

        // TLS trust for this hop's host (decided with its URL, see `TransportRequest.hostTrust`).
        // The host name is checked in every form (CURLOPT_SSL_VERIFYHOST 2 is a fixed option):
        // peer and host checks are never both off.
        let trust = request.hostTrust
        // A request's own policy is not the configuration's, checked when the session began.
        if !trust.pins.isEmpty, request.pinsUnchecked,
            let error = TrustPolicy.invalidPin(in: trust.pins, for: request.target.host)
        {
            return error
        }
        if !trust.certificates.isEmpty {
            let bundle = trust.certificates.joined(separator: "\n")
            check(
                wattle_curl_easy_setopt_blob_copy(easy, CURLOPT_CAINFO_BLOB, bundle, bundle.utf8.count), "CAINFO_BLOB")
            check(wattle_curl_easy_setopt_pointer(easy, CURLOPT_CAINFO, nil), "CAINFO")
            check(wattle_curl_easy_setopt_pointer(easy, CURLOPT_CAPATH, nil), "CAPATH")
            check(wattle_curl_easy_setopt_long(easy, CURLOPT_SSL_VERIFYPEER, 1), "SSL_VERIFYPEER")
            // The system CA paths cannot be set back without knowing them: reset before reuse.
            handle.needsReset = true
        } else {
            check(
                wattle_curl_easy_setopt_long(easy, CURLOPT_SSL_VERIFYPEER, trust.acceptSelfSigned ? 0 : 1),
                "SSL_VERIFYPEER")
        }
        if let identity = trust.clientCertificate {
            // Blobs, copied by libcurl: the key never touches a file. libcurl matches reused
            // connections and TLS sessions on the certificate, so none made with another (or
            // none) serves this request.
            check(wattle_curl_easy_setopt_string(easy, CURLOPT_SSLCERTTYPE, "PEM"), "SSLCERTTYPE")
            check(wattle_curl_easy_setopt_string(easy, CURLOPT_SSLKEYTYPE, "PEM"), "SSLKEYTYPE")
            check(
                wattle_curl_easy_setopt_blob_copy(
                    easy, CURLOPT_SSLCERT_BLOB, identity.certificatePEM, identity.certificatePEM.utf8.count),
                "SSLCERT_BLOB")
            check(
                wattle_curl_easy_setopt_blob_copy(
                    easy, CURLOPT_SSLKEY_BLOB, identity.privateKeyPEM, identity.privateKeyPEM.utf8.count),
                "SSLKEY_BLOB")
            // An encrypted key's passphrase (copied by libcurl too), else an empty one, never
            // one left from another certificate this handle carried, nor none: libcurl's
            // callback would take the length of a null passphrase if OpenSSL asked for one.
            check(
                wattle_curl_easy_setopt_string(easy, CURLOPT_KEYPASSWD, identity.privateKeyPassphrase ?? ""),
                "KEYPASSWD")
            // Cleared by a reset before the handle serves a request without it.
            handle.needsReset = true
        }
        if trust.pins.isEmpty {
            check(wattle_curl_easy_setopt_pointer(easy, CURLOPT_PINNEDPUBLICKEY, nil), "PINNEDPUBLICKEY")
        } else {
            check(
                wattle_curl_easy_setopt_string(easy, CURLOPT_PINNEDPUBLICKEY, trust.pins.joined(separator: ";")),
                "PINNEDPUBLICKEY")
        }

        // Timeouts (0 is none). The stall timeout is Wattle's own (see `hasStalled`): curl's
        // low-speed check averages over a 5-second window, so it fired seconds late.
        check(
            wattle_curl_easy_setopt_long(
                easy, CURLOPT_CONNECTTIMEOUT_MS, max(1, Self.milliseconds(request.timeouts.connect))),
            "CONNECTTIMEOUT_MS")
        let total = request.timeouts.total.map { max(1, Self.milliseconds($0)) } ?? 0
        check(wattle_curl_easy_setopt_long(easy, CURLOPT_TIMEOUT_MS, total), "TIMEOUT_MS")
        // curl's own check fails a transfer as soon as the headers announce a longer body. Not
        // for a download or a stream (whose 2xx body goes to the file or the reader, and whose
        // other bodies are checked in `receiveBody`), and not for HEAD: libcurl 7.88 checks the announced length of a
        // response that has no body too, which would fail the usual way to learn a file's size.
        let curlLimit = !request.streamsBody && request.method != .head ? request.maximumResponseSize ?? 0 : 0
        check(wattle_curl_easy_setopt_off_t(easy, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(curlLimit)), "MAXFILESIZE")
        // A download to a file reads the socket in 512 KiB pieces instead of curl's 16 KiB: a
        // 32nd of the `recv`s, write callbacks and `write`s for the same bytes (see
        // Benchmarks/ANALYSIS.md). curl refuses a new size while the handle holds its receive
        // buffer, which it frees when a transfer ends unless other transfers still use the
        // connection (HTTP/2). The handle then keeps its size for this transfer, which is
        // safe either way: a download reads 16 KiB pieces (still gathered before writing), or
        // a request reads into the 512 KiB buffer the handle holds anyway.
        let bufferSize = request.download == nil ? Self.receiveBufferSize : Self.downloadReceiveBufferSize
        if handle.receiveBufferSize != bufferSize,
            wattle_curl_easy_setopt_long(easy, CURLOPT_BUFFERSIZE, bufferSize) == CURLE_OK
        {
            handle.receiveBufferSize = bufferSize
        }

        // Method and body: back to a plain GET first, then this request's.
        check(wattle_curl_easy_setopt_long(easy, CURLOPT_HTTPGET, 1), "HTTPGET")
        check(wattle_curl_easy_setopt_pointer(easy, CURLOPT_CUSTOMREQUEST, nil), "CUSTOMREQUEST")
        let method = request.method.rawValue
        if upload != nil {
            // No POSTFIELDS: curl reads the body through the read callback, this many bytes.
            check(wattle_curl_easy_setopt_pointer(easy, CURLOPT_POSTFIELDS, nil), "POSTFIELDS")
            check(wattle_curl_easy_setopt_long(easy, CURLOPT_POST, 1), "POST")
            check(
                wattle_curl_easy_setopt_off_t(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(uploadSize)),
                "POSTFIELDSIZE")
            if method != "POST" {
                check(wattle_curl_easy_setopt_string(easy, CURLOPT_CUSTOMREQUEST, method), "CUSTOMREQUEST")
            }
        } else if let body = request.body {
            check(
                wattle_curl_easy_setopt_off_t(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count)),
                "POSTFIELDSIZE")
            body.withUnsafeBytes { bytes in
                // COPYPOSTFIELDS copies, so the Data need not outlive this call.
                let pointer = bytes.baseAddress ?? UnsafeRawPointer(("" as StaticString).utf8Start)
                check(
                    wattle_curl_easy_setopt_pointer(
                        easy, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: pointer)),
                    "COPYPOSTFIELDS")
            }
            if method != "POST" {
                check(wattle_curl_easy_setopt_string(easy, CURLOPT_CUSTOMREQUEST, method), "CUSTOMREQUEST")
            }
        } else {
            switch method {
            case "GET": break
            case "HEAD": check(wattle_curl_easy_setopt_long(easy, CURLOPT_NOBODY, 1), "NOBODY")
            case "POST":
                check(wattle_curl_easy_setopt_off_t(easy, CURLOPT_POSTFIELDSIZE_LARGE, 0), "POSTFIELDSIZE")
                check(wattle_curl_easy_setopt_string(easy, CURLOPT_COPYPOSTFIELDS, ""), "COPYPOSTFIELDS")
            default:
                check(wattle_curl_easy_setopt_string(easy, CURLOPT_CUSTOMREQUEST, method), "CUSTOMREQUEST")
            }
        }

        // Headers: ours, then curl's defaults switched off where we decide. With a cookie jar,
        // the request's own `Cookie` fields go to CURLOPT_COOKIE, which libcurl adds to the jar's
        // cookies in one `Cookie` field (RFC 6265 allows one); left in the list they were a
        // second field. Every transfer sets the option, to its cookies or none.
        var headers = request.headers
        if let partial = request.download?.partial {
            // Unencoded: ranges count the bytes as sent, and an encoded body could not be
            // continued. Then the rest of a partial download, if the server still has the same
            // file: with `If-Range`, a changed one is sent whole instead.
            headers["Accept-Encoding"] = "identity"
            // The range is Wattle's to ask for, whatever default headers or a hook added.
            headers.remove("Range")
            headers.remove("If-Range")
            requestedOffset = 0
            if let (offset, validator) = partial.resumePoint() {
                requestedOffset = offset
                headers["Range"] = "bytes=\(offset)-"
                headers["If-Range"] = validator
            }
        }
        if handle.keepsCookies {
            var own: [String] = []
            if headers.contains("Cookie") {
                own = headers.values(for: "Cookie").filter { !$0.isEmpty }
                headers.remove("Cookie")
            }
            if own.isEmpty {
                check(wattle_curl_easy_setopt_pointer(easy, CURLOPT_COOKIE, nil), "COOKIE")
            } else {
                check(wattle_curl_easy_setopt_string(easy, CURLOPT_COOKIE, own.joined(separator: "; ")), "COOKIE")
            }
            // libcurl (7.88; fixed upstream in April 2026, curl PR 21312) picks and stores
            // cookies for a custom `Host` header's name, and keeps that name for the handle's
            // later transfers, through curl_easy_reset: a later request to another host would
            // get that host's cookies. Such a handle is not kept.
            if headers.contains("Host") { handle.isSpent = true }
        }
        do {
            let list = try handle.headerList(
                for: headers, hasBody: request.hasBody, omitting: request.omittedHeaders)
            check(wattle_curl_easy_setopt_slist(easy, CURLOPT_HTTPHEADER, list), "HTTPHEADER")
        } catch {
            check(CURLE_OUT_OF_MEMORY, "HTTPHEADER")
        }

        // Callbacks (the functions are fixed options): this transfer receives them.
        check(wattle_curl_easy_setopt_pointer(easy, CURLOPT_WRITEDATA, me), "WRITEDATA")
        check(wattle_curl_easy_setopt_pointer(easy, CURLOPT_HEADERDATA, me), "HEADERDATA")
        check(wattle_curl_easy_setopt_pointer(easy, CURLOPT_PREREQDATA, me), "PREREQDATA")
        check(wattle_curl_easy_setopt_pointer(easy, CURLOPT_XFERINFODATA, me), "XFERINFODATA")
        check(wattle_curl_easy_setopt_pointer(easy, CURLOPT_READDATA, me), "READDATA")
        check(wattle_curl_easy_setopt_pointer(easy, CURLOPT_SEEKDATA, me), "SEEKDATA")
        let watchUploads = request.timeouts.stall != nil && max(request.body?.count ?? 0, Int(uploadSize)) > 65_536
        let progress = request.download?.progress != nil || watchUploads || request.uploadProgress != nil
        check(wattle_curl_easy_setopt_long(easy, CURLOPT_NOPROGRESS, progress ? 0 : 1), "NOPROGRESS")

        if let (what, code) = failed {
            return .transport(
                code: Int(code.rawValue), message: "cannot set \(what): \(String(cString: curl_easy_strerror(code)))")
        }
        return nil
    }

    // MARK: Callbacks (engine thread, inside curl_multi_perform)

    // The body and header callbacks borrow the transfer (`_withUnsafeGuaranteedRef`): whenever
    // curl can call back, the engine holds it (in `active`, or in hand while it removes the
    // handle), so the retain and release around each call (two atomic operations, on every
    // header line and body piece) are not needed.
    static let writeCallback: wattle_curl_data_callback = { data, size, count, userdata in
        guard let userdata else { return 0 }
        return Unmanaged<CurlTransfer>.fromOpaque(userdata)._withUnsafeGuaranteedRef {
            $0.receiveBody(UnsafeRawBufferPointer(start: data, count: size * count))
        }
    }

    static let headerCallback: wattle_curl_data_callback = { data, size, count, userdata in
        guard let userdata else { return 0 }
        return Unmanaged<CurlTransfer>.fromOpaque(userdata)._withUnsafeGuaranteedRef {
            $0.receiveHeaderLine(UnsafeRawBufferPointer(start: data, count: size * count)) ? size * count : 0
        }
    }

    /// Reads the next piece of a streamed body (`CURLOPT_READFUNCTION`).
    static let readCallback: wattle_curl_data_callback = { buffer, size, count, userdata in
        guard let userdata, let buffer else { return wattle_curl_readfunc_abort }
        let transfer = Unmanaged<CurlTransfer>.fromOpaque(userdata).takeUnretainedValue()
        return transfer.readUpload(into: UnsafeMutableRawBufferPointer(start: buffer, count: size * count))
    }

    /// Moves a streamed body back, for curl to send the body again on another connection
    /// (`CURLOPT_SEEKFUNCTION`).
    static let seekCallback: wattle_curl_seek_callback = { userdata, offset, origin in
        guard let userdata else { return CURL_SEEKFUNC_CANTSEEK }
        let transfer = Unmanaged<CurlTransfer>.fromOpaque(userdata).takeUnretainedValue()
        return transfer.seekUpload(to: Int64(offset), origin: origin)
    }

    static let prerequestCallback: wattle_curl_prereq_callback = { userdata, _, _, _, _ in
        guard let userdata else { return Int32(CURL_PREREQFUNC_OK) }
        let transfer = Unmanaged<CurlTransfer>.fromOpaque(userdata).takeUnretainedValue()
        if transfer.connected {
            // A second send in one transfer is curl retrying it on another connection (Wattle
            // follows redirects itself): a reused stream refused by the server's GOAWAY, or a
            // kept-alive connection that had closed. curl counts retries per handle and resets
            // the count only in `curl_easy_reset` (7.88.1: `Curl_retry_request`), so a kept
            // handle would fail a later transfer after 5 retries in its whole life ("Connection
            // died, tried 5 times before giving up"). Reset it before its next transfer.
            transfer.handle?.needsReset = true
        }
        transfer.connected = true
        // A streamed body's files are opened now, not while the transfer waited for a
        // connection; one that cannot be stops the request unsent.
        do throws(UploadStream.Failure) {
            try transfer.upload?.openFiles()
        } catch {
            transfer.abort = .uploadFile(error)
            return Int32(CURL_PREREQFUNC_ABORT)
        }
        // The stall clock starts when a connection is assigned, not while queued.
        transfer.lastActivityCount = transfer.activity
        transfer.lastActivityTime = .now
        return Int32(CURL_PREREQFUNC_OK)
    }

    static let progressCallback: wattle_curl_xferinfo_callback = { userdata, downloadTotal, _, _, uploadNow in
        guard let userdata else { return 0 }
        let transfer = Unmanaged<CurlTransfer>.fromOpaque(userdata).takeUnretainedValue()
        if uploadNow != transfer.uploadedBytes {
            // A body sent again (libcurl retrying on a new connection) counts from 0: moving
            // back is not progress, and must not hide the progress that follows.
            if uploadNow > transfer.uploadedBytes { transfer.activity &+= Int(uploadNow - transfer.uploadedBytes) }
            transfer.uploadedBytes = uploadNow
            if let report = transfer.request.uploadProgress {
                let total = transfer.upload?.size ?? Int64(transfer.request.body?.count ?? 0)
                report(UploadProgress(sentBytes: Int64(uploadNow), totalBytes: total))
            }
        }
        transfer.reportProgress(expected: Int64(downloadTotal))
        return 0
    }

    /// Whether the head received has a `Set-Cookie` field. Read after the transfer has failed
    /// (the engine thread no longer touches it then).
    var receivedSetCookie: Bool { HeaderSection(rawHeaders).headers.contains("Set-Cookie") }

    /// Returns false to abort the transfer (header section over the limit).
    private func receiveHeaderLine(_ bytes: UnsafeRawBufferPointer) -> Bool {
        activity &+= bytes.count
        if let status = HeaderLineParser.statusCode(bytes) {
            // A new response (after 100 Continue or a proxy's CONNECT): start over.
            statusCode = status
            bodyIsEncoded = false
            sawSetCookie = false
            rawHeaders.removeAll(keepingCapacity: true)
            // One allocation for a typical header section, instead of growing line by line.
            rawHeaders.reserveCapacity(1024)
            headerBytes = bytes.count
            return true
        }
        headerBytes += bytes.count
        if headerBytes > request.maximumHeaderSize {
            abort = .headersTooLarge
            return false
        }
        if watchesContentEncoding, let field = HeaderLineParser.field(bytes),
            field.name.caseInsensitiveEquals("Content-Encoding"), !field.value.caseInsensitiveEquals("identity")
        {
            bodyIsEncoded = true
        }
        if !sawSetCookie, handle?.keepsCookies == true, Self.isSetCookie(bytes) { sawSetCookie = true }
        // Kept as bytes; parsed when the response's headers are first read (`HeaderSection`).
        rawHeaders.append(contentsOf: bytes)
        if bytes.count <= 2, !streamStarted, let stream = request.responseStream, (200..<300).contains(statusCode),
            bytes.first == UInt8(ascii: "\r") || bytes.first == UInt8(ascii: "\n")
        {
            // The blank line that ends a 2xx head: the reader gets it now, not with the first
            // piece of a body that may be long in coming. Unless it ends a proxy's answer to
            // CONNECT, which libcurl passes on too: the response code it reports is the
            // server's only (0 until the server's status line).
            var code = 0
            if let easy, wattle_curl_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &code) == CURLE_OK,
                code == statusCode
            {
                startStream(stream)
            }
        }
        return true
    }

    /// Opens the streamed body, if the request has one (every file, with its size); the error
    /// when it cannot be sent. Called by the engine before `configure`, so that a file that
    /// cannot be sent costs no handle.
    func openUpload() -> WattleError? {
        do {
            upload = try UploadStream.opening(bodyOf: request)
            return nil
        } catch {
            return error
        }
    }

    /// Up to `buffer.count` bytes of the streamed body, never past the size it had when the
    /// transfer started; a file that ends early aborts the transfer.
    private func readUpload(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        guard let upload else {
            abort = .uploadFile(UploadStream.Failure(path: request.bodyFile?.path ?? "", reason: "the body was closed"))
            return wattle_curl_readfunc_abort
        }
        do {
            return try upload.read(into: buffer)
        } catch {
            abort = .uploadFile(error)
            return wattle_curl_readfunc_abort
        }
    }

    private func seekUpload(to offset: Int64, origin: Int32) -> Int32 {
        guard origin == SEEK_SET, let upload, upload.seek(to: offset) else { return CURL_SEEKFUNC_CANTSEEK }
        return CURL_SEEKFUNC_OK
    }

    private func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Int {
        if let stream = request.responseStream, (200..<300).contains(statusCode) {
            return streamBody(bytes, to: stream)
        }
        activity &+= bytes.count
        if let download = request.download, (200..<300).contains(statusCode) {
            if downloadDescriptor < 0, !openDownload(download) { return 0 }
            if let end = rangeEnd, downloadBase + downloadedBytes + Int64(bytes.count) > end {
                // More than the range holds: the bytes are not the file's rest.
                request.download?.partial?.requestRestart()
                abort = .range("the server sent more than the \(end - downloadBase) bytes of the range it announced")
                return 0
            }
            if let reason = storeDownload(bytes) {
                abort = .file(reason)
                return 0
            }
            downloadedBytes += Int64(bytes.count)
            return bytes.count
        }
        if let limit = request.maximumResponseSize, body.count + bytes.count > limit {
            if request.streamsBody, !request.acceptedStatuses.contains(statusCode) {
                body.append(contentsOf: bytes.prefix(max(0, limit - body.count)))
                abort = .errorBodyCut
            } else {
                abort = .tooLarge
            }
            return 0
        }
        if body.isEmpty, let easy {
            var length: curl_off_t = -1
            if wattle_curl_easy_getinfo_off_t(easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length) == CURLE_OK,
                length > bytes.count
            {
                // (A body announced longer than the limit never gets here: curl's own check
                // fails it, except for a download's error response and HEAD, which has none.)
                // The announced length is the server's word: reserve at most what the limit
                // allows, and with no limit, or for a download's error response (which its
                // status matters for more than its body), at most `unlimitedReservation` (a
                // length near `Int.max` would trap in `Data`, a large one would fail to allocate).
                var cap = request.maximumResponseSize ?? Self.unlimitedReservation
                if request.streamsBody { cap = min(cap, Self.unlimitedReservation) }
                body.reserveCapacity(Int(min(length, curl_off_t(cap))))
            } else {
                // The whole body in one piece (a small response), or no length to go by: made
                // at its size in one go, without first growing an empty `Data`.
                body = Data(bytes)
                return bytes.count
            }
        }
        body.append(contentsOf: bytes)
        return bytes.count
    }

    private func openDownload(_ download: TransportRequest.DownloadTarget) -> Bool {
        downloadBase = 0
        let descriptor: Int32
        if let partial = download.partial {
            // Through the partial's locked file: empty, or a `206` continuing it at its end.
            guard openPartial(partial) else { return false }
            descriptor = partial.writeDescriptor()
        } else {
            // Private until it is renamed into place, with the destination's permissions then (a
            // link planted at the temporary's name is not followed).
            descriptor = open(download.file.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
        }
        if descriptor < 0 {
            abort = .file(String(cString: strerror(errno)))
            return false
        }
        // (A partial's descriptor shares its offset with the locked one: always placed.)
        if download.partial != nil, lseek(descriptor, off_t(downloadBase), SEEK_SET) < 0 {
            abort = .file(String(cString: strerror(errno)))
            close(descriptor)
            return false
        }
        downloadOpened = true
        downloadDescriptor = descriptor
        pendingDownload = .allocate(byteCount: Self.downloadReceiveBufferSize, alignment: 16)
        pendingDownloadCount = 0
        downloadWritten = Int(downloadBase)
        downloadWritebackStarted = Int(downloadBase)
        return true
    }

    /// Decides how a resumable download's 2xx answer goes into its partial file: a `206` for
    /// the rest of the same file continues it at that offset; a whole body is written from the
    /// start once its validator is recorded, unless the partial holds bytes (the file changed,
    /// or the server ignores ranges), which the session must empty first (see ``PartialDownload``).
    private func openPartial(_ partial: PartialDownload) -> Bool {
        let headers = HeaderSection(rawHeaders).headers
        if statusCode == 206 {
            let start = PartialDownload.rangeStart(of: headers)
            let encoding = headers["Content-Encoding"] ?? "identity"
            guard requestedOffset > 0, start == requestedOffset,
                encoding.isEmpty || encoding.caseInsensitiveEquals("identity"),
                partial.matches(headers)
            else {
                partial.requestRestart()
                abort = .range(
                    "the server answered the range from byte \(requestedOffset) with \(Redaction.escaped(headers["Content-Range"] ?? "no Content-Range"))"
                )
                return false
            }
            downloadBase = requestedOffset
            rangeEnd = PartialDownload.rangeTotal(of: headers)
            return true
        }
        if requestedOffset > 0 || partial.size > 0 {
            partial.requestRestart()
            abort = .range("the server sent the whole file again instead of the rest (status \(statusCode))")
            return false
        }
        // The announced length, unless a transfer coding makes libcurl ignore it (RFC 9112, 6.3).
        let length = headers.contains("Transfer-Encoding") ? nil : headers["Content-Length"].flatMap { Int64($0) }
        partial.begin(validator: PartialDownload.validator(of: headers), length: length)
        return true
    }

    /// The most a body with no size limit reserves up front from its announced length; a
    /// longer one grows as it arrives.
    static let unlimitedReservation = 16 * 1024 * 1024

    /// Pieces smaller than this are gathered before being written.
    static let smallDownloadPiece = 64 * 1024

    /// Writes a download's piece to its file. Small pieces (an HTTP/2 server sends DATA frames
    /// of 8-16 KiB, and curl hands each over as it comes) are gathered and written 512 KiB at
    /// a time, so a download costs a few hundred `write`s instead of one per frame; large
    /// ones (HTTP/1.1, read 512 KiB at a time) go straight to the file. The reason when the
    /// file refused them.
    private func storeDownload(_ bytes: UnsafeRawBufferPointer) -> String? {
        guard let pending = pendingDownload else { return writeDownload(bytes) }
        if bytes.count >= Self.smallDownloadPiece || pendingDownloadCount + bytes.count > pending.count {
            if let failure = flushDownload() { return failure }
            if bytes.count >= Self.smallDownloadPiece { return writeDownload(bytes) }
        }
        UnsafeMutableRawBufferPointer(rebasing: pending[pendingDownloadCount...]).copyMemory(from: bytes)
        pendingDownloadCount += bytes.count
        return nil
    }

    /// Writes the gathered pieces; the reason when the file refused them.
    private func flushDownload() -> String? {
        guard let pending = pendingDownload, pendingDownloadCount > 0 else { return nil }
        defer { pendingDownloadCount = 0 }
        return writeDownload(UnsafeRawBufferPointer(rebasing: pending[..<pendingDownloadCount]))
    }

    private func writeDownload(_ bytes: UnsafeRawBufferPointer) -> String? {
        var offset = 0
        while offset < bytes.count {
            let written = write(downloadDescriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                return String(cString: strerror(errno))
            }
            offset += written
        }
        downloadWritten += bytes.count
        startWriteback()
        return nil
    }

    /// How much written data waits before the kernel is asked to start writing it to disk.
    static let downloadWritebackStep = 8 * 1024 * 1024

    /// Asks the kernel to start writing the download's last few MiB to disk while the rest
    /// arrives (`sync_file_range` with `SYNC_FILE_RANGE_WRITE` starts the writeback and does not
    /// wait for it), so the fsync at the end waits for the last few MiB instead of the whole
    /// file. Only a hint: a failure is left for the fsync to report.
    private func startWriteback() {
        guard syncsDownload else { return }
        let pending = downloadWritten - downloadWritebackStarted
        guard pending >= Self.downloadWritebackStep else { return }
        _ = wattle_start_writeback(downloadDescriptor, Int64(downloadWritebackStarted), Int64(pending))
        downloadWritebackStarted = downloadWritten
    }

    /// Closes the download's file and frees its gathered pieces. When `finishing` (a finished
    /// `.unsynced` download), first writes the last pieces and returns why that failed; the file
    /// is closed either way. (A `.synced` one's file is synced and closed by the engine, off its
    /// thread: `Completed.unsyncedDescriptor`.)
    @discardableResult
    private func closeDownload(finishing: Bool = false) -> String? {
        var failure: String?
        if downloadDescriptor >= 0 {
            if finishing { failure = flushDownload() }
            if close(downloadDescriptor) != 0, finishing, failure == nil { failure = String(cString: strerror(errno)) }
            downloadDescriptor = -1
        }
        pendingDownload?.deallocate()
        pendingDownload = nil
        pendingDownloadCount = 0
        return failure
    }

    private func reportProgress(expected: Int64) {
        guard let progress = request.download?.progress, (200..<300).contains(statusCode),
            downloadOpened || request.download?.partial == nil,
            downloadedBytes != lastReportedProgress
        else { return }
        lastReportedProgress = downloadedBytes
        // A total smaller than what has arrived is wrong (an encoded length, or a server's
        // mistake): unknown rather than a fraction over 1.
        // (A length the server claims may be near Int64.max: added to a resumed file's bytes,
        // it would trap.)
        let known =
            expected > 0 && !bodyIsEncoded && downloadedBytes <= expected && expected <= Int64.max - downloadBase
        progress(
            DownloadProgress(
                receivedBytes: downloadBase + downloadedBytes, expectedBytes: known ? downloadBase + expected : nil))
    }

    // MARK: Completion (engine thread)

    /// The outcome, once curl reports the transfer done with `code`.
    func finish(code: CURLcode) -> Result<Completed, WattleError> {
        guard let easy else { return .failure(.transport(code: -1, message: "transfer was never started")) }
        if sawSetCookie, let handle { expireDeletedCookies(handle) }
        if case .errorBodyCut = abort {
            // Stopped on purpose by the write callback: the response is whole but for its body.
        } else if code != CURLE_OK {
            // A resumable download keeps what arrived, gathered pieces included.
            if request.download?.partial != nil, abort == nil { _ = flushDownload() }
            return .failure(error(for: code, easy: easy))
        }
        var status = 0
        _ = wattle_curl_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
        if status != 0 { statusCode = status }
        var fileURL: URL?
        var unsynced: Int32 = -1
        if let download = request.download, (200..<300).contains(statusCode) {
            if downloadDescriptor < 0, !openDownload(download) {
                return .failure(error(for: CURLE_WRITE_ERROR, easy: easy))
            }
            if let end = rangeEnd, downloadBase + downloadedBytes < end {
                // A body ended by the connection's close, short of its range: what arrived is
                // kept for the next attempt to continue.
                _ = flushDownload()
                return .failure(
                    .connectionLost(
                        host: request.target.host,
                        reason:
                            "the connection closed after \(downloadedBytes) of the \(end - downloadBase) bytes of the range the server announced"
                    ))
            }
            if syncsDownload {
                // Written, not yet on disk: the descriptor goes with the result, to be synced
                // off this thread (the same descriptor: a writeback error is reported to it).
                if let reason = flushDownload() {
                    return .failure(.fileError(path: download.file.path, reason: reason))
                }
                swap(&unsynced, &downloadDescriptor)
                _ = closeDownload()
            } else if let reason = closeDownload(finishing: true) {
                return .failure(.fileError(path: download.file.path, reason: reason))
            }
            reportProgress(expected: downloadedBytes)
            fileURL = download.file
        }
        return .success(
            Completed(
                statusCode: statusCode, rawHeaders: rawHeaders, body: body, fileURL: fileURL, metrics: metrics(easy),
                unsyncedDescriptor: unsynced))
    }

    /// Carries out the server's deletions of cookies that libcurl missed (see ``CookieDeletion``).
    /// Called for a head with a `Set-Cookie` line (`sawSetCookie`); the jar is listed only for such a deletion.
    private func expireDeletedCookies(_ handle: EasyHandle) {
        let setCookies = HeaderSection(rawHeaders).headers.values(for: "Set-Cookie")
        let now = Date()
        let deleted = CookieDeletion.deletions(
            in: setCookies, host: request.target.host, requestPath: request.url.path(percentEncoded: true), now: now)
        guard !deleted.isEmpty, let jar = handle.cookieLines() else { return }
        let lines = CookieDeletion.expiring(
            deleted, host: request.target.host, isHTTPS: request.target.isHTTPS, jar: jar, now: now)
        if !lines.isEmpty { _ = handle.addCookieLines(lines) }
    }

    /// Whether a header line is a `Set-Cookie` field (its name in any case).
    private static func isSetCookie(_ line: UnsafeRawBufferPointer) -> Bool {
        guard line.count > 11, line[10] == UInt8(ascii: ":") else { return false }
        return zip(line.prefix(10), "set-cookie".utf8).allSatisfy { $0 | 0x20 == $1 }
    }

    private func metrics(_ easy: UnsafeMutableRawPointer) -> ResponseMetrics {
        func time(_ info: CURLINFO) -> Duration {
            var value: curl_off_t = 0
            _ = wattle_curl_easy_getinfo_off_t(easy, info, &value)
            return .microseconds(value)
        }
        func size(_ info: CURLINFO) -> Int64 {
            var value: curl_off_t = 0
            _ = wattle_curl_easy_getinfo_off_t(easy, info, &value)
            return Int64(value)
        }
        var metrics = ResponseMetrics()
        metrics.nameLookup = time(CURLINFO_NAMELOOKUP_TIME_T)
        metrics.connect = time(CURLINFO_CONNECT_TIME_T)
        metrics.tlsHandshake = time(CURLINFO_APPCONNECT_TIME_T)
        metrics.firstByte = time(CURLINFO_STARTTRANSFER_TIME_T)
        metrics.total = time(CURLINFO_TOTAL_TIME_T)
        metrics.bytesSent = size(CURLINFO_SIZE_UPLOAD_T)
        if streamStarted {
            metrics.bytesReceived = streamedBytes
        } else {
            metrics.bytesReceived = request.download != nil && downloadedBytes > 0 ? downloadedBytes : Int64(body.count)
        }
        var version = 0
        _ = wattle_curl_easy_getinfo_long(easy, CURLINFO_HTTP_VERSION, &version)
        switch version {
        case CURL_HTTP_VERSION_1_0: metrics.httpVersion = "1.0"
        case CURL_HTTP_VERSION_1_1: metrics.httpVersion = "1.1"
        case CURL_HTTP_VERSION_2_0: metrics.httpVersion = "2"
        case CURL_HTTP_VERSION_3: metrics.httpVersion = "3"
        default: metrics.httpVersion = ""
        }
        var connects = 0
        _ = wattle_curl_easy_getinfo_long(easy, CURLINFO_NUM_CONNECTS, &connects)
        metrics.reusedConnection = connects == 0
        var ip: UnsafePointer<CChar>?
        if wattle_curl_easy_getinfo_string(easy, CURLINFO_PRIMARY_IP, &ip) == CURLE_OK, let ip {
            metrics.remoteAddress = String(cString: ip)
        }
        var port = 0
        _ = wattle_curl_easy_getinfo_long(easy, CURLINFO_PRIMARY_PORT, &port)
        metrics.remotePort = port
        return metrics
    }

    /// Maps a curl failure to a ``WattleError`` with its context.
    private func error(for code: CURLcode, easy: UnsafeMutableRawPointer) -> WattleError {
        let errorBuffer = handle?.errorBuffer
        // libcurl quotes a proxy URL it cannot read, credentials and all: never pass them on.
        let curlText =
            if let errorBuffer, errorBuffer.pointee != 0 { String(cString: errorBuffer) } else {
                String(cString: curl_easy_strerror(code))
            }
        let message = Redaction.curlMessage(curlText)
        let host = request.target.host
        let port = request.target.port
        if case .uploadFile(let failure) = abort { return failure.error }
        if let proxyError = proxyError(for: code, message: message, easy: easy) { return proxyError }
        switch code {
        case CURLE_COULDNT_RESOLVE_HOST:
            return .cannotResolveHost(host)
        case CURLE_COULDNT_CONNECT:
            var osError = 0
            _ = wattle_curl_easy_getinfo_long(easy, CURLINFO_OS_ERRNO, &osError)
            // libcurl keeps the last errno across transfers: it is this failure's only when the
            // message says a connection was tried.
            let reason =
                osError != 0 && message.hasPrefix("Failed to connect")
                ? String(cString: strerror(Int32(osError))).lowercased() : Self.connectReason(message)
            if let proxy = handle?.proxy {
                return .proxyFailed(proxy: proxy.display, failure: .unreachable(reason: reason))
            }
            if handle?.proxyFromEnvironment == true,
                let proxy = Self.environmentProxy(failedToConnect: message, target: request.target)
            {
                return .proxyFailed(proxy: proxy, failure: .unreachable(reason: reason))
            }
            return .cannotConnect(host: host, port: port, reason: reason)
        case CURLE_OPERATION_TIMEDOUT:
            var elapsed: curl_off_t = 0
            _ = wattle_curl_easy_getinfo_off_t(easy, CURLINFO_TOTAL_TIME_T, &elapsed)
            return timeoutError(message: message, elapsed: .microseconds(elapsed))
        case CURLE_PEER_FAILED_VERIFICATION:
            return .untrustedCertificate(host: host, reason: Self.certificateReason(message))
        case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
            return .pinMismatch(host: host)
        case CURLE_SSL_CERTPROBLEM:
            // A key libcurl could not load: for an encrypted one, most often a wrong passphrase.
            let hint =
                request.hostTrust.clientCertificate?.isPrivateKeyEncrypted == true
                ? ": is its key's passphrase right, and does the key match the certificate?" : ""
            return .clientCertificate(host: host, reason: "it could not be used (\(message))\(hint)")
        // (Through a proxy of the session's the alert may be the proxy's, which no client
        // certificate of Wattle's answers: left as the transport error it is. So for a plain
        // `http` request, which has no TLS with its server: the alert is an `https` proxy's.)
        case CURLE_SSL_CONNECT_ERROR
        where handle?.proxy == nil && request.target.isHTTPS
            && Self.isClientCertificateAlert(message),
            CURLE_RECV_ERROR
        where handle?.proxy == nil && request.target.isHTTPS
            && Self.isClientCertificateAlert(message),
            CURLE_SEND_ERROR
        where handle?.proxy == nil && request.target.isHTTPS
            && Self.isClientCertificateAlert(message):
            return .clientCertificate(
                host: host,
                reason: request.hostTrust.clientCertificate == nil
                    ? "the server asks for one and none is configured for this host (\(message))"
                    : "the server refused the one sent (\(message))")
        case CURLE_OUT_OF_MEMORY where abort == nil && statusCode != 0 && body.isEmpty && downloadedBytes == 0:
            // libcurl refuses a single header line over 100 KB this way.
            return .headersTooLarge(limit: min(request.maximumHeaderSize, 102_400), url: request.url)
        case CURLE_FILESIZE_EXCEEDED:
            return .responseTooLarge(limit: request.maximumResponseSize ?? 0, url: request.url)
        case CURLE_WRITE_ERROR:
            switch abort {
            case .tooLarge: return .responseTooLarge(limit: request.maximumResponseSize ?? 0, url: request.url)
            case .headersTooLarge: return .headersTooLarge(limit: request.maximumHeaderSize, url: request.url)
            case .file(let reason): return .fileError(path: request.download?.file.path ?? "", reason: reason)
            case .range(let reason): return .transport(code: Int(CURLE_RANGE_ERROR.rawValue), message: reason)
            case .uploadFile(let failure): return failure.error
            // (`finish` keeps a cut body's response.)
            case .errorBodyCut, nil: return .transport(code: Int(code.rawValue), message: message)
            }
        case CURLE_PARTIAL_FILE, CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_GOT_NOTHING, CURLE_HTTP2_STREAM,
            CURLE_HTTP2:
            return .connectionLost(host: host, reason: message)
        case CURLE_UNSUPPORTED_PROTOCOL where message.contains("HTTP/0.9"):
            // The URL is fine: what answered is not an HTTP server (an `http` URL to a TLS
            // port, an SSH or database port), which libcurl reads as HTTP/0.9 and refuses.
            return .transport(
                code: Int(code.rawValue),
                message:
                    "\(host) did not answer in HTTP (\(message)); is the port right, and is it an https one?")
        case CURLE_UNSUPPORTED_PROTOCOL, CURLE_URL_MALFORMAT:
            return .invalidURL(request.target.string, reason: message)
        default:
            return .transport(code: Int(code.rawValue), message: message)
        }
    }

    /// Whether a TLS failure is the server's alert about the client certificate, as OpenSSL
    /// words it: TLS 1.3's "certificate required" (none sent), or a bad, unknown-CA, unknown,
    /// expired, revoked or unsupported one, or access denied. (A TLS 1.2 server that wants one
    /// and gets none often sends a plain "handshake failure", which says nothing about
    /// certificates: that stays a transport error.)
    static func isClientCertificateAlert(_ message: String) -> Bool {
        [
            "alert certificate required", "alert bad certificate", "alert unknown ca", "alert certificate unknown",
            "alert certificate expired", "alert certificate revoked", "alert unsupported certificate",
            "alert access denied",
        ]
        .contains { message.contains($0) }
    }

    /// The proxy from the environment that a failed connection was to, as "scheme://host:port
    /// (from the environment)", or nil when it was to the server. libcurl's "Failed to connect
    /// to HOST port PORT" names what it connected to: the proxy is named only when that is the
    /// host and port of the proxy variable libcurl reads for the scheme (`http_proxy`, or
    /// `https_proxy` then `HTTPS_PROXY`; then `all_proxy`, `ALL_PROXY`). A server that
    /// `no_proxy` sent direct, named in libcurl's spelling (punycode, `127.1` as `127.0.0.1`),
    /// is never taken for it.
    ///
    /// - Parameter environment: `getenv`, replaced only by tests.
    static func environmentProxy(
        failedToConnect message: String, target: TransportRequest.Target,
        environment: (String) -> String? = { getenv($0).map { String(cString: $0) } }
    ) -> String? {
        guard let proxy = environmentProxy(for: target, environment: environment),
            message.hasPrefix("Failed to connect to "),
            let portMark = message.firstRange(of: " port ")
        else { return nil }
        let host = message[message.index(message.startIndex, offsetBy: 21)..<portMark.lowerBound]
        let port = Int(message[portMark.upperBound...].prefix { $0.isASCII && $0.isNumber })
        guard port == proxy.port, host.lowercased() == proxy.host.lowercased() else { return nil }
        return "\(proxy.display) (from the environment)"
    }

    /// The proxy the environment names for `target`, as libcurl picks it (`https_proxy` for
    /// HTTPS, `http_proxy` in lower case only for HTTP, then `all_proxy`); nil when none does or
    /// it cannot be read. (`no_proxy` is not applied.)
    static func environmentProxy(
        for target: TransportRequest.Target,
        environment: (String) -> String? = { getenv($0).map { String(cString: $0) } }
    ) -> ProxyEndpoint? {
        let names = (target.isHTTPS ? ["https_proxy", "HTTPS_PROXY"] : ["http_proxy"]) + ["all_proxy", "ALL_PROXY"]
        guard let value = names.lazy.compactMap(environment).first(where: { !$0.isEmpty }) else { return nil }
        return try? ProxyEndpoint(parsing: value)
    }

    /// The failure as the proxy's, when it is: a refused `CONNECT`, a proxy that does not
    /// resolve or whose URL libcurl cannot read, a failed SOCKS handshake, a configured `https`
    /// proxy's untrusted certificate, and an environment one's for a plain `http` request
    /// (which has no TLS with its server). Nil otherwise. (Not an environment proxy's
    /// certificate for an `https` request: `no_proxy` may have sent it direct, and libcurl 7.88
    /// keeps `CURLINFO_PROXY_SSL_VERIFYRESULT` across transfers, so it cannot tell.)
    private func proxyError(for code: CURLcode, message: String, easy: UnsafeMutableRawPointer) -> WattleError? {
        let proxy = handle?.proxy?.display ?? "from the environment"
        let target = "\(request.target.host):\(request.target.port)"
        var connectStatus = 0
        _ = wattle_curl_easy_getinfo_long(easy, CURLINFO_HTTP_CONNECTCODE, &connectStatus)
        if connectStatus != 0, !(200..<300).contains(connectStatus) {
            return .proxyFailed(proxy: proxy, failure: .refusedTunnel(status: connectStatus, target: target))
        }
        if code == CURLE_PEER_FAILED_VERIFICATION, connectStatus == 0, let configured = handle?.proxy,
            configured.isHTTPS
        {
            // A configured proxy takes every request, and its TLS handshake comes before any
            // `CONNECT` (whose status libcurl resets for each transfer): with none answered, the
            // certificate that failed is the proxy's. (For a plain `http` request, the only one.)
            return .proxyFailed(proxy: configured.display, failure: untrustedProxy(message))
        }
        if code == CURLE_PEER_FAILED_VERIFICATION, connectStatus == 0, handle?.proxyFromEnvironment == true,
            !request.target.isHTTPS
        {
            // A plain `http` request: the only certificate is an `https` proxy's.
            let named = Self.environmentProxy(for: request.target).map { "\($0.display) (from the environment)" }
            return .proxyFailed(proxy: named ?? proxy, failure: untrustedProxy(message))
        }
        func untrustedProxy(_ message: String) -> ProxyFailure {
            .handshakeFailed(
                reason:
                    "its certificate is not trusted (\(Self.certificateReason(message))); TrustPolicy applies to servers, not proxies: the proxy's certificate must chain to the system's CAs"
            )
        }
        if message.hasPrefix("Unsupported proxy") {
            // "Unsupported proxy syntax in '…'" or "Unsupported proxy scheme for '…'": a proxy
            // URL from the environment, or a configured one that passed Wattle's check but not
            // libcurl's (a host name with a comma).
            return .invalidURL(
                handle?.proxy?.display ?? "http_proxy/https_proxy/all_proxy",
                reason: "not a usable proxy URL: libcurl cannot read it (\(message))")
        }
        switch code {
        case CURLE_COULDNT_RESOLVE_PROXY:
            return .proxyFailed(proxy: proxy, failure: .unreachable(reason: "its host name did not resolve"))
        case CURLE_PROXY:
            var detail = 0
            _ = wattle_curl_easy_getinfo_long(easy, CURLINFO_PROXY_ERROR, &detail)
            switch UInt32(truncatingIfNeeded: detail) {
            case CURLPX_RESOLVE_HOST.rawValue:
                // With socks4:// and socks5:// (not socks4a or socks5h) libcurl resolves the
                // server's name itself, and hands the proxy an address.
                return .cannotResolveHost(request.target.host)
            case CURLPX_REPLY_CONNECTION_REFUSED.rawValue, CURLPX_REPLY_HOST_UNREACHABLE.rawValue,
                CURLPX_REPLY_NETWORK_UNREACHABLE.rawValue, CURLPX_REPLY_TTL_EXPIRED.rawValue,
                CURLPX_REPLY_GENERAL_SERVER_FAILURE.rawValue, CURLPX_REQUEST_FAILED.rawValue:
                // The proxy could not reach the server (SOCKS5's replies, SOCKS4's 91).
                return .cannotConnect(
                    host: request.target.host, port: request.target.port, reason: "the proxy \(proxy) says: \(message)")
            case CURLPX_CLOSED.rawValue, CURLPX_RECV_CONNECT.rawValue, CURLPX_RECV_REQACK.rawValue,
                CURLPX_RECV_AUTH.rawValue, CURLPX_RECV_ADDRESS.rawValue, CURLPX_SEND_CONNECT.rawValue,
                CURLPX_SEND_REQUEST.rawValue, CURLPX_SEND_AUTH.rawValue:
                // The connection to the proxy broke during the handshake.
                return .proxyFailed(proxy: proxy, failure: .unreachable(reason: message))
            default:
                return .proxyFailed(proxy: proxy, failure: .handshakeFailed(reason: message))
            }
        default:
            return nil
        }
    }

    /// Which limit fired, `elapsed` after the transfer began. The connection phase is over
    /// once the pre-request callback ran (connected, TLS included, on a new or a reused
    /// connection). libcurl's connect and handshake times cannot tell: they are zero for a
    /// stream multiplexed on an open HTTP/2 connection, whose total timeout was reported as a
    /// connect timeout.
    ///
    /// A transfer that waited in libcurl's queue for a connection (at `connectionsPerHost`)
    /// never connected, yet its total limit is what fired: libcurl 7.88 checks no limit while
    /// a transfer waits, and fails it the moment it leaves the queue with its total time used
    /// (the engine fails it first, just past the limit: `hasOverrunTotal`). Its elapsed time,
    /// at or past the total limit and beyond the connect limit, tells.
    private func timeoutError(message: String, elapsed: Duration) -> WattleError {
        let lower = message.lowercased()
        let connecting =
            !connected || lower.contains("connection timed out") || lower.contains("resolving timed out")
            || lower.contains("ssl connection timeout")
        let connect = request.timeouts.connect
        // While connecting, libcurl applies the shorter of the two limits.
        if connecting, request.timeouts.total.map({ $0 >= connect && !(elapsed >= $0 && $0 > connect) }) ?? true {
            return .timedOut(phase: .connect, after: connect, url: request.url)
        }
        return .timedOut(phase: .total, after: request.timeouts.total ?? .zero, url: request.url)
    }

    /// "Failed to connect to 127.0.0.1 port 9 after 0 ms: Couldn't connect to server" → the part
    /// after the last colon, which says why.
    static func connectReason(_ message: String) -> String {
        if message.contains("Connection refused") { return "connection refused" }
        guard let colon = message.lastIndex(of: ":") else { return message }
        return message[message.index(after: colon)...].trimmingWhitespace()
    }

    /// "SSL certificate problem: self-signed certificate" → "self-signed certificate";
    /// "SSL: no alternative certificate subject name matches target host name 'x'" → "hostname mismatch (...)".
    static func certificateReason(_ message: String) -> String {
        if message.contains("subject name") || message.contains("does not match target host") {
            return "hostname mismatch: \(message)"
        }
        if let range = message.firstRange(of: "SSL certificate problem: ") {
            return String(message[range.upperBound...])
        }
        return message
    }

    /// Whole milliseconds, at most `Int.max` (a timeout of `.seconds(Int64.max)` is "never").
    static func milliseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        let (whole, overflow) = Int(seconds).multipliedReportingOverflow(by: 1000)
        if overflow { return seconds < 0 ? 0 : Int.max }
        let (total, carry) = whole.addingReportingOverflow(Int(attoseconds / 1_000_000_000_000_000))
        return carry ? Int.max : total
    }

    /// Whether no byte has moved for the stall timeout, as of `now` (engine thread).
    func hasStalled(now: ContinuousClock.Instant) -> Bool {
        guard let stall = request.timeouts.stall, connected, !paused else { return false }
        if activity - lastActivityCount >= request.timeouts.stallMinimumBytes {
            lastActivityCount = activity
            lastActivityTime = now
            return false
        }
        return now - lastActivityTime >= stall
    }

    /// Whether the transfer has gone past its total limit, as of `now` (engine thread), and
    /// libcurl has not ended it. libcurl 7.88 checks no limit while a transfer waits in its
    /// queue for a connection (at `connectionsPerHost`, or a retry queued again): it fails it
    /// only when it leaves the queue, however long that takes (curl#13227, fixed in 8.8), so
    /// the engine checks it itself. The margin lets libcurl's own check, which fires at the
    /// limit, come first: 100 ms for a transfer that never had a connection (it may be
    /// connecting rather than queued), 1 s for one that had.
    func hasOverrunTotal(now: ContinuousClock.Instant) -> Bool {
        guard let total = request.timeouts.total else { return false }
        return now - handedToCurlAt >= total + (connected ? .seconds(1) : .milliseconds(100))
    }

    /// Hands a piece of a 2xx body to its reader (the head first, with the first piece), or
    /// pauses receiving while the reader has too much to read.
    private func streamBody(_ bytes: UnsafeRawBufferPointer, to stream: ResponseStreamBuffer) -> Int {
        if !streamStarted { startStream(stream) }
        guard stream.offer(bytes) else {
            paused = true
            return wattle_curl_writefunc_pause
        }
        activity &+= bytes.count
        streamedBytes += Int64(bytes.count)
        return bytes.count
    }

    /// Hands the head of a 2xx response to the stream's reader.
    private func startStream(_ stream: ResponseStreamBuffer) {
        guard let easy else { return }
        streamStarted = true
        stream.receiveHead(
            Response(
                statusCode: statusCode, headerSection: HeaderSection(rawHeaders), data: Data(), url: request.url,
                method: request.method, fileURL: nil, metrics: metrics(easy)))
    }

    /// Lets a transfer paused for its reader receive again (engine thread). libcurl hands the
    /// piece it was refused over again at once, which may pause it again. Returns libcurl's
    /// error when it could not go on (the transfer is then to be failed with it).
    func resume() -> CURLcode {
        guard paused, activeIndex != nil, let easy else { return CURLE_OK }
        paused = false
        // The stall clock starts again from now: waiting for the reader was not a stall.
        lastActivityCount = activity
        lastActivityTime = .now
        return curl_easy_pause(easy, wattle_curlpause_cont)
    }

    /// Closes a partly written download's file when the transfer is stopped (cancelled). A
    /// resumable download's gathered pieces are written first, to be continued later.
    func discardPartialDownload() {
        if request.download?.partial != nil, abort == nil { _ = flushDownload() }
        closeDownload()
    }

    /// `fsync`s and closes a finished download's descriptor; the reason when either failed.
    static func syncAndClose(_ descriptor: Int32) -> String? {
        var failure = fsync(descriptor) == 0 ? nil : String(cString: strerror(errno))
        if close(descriptor) != 0, failure == nil { failure = String(cString: strerror(errno)) }
        return failure
    }
}
