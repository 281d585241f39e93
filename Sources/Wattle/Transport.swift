#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Performs one HTTP exchange. ``Session`` builds requests, follows redirects and applies
/// policies on top of a transport; the default transport is Wattle's libcurl engine, and
/// `WattleTesting.StubTransport` scripts responses for tests.
///
/// A transport does not follow redirects and does not treat any status as an error: it returns
/// whatever the server answered, and throws only when there is no answer. A request's body is
/// ``TransportRequest/body``; or, for ``RequestBody/file(_:contentType:)``, the file at
/// ``TransportRequest/bodyFile``; or, for a multipart body with parts from files, the pieces
/// in ``TransportRequest/bodySegments``: a transport that reads only `body` would send nothing.
public protocol Transport: Sendable {
    /// Performs the exchange.
    ///
    /// - Throws: ``WattleError`` for failures without a response (connect, TLS, timeout,
    ///   cancellation, size limit, lost connection).
    func perform(_ request: TransportRequest) async throws(WattleError) -> Response
}

/// One fully resolved request, as a ``Transport`` receives it.
///
/// A value type whose fields share one copy-on-write storage: passing a request through the
/// session's steps, the transport and the transfer copies one reference, not a dozen.
public struct TransportRequest: Sendable {
    /// The method.
    public var method: HTTPMethod {
        get { storage.fields.method }
        set { uniqueStorage().fields.method = newValue }
    }
    /// The absolute URL.
    public var url: URL {
        get { storage.fields.url }
        set {
            let storage = uniqueStorage()
            storage.fields.url = newValue
            storage.fields.target = Target(newValue)
            storage.fields.hostTrust = Self.hostTrust(storage.fields.trust, for: storage.fields.target)
        }
    }
    /// Every header to send (defaults, user agent and content type already merged in).
    public var headers: HTTPHeaders {
        get { storage.fields.headers }
        _modify { yield &uniqueStorage().fields.headers }
    }
    /// The body bytes, or `nil` for none (or for a body streamed from ``bodyFile``).
    public var body: Data? {
        get { storage.fields.body }
        _modify { yield &uniqueStorage().fields.body }
    }
    /// The file whose bytes are the body, streamed from its start on every exchange
    /// (``RequestBody/file(_:contentType:)``); `nil` when the body is ``body``. A transport
    /// must read it when it is set: ``body`` is then `nil`. (`StubTransport` checks that it
    /// can be opened, and does not read it.)
    public var bodyFile: URL? {
        get { storage.fields.bodyFile }
        set { uniqueStorage().fields.bodyFile = newValue }
    }
    /// The body as pieces sent in order, bytes and files, from the start on every exchange
    /// (``RequestBody/segments``: a multipart body with parts from files); empty when the body
    /// is ``body`` or ``bodyFile``. A transport must send them when there are any: ``body`` is
    /// then `nil`. (`StubTransport` checks that each file can be opened, and does not read it.)
    public var bodySegments: [RequestBody.Segment] {
        get { storage.fields.bodySegments }
        set { uniqueStorage().fields.bodySegments = newValue }
    }
    /// Whether the body is streamed, from ``bodyFile`` or ``bodySegments``, rather than ``body``.
    var hasStreamedBody: Bool { storage.fields.bodyFile != nil || !storage.fields.bodySegments.isEmpty }
    /// Whether there is a body, in any of its forms.
    var hasBody: Bool { storage.fields.body != nil || hasStreamedBody }
    /// Timeouts for this exchange.
    public var timeouts: Timeouts {
        get { storage.fields.timeouts }
        set { uniqueStorage().fields.timeouts = newValue }
    }
    /// The largest body kept in memory, or `nil` for no limit. A download's body goes to its
    /// file whatever its size; this limits the body of a download's error response, which is
    /// kept in memory.
    public var maximumResponseSize: Int? {
        get { storage.fields.maximumResponseSize }
        set { uniqueStorage().fields.maximumResponseSize = newValue }
    }
    /// The largest response header section accepted, in bytes.
    public var maximumHeaderSize: Int {
        get { storage.fields.maximumHeaderSize }
        set { uniqueStorage().fields.maximumHeaderSize = newValue }
    }
    /// The trust policy; the transport applies the part matching this request's host.
    public var trust: TrustPolicy {
        get { storage.fields.trust }
        set {
            let storage = uniqueStorage()
            storage.fields.trust = newValue
            storage.fields.hostTrust = Self.hostTrust(newValue, for: storage.fields.target)
            storage.fields.pinsUnchecked = true
        }
    }

    /// Whether the policy's pins may be malformed: a caller's own policy. A session's requests
    /// carry its configuration's, checked once when the session began.
    var pinsUnchecked: Bool { storage.fields.pinsUnchecked }
    /// For downloads: where a 2xx body is streamed (the file is created or truncated), and
    /// progress reports. Other statuses keep their body in memory.
    public var download: DownloadTarget? {
        get { storage.fields.download }
        set { uniqueStorage().fields.download = newValue }
    }
    /// Told how much of the body has been sent (``Request/uploadProgress``), on the
    /// transport's thread; nil for none.
    public var uploadProgress: (@Sendable (UploadProgress) -> Void)? {
        get { storage.fields.uploadProgress }
        set { uniqueStorage().fields.uploadProgress = newValue }
    }

    /// Where a 2xx body goes as it arrives, for ``Session/stream(_:)``; nil otherwise. Only the
    /// libcurl transport streams: with another, the whole response arrives at the end.
    var responseStream: ResponseStreamBuffer? {
        get { storage.fields.responseStream }
        set { uniqueStorage().fields.responseStream = newValue }
    }
    /// Statuses outside 2xx the request takes as its answer (``Request/acceptedStatuses``): a
    /// download's or a stream's body of one of them is not cut at the size limit, as other
    /// statuses' bodies are, but fails as too large, as for any request.
    package var acceptedStatuses: Set<Int> {
        get { storage.fields.acceptedStatuses }
        set { uniqueStorage().fields.acceptedStatuses = newValue }
    }
    /// Header names this request goes without (``Request/omittedHeaders``), checked, each once.
    /// They are not in ``headers``; a transport that adds headers of its own leaves these out
    /// (the libcurl transport tells libcurl not to send its own `Accept` and the like).
    public var omittedHeaders: [String] {
        get { storage.fields.omittedHeaders }
        set { uniqueStorage().fields.omittedHeaders = newValue }
    }
    /// Whether a 2xx body is handed over as it arrives (a download's to its file, a stream's
    /// to its reader) instead of kept in memory: the size limit then applies to other bodies.
    package var streamsBody: Bool { storage.fields.download != nil || storage.fields.responseStream != nil }
    /// Whether this is a ``Session/stream(_:)`` request, whose 2xx body has no size limit.
    package var streamsResponse: Bool { storage.fields.responseStream != nil }

    /// The parts of `url` read on every exchange, taken from it once: FoundationEssentials'
    /// `URL` derives `host`, `port` and `absoluteString` again on each access, and the session
    /// and the engine each read them (kept in step with `url` by its setter).
    var target: Target { storage.fields.target }
    /// What `trust` says for this request's host: decided once per hop, used by the engine and
    /// by the session's warning about relaxed hosts (kept in step by the `url` and `trust` setters).
    var hostTrust: TrustPolicy.HostTrust { storage.fields.hostTrust }

    private var storage: Storage

    /// Creates a request.
    public init(
        method: HTTPMethod, url: URL, headers: HTTPHeaders = [:], body: Data? = nil, timeouts: Timeouts = Timeouts(),
        maximumResponseSize: Int? = nil, trust: TrustPolicy = .default, download: DownloadTarget? = nil
    ) {
        self.init(
            method: method, url: url, target: Target(url), headers: headers, body: body, timeouts: timeouts,
            maximumResponseSize: maximumResponseSize, trust: trust, download: download)
    }

    /// Creates a request whose URL's parts are already known (from ``EndpointResolver``).
    /// `pinsChecked`: `trust` is a session's configuration's, whose pins were checked.
    init(
        method: HTTPMethod, url: URL, target: Target, headers: HTTPHeaders, body: Data?, timeouts: Timeouts,
        maximumResponseSize: Int?, trust: TrustPolicy, download: DownloadTarget?, pinsChecked: Bool = false
    ) {
        storage = Storage(
            Fields(
                method: method, url: url, target: target, hostTrust: Self.hostTrust(trust, for: target),
                headers: headers, body: body, bodyFile: nil, bodySegments: [], timeouts: timeouts,
                maximumResponseSize: maximumResponseSize, maximumHeaderSize: 256 * 1024, trust: trust,
                download: download, pinsUnchecked: !pinsChecked))
    }

    /// The storage, copied first if another request shares it.
    private mutating func uniqueStorage() -> Storage {
        if !isKnownUniquelyReferenced(&storage) { storage = Storage(storage.fields) }
        return storage
    }

    /// The fields, `Sendable` as checked by the compiler.
    private struct Fields: Sendable {
        var method: HTTPMethod
        var url: URL
        var target: Target
        var hostTrust: TrustPolicy.HostTrust
        var headers: HTTPHeaders
        var body: Data?
        var bodyFile: URL?
        var bodySegments: [RequestBody.Segment]
        var timeouts: Timeouts
        var maximumResponseSize: Int?
        var maximumHeaderSize: Int
        var trust: TrustPolicy
        var download: DownloadTarget?
        var uploadProgress: (@Sendable (UploadProgress) -> Void)?
        var responseStream: ResponseStreamBuffer?
        var acceptedStatuses: Set<Int> = []
        var omittedHeaders: [String] = []
        var pinsUnchecked = true
    }

    /// The box the copies share. Written only through `uniqueStorage()`, that is only while one
    /// request holds it, so a box another thread can see is never written: hence
    /// `@unchecked Sendable` (its one field is checked `Sendable`).
    private final class Storage: @unchecked Sendable {
        // Unchecked exclusivity: a write happens only inside a mutating access to the one
        // request holding the box (an access the language already makes exclusive), and a box
        // two requests hold is only read, so no two accesses to `fields` can conflict. The
        // runtime's check cost ~115 instructions on every field read.
        @exclusivity(unchecked) var fields: Fields

        init(_ fields: Fields) {
            self.fields = fields
        }
    }

    /// The absolute URL as text, whether it is HTTPS, its host and its port (the scheme's
    /// default when the URL names none).
    struct Target: Sendable {
        var string: String
        var isHTTPS: Bool
        var host: String
        var port: Int

        init(_ url: URL) {
            let isHTTPS = url.scheme?.lowercased() == "https"
            self.init(string: url.absoluteString, isHTTPS: isHTTPS, host: url.host ?? "", port: url.port)
        }

        init(string: String, isHTTPS: Bool, host: String, port: Int?) {
            self.string = string
            self.isHTTPS = isHTTPS
            self.host = host
            self.port = port ?? (isHTTPS ? 443 : 80)
        }
    }

    /// TLS trust applies to HTTPS hosts only.
    private static func hostTrust(_ trust: TrustPolicy, for target: Target) -> TrustPolicy.HostTrust {
        guard target.isHTTPS, !target.host.isEmpty else { return TrustPolicy.HostTrust() }
        return trust.trust(host: target.host, port: target.port)
    }

    /// Where and how a download is written.
    public struct DownloadTarget: Sendable {
        /// The file the body is written to.
        public var file: URL
        /// Whether the finished file is flushed to disk: for ``DownloadDurability/synced``, a
        /// transport fsyncs `file` before the exchange completes (the session then renames it
        /// into place and syncs the folder).
        public var durability: DownloadDurability
        /// Called with progress as bytes arrive, on Wattle's network thread: keep it quick.
        public var progress: (@Sendable (DownloadProgress) -> Void)?
        /// A resumable download's partial file (`file`), which the libcurl transport continues
        /// with a range request when it holds bytes a validator describes. Internal: other
        /// transports see only `file` and write the whole body there, as for any download.
        var partial: PartialDownload?
        /// Creates a target.
        public init(
            file: URL, durability: DownloadDurability = .synced, progress: (@Sendable (DownloadProgress) -> Void)? = nil
        ) {
            self.file = file
            self.durability = durability
            self.progress = progress
        }
    }
}

extension TransportRequest: CustomReflectable {
    /// The request's fields, as `print` and `dump` show them, with what may carry a credential
    /// left out as ``Response`` does: the URL without user-info and with credential-looking
    /// query values redacted, headers with credentials redacted (``HTTPHeaders/customMirror``),
    /// and the body's size, not its bytes (a login body carries a password).
    public var customMirror: Mirror {
        let fields = storage.fields
        return Mirror(
            self,
            children: [
                "method": fields.method, "url": Redaction.url(fields.url.absoluteString), "headers": fields.headers,
                "body": fields.body.map { "\($0.count) bytes" } as Any, "bodyFile": fields.bodyFile as Any,
                "bodySegments": fields.bodySegments.map(\.mirrored),
                "timeouts": fields.timeouts, "maximumResponseSize": fields.maximumResponseSize as Any,
                "maximumHeaderSize": fields.maximumHeaderSize, "trust": fields.trust,
                "download": fields.download as Any, "omittedHeaders": fields.omittedHeaders,
            ],
            displayStyle: .struct)
    }
}

extension RequestBody.Segment {
    /// What a request's mirror shows of it: a file's path, bytes by their count.
    var mirrored: String {
        switch self {
        case .data(let data): "\(data.count) bytes"
        case .file(let url): url.path
        }
    }
}

/// How much of a request's body has been sent.
public struct UploadProgress: Sendable, Hashable {
    /// Bytes of the body sent so far (from 0 again when a retry or a redirect sends it again).
    public var sentBytes: Int64
    /// The body's size.
    public var totalBytes: Int64
    /// `sentBytes / totalBytes` (at most 1; 1 for an empty body).
    public var fractionCompleted: Double {
        totalBytes > 0 ? min(1, max(0, Double(sentBytes) / Double(totalBytes))) : 1
    }
    /// Creates a progress value.
    public init(sentBytes: Int64, totalBytes: Int64) {
        self.sentBytes = sentBytes
        self.totalBytes = totalBytes
    }
}

/// How far a download has come.
public struct DownloadProgress: Sendable, Hashable {
    /// Bytes received so far.
    public var receivedBytes: Int64
    /// The expected total, when the server sent a length.
    public var expectedBytes: Int64?
    /// `receivedBytes / expectedBytes` (at most 1), when the total is known.
    public var fractionCompleted: Double? {
        guard let expectedBytes, expectedBytes > 0 else { return nil }
        return min(1, max(0, Double(receivedBytes) / Double(expectedBytes)))
    }
    /// Creates a progress value.
    public init(receivedBytes: Int64, expectedBytes: Int64?) {
        self.receivedBytes = receivedBytes
        self.expectedBytes = expectedBytes
    }
}
