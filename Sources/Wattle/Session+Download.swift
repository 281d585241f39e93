import Logging
import WattleKeychain

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension Session {
    /// Streams a response body to a file, with constant memory whatever its size.
    ///
    /// The body is written to a temporary file beside `destination` and moved into place only
    /// when the whole body has arrived with a 2xx status, so a failed or cancelled download
    /// never replaces an existing file, and leaves no partial one unless it is `resumable`. The
    /// temporary (`.NAME.wattle-XXXXXXXX.part`) of a process killed mid-download cannot be
    /// removed by it: the first download of a later process into the folder removes those that
    /// no running download holds and that went unwritten for a minute. A symbolic link at
    /// `destination` is kept: the file it names is replaced (and ``Response/fileURL`` is still
    /// `destination`). A device, a named pipe, a socket or a folder there, or a link to one or to
    /// nothing, is refused with ``WattleError/fileError(path:reason:)`` before anything is sent:
    /// the rename would replace it. By
    /// default the file is flushed to disk before the rename and its folder after it, so a
    /// finished download also survives a crash or power loss; see ``DownloadDurability`` to
    /// leave that to the kernel.
    ///
    /// Only a 2xx body goes to the file. Any other response is the error
    /// ``WattleError/httpStatus(_:)``, its body kept in memory up to
    /// ``Configuration/maximumResponseSize`` bytes (the rest is not read); or, for a status the
    /// request accepts (``Request/acceptedStatuses``, such as a 304 for a file already
    /// here), the response, with that body and no ``Response/fileURL``, the destination left as
    /// it was.
    ///
    /// ```swift
    /// let response = try await session.download("files/big.iso", to: URL(filePath: "/tmp/big.iso")) { progress in
    ///     print(progress.fractionCompleted ?? 0)
    /// }
    /// ```
    ///
    /// **Resuming.** With `resumable`, the body goes to `.NAME.wattle-partial` beside the
    /// destination (`NAME` its file name), and a download that fails or is cancelled, or whose
    /// process dies, leaves what it wrote there (bytes still gathered in memory, under 512 KiB,
    /// go with a killed process). The next resumable download of the same URL to the same
    /// destination asks only for the rest (`Range`, with `If-Range` naming the file's strong
    /// `ETag`, or its `Last-Modified` date when that is a second older than the response's
    /// `Date`) and returns the server's `206`: its `Content-Length` and
    /// ``ResponseMetrics/bytesReceived`` count the rest only. A retry of the
    /// ``Configuration/retry`` policy resumes the same way within one call. Every request of a
    /// resumable download asks for the file unencoded (`Accept-Encoding: identity`), since
    /// ranges count the bytes as sent.
    ///
    /// A partial that already holds the whole file (its process died before the download
    /// finished) asks for its last byte again, and the server's `206` for that byte lands it.
    /// A download whose file could not be written or synced keeps nothing.
    ///
    /// The partial is emptied, and the download starts over with a `200`, when the file changed
    /// on the server, the server ignores ranges, answers another range, one that stops short of
    /// the end or a `416`, or the URL differs (user-info aside; a presigned URL that changes on
    /// every call never resumes); once started over, the call asks for whole bodies. Starting
    /// over happens once a call, with the retry policy's attempts counted afresh: a call sends
    /// at most twice ``RetryPolicy/maximumAttempts`` requests (redirects and a token refresh
    /// aside). A body
    /// with no strong validator, or encoded anyway, is not kept. Only one download at a time
    /// may use a partial: a second, in any process, fails after a second with
    /// ``WattleError/fileError(path:reason:)``, as does a partial that is a symbolic link. The
    /// state file beside it (`.NAME.wattle-partial-state`; a `NAME` too long for the file
    /// system with it is cut, and a hash of it added) holds a hash of the URL, never the
    /// URL, the validator and the announced length.
    ///
    /// ```swift
    /// // Run again after a failure: it continues where the last attempt stopped.
    /// let response = try await session.download("files/big.iso", to: file, resumable: true)
    /// print(response.statusCode)  // 206 when it continued, 200 when it started over
    /// ```
    ///
    /// - Parameters:
    ///   - durability: whether the finished file is flushed to disk before this returns.
    ///   - resumable: keep a failed download's bytes and continue from them (see above). A
    ///     `GET` only, without a `Range` or `If-Range` of its own or in the configuration's
    ///     default headers: others throw ``WattleError/invalidRequest(reason:)``.
    ///   - progress: called on Wattle's network thread as bytes arrive; keep it quick. A
    ///     resumed download counts from the bytes it already had.
    /// - Returns: the response, with ``Response/fileURL`` set and an empty ``Response/data``
    ///   (for an accepted status outside 2xx, see above).
    public func download(
        _ request: Request, to destination: URL, durability: DownloadDurability = .synced, resumable: Bool = false,
        progress: (@Sendable (DownloadProgress) -> Void)? = nil
    ) async throws(WattleError) -> Response {
        // The file a symbolic link names is replaced in its place, and the link kept.
        let target = try DownloadDestination.replacedFile(at: destination)
        let directory = target.deletingLastPathComponent()
        var info = stat()
        guard stat(directory.path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
            throw .fileError(path: directory.path, reason: "the destination folder does not exist")
        }
        if resumable {
            var response = try await downloadResumably(
                request, to: target, durability: durability, progress: progress)
            if response.fileURL != nil { response.fileURL = destination }
            return response
        }
        // Created and locked before the transfer, so that a sweep can tell it from one a
        // killed process left (which the first download into a folder removes).
        let held = try await onGlobalExecutor { () throws(WattleError) in
            try DownloadTemporary.create(for: target)
        }
        defer { withExtendedLifetime(held) {} }
        let temporary = held.file
        var response: Response
        do {
            response = try await sendRetrying(
                request, download: .init(file: temporary, durability: durability, progress: progress))
        } catch {
            unlink(temporary.path)
            throw error
        }
        guard (200..<300).contains(response.statusCode) else {
            // A status the request accepts (a 304 for a file already here): its body is in
            // memory, and the destination stays as it was.
            unlink(temporary.path)
            return response
        }
        try await onGlobalExecutor { [self] () throws(WattleError) in
            Self.keepPermissions(of: target, for: temporary)
            if rename(temporary.path, target.path) != 0 {
                let reason = String(cString: strerror(errno))
                unlink(temporary.path)
                throw .fileError(path: target.path, reason: "cannot move the download into place: \(reason)")
            }
            syncFolder(of: target, durability: durability)
        }
        response.fileURL = destination
        return response
    }

    /// Streams `GET endpoint` to a file; see ``download(_:to:durability:resumable:progress:)-(Request,_,_,_,_)``.
    public func download(
        _ endpoint: String, parameters: Parameters = [:], headers: HTTPHeaders = [:], to destination: URL,
        durability: DownloadDurability = .synced, resumable: Bool = false,
        progress: (@Sendable (DownloadProgress) -> Void)? = nil
    ) async throws(WattleError) -> Response {
        try await download(
            Request(endpoint, query: parameters, headers: headers), to: destination, durability: durability,
            resumable: resumable, progress: progress)
    }

    /// Streams a request's 2xx body to `destination`, as
    /// ``download(_:to:durability:resumable:progress:)-(Request,_,_,_,_)`` does, and calls
    /// `completion` with the response: its ``Response/fileURL`` is `destination`, or on
    /// failure its ``Response/error`` is set (and its status is 0 when the server never
    /// answered). A status the request accepts (``Request/acceptedStatuses``) has neither:
    /// its body is in ``Response/data``, and the destination is as it was.
    ///
    /// Pass `completion:` by its label: a trailing closure after `progress:` in synchronous
    /// code would be taken for it.
    ///
    /// Returns the task doing the work, which can be cancelled.
    @discardableResult
    public func download(
        _ request: Request, to destination: URL, durability: DownloadDurability = .synced, resumable: Bool = false,
        progress: (@Sendable (DownloadProgress) -> Void)? = nil, completion: @escaping @Sendable (Response) -> Void
    ) -> Task<Void, Never> {
        Task {
            completion(
                await self.responseOrError(request) { () async throws(WattleError) -> Response in
                    try await self.download(
                        request, to: destination, durability: durability, resumable: resumable, progress: progress)
                })
        }
    }

    /// A download through a partial file it keeps on failure (see the `resumable` parameter).
    private func downloadResumably(
        _ request: Request, to destination: URL, durability: DownloadDurability,
        progress: (@Sendable (DownloadProgress) -> Void)?
    ) async throws(WattleError) -> Response {
        guard request.method == .get else {
            throw .invalidRequest(reason: "only a GET download can be resumed, not \(request.method)")
        }
        let headers = configuration.defaultHeaders.merging(request.headers)
        if headers.contains("Range") || headers.contains("If-Range") {
            throw .invalidRequest(reason: "a resumable download sets Range and If-Range itself")
        }
        let (url, _) = try request.target(relativeTo: configuration.baseURL)
        let partial = try await claimPartial(of: destination, url: url)
        var target = TransportRequest.DownloadTarget(file: partial.file, durability: durability, progress: progress)
        target.partial = partial
        var restarted = false
        while true {
            var response: Response
            do {
                response = try await sendRetrying(request, download: target)
            } catch {
                // Once: a second answer that cannot continue the partial is the error.
                if !restarted, partial.needsRestart(after: error) {
                    restarted = true
                    configuration.logger.debug("download to \(destination.path) starts over: \(error)")
                    do {
                        try await onGlobalExecutor { () throws(WattleError) in try partial.restart() }
                    } catch let failure {
                        partial.release()
                        throw failure
                    }
                    continue
                }
                // Bytes whose write or sync failed are not kept to be continued.
                if case .fileError = error { partial.discard() }
                partial.release()
                throw error
            }
            guard (200..<300).contains(response.statusCode) else {
                // A status the request accepts: the destination and the partial stay as they were.
                partial.release()
                return response
            }
            try await onGlobalExecutor { [self] () throws(WattleError) in
                Self.keepPermissions(of: destination, for: partial.file)
                try partial.complete(into: destination)
                syncFolder(of: destination, durability: durability)
            }
            response.fileURL = destination
            return response
        }
    }

    /// The partial download of `destination`, locked for this download. Another download
    /// holding it is refused, after a second: a lock is also held, for the moment between
    /// its `fork` and its `exec`, by a child process another thread of this process starts,
    /// which inherits every open file (`O_CLOEXEC` closes them only at the `exec`).
    private func claimPartial(of destination: URL, url: URL) async throws(WattleError) -> PartialDownload {
        for _ in 0..<50 {
            let claimed = try await onGlobalExecutor { () throws(WattleError) in
                try PartialDownload.claim(destination: destination, url: url)
            }
            if let partial = claimed { return partial }
            do {
                try await Task.sleep(for: .milliseconds(20))
            } catch {
                throw .cancelled
            }
        }
        let file = DownloadFileNames.hidden(for: destination, suffix: ".wattle-partial")
        throw .fileError(
            path: file.path, reason: "another download to the same file is in progress (its partial is locked)")
    }

    /// Runs a download's blocking file work (a rename, a folder's `fsync`, a lock, emptying a
    /// partial) on Swift's global executor. Inside ``withNetworkThreadExecutor(isolation:_:)``
    /// the calling task runs on the network thread, which every transfer of the session shares:
    /// a folder's `fsync` there held up every other request and stream for its duration.
    func onGlobalExecutor<Value: Sendable>(
        _ work: @escaping @Sendable () throws(WattleError) -> Value
    ) async throws(WattleError) -> Value {
        let result = await Task(executorPreference: globalConcurrentExecutor) {
            Result { () throws(WattleError) -> Value in try work() }
        }.value
        return try result.get()
    }

    /// Gives `file` (written private, `0600`) the permission bits it gets in place: those of
    /// the file at `destination` when there is one (a `0600` file downloaded again stays
    /// `0600`, as `curl -o` keeps them by writing into the file itself), else what a new file
    /// gets (`0644` less the umask).
    private static func keepPermissions(of destination: URL, for file: URL) {
        var info = stat()
        let mode =
            stat(destination.path, &info) == 0 && info.st_mode & S_IFMT == S_IFREG
            ? info.st_mode & 0o777  // not set-user-ID and the like
            : 0o644 & ~processUmask
        // Through a descriptor of the file itself, not a link put in its place.
        let descriptor = open(file.path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        fchmod(descriptor, mode)
        close(descriptor)
    }

    /// The process's umask, read without setting it (`umask(2)` can only set it, and threads
    /// share it): `Umask:` in `/proc/self/status`, else the common `022`.
    private static let processUmask: mode_t = {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Umask:") }),
            let mask = mode_t(line.dropFirst("Umask:".count).trimmingWhitespace(), radix: 8)
        else { return 0o022 }
        return mask
    }()

    /// Syncs the folder a download was just renamed into (for ``DownloadDurability/synced``).
    /// The file is in place (and its data on disk): a folder that fails to sync is told, not
    /// thrown, since throwing now would report a replaced file as not replaced.
    private func syncFolder(of destination: URL, durability: DownloadDurability) {
        guard durability == .synced, let reason = FolderSync.sync(destination.deletingLastPathComponent().path) else {
            return
        }
        configuration.logger.warning(
            """
            download to \(destination.path) is in place, but its folder could not be synced \
            (\(reason)): a power loss may undo the rename
            """)
    }
}
