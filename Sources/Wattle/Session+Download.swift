#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import Logging
import WattleKeychain
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
    /// never leaves a partial file or replaces an existing one. By default the file is flushed to
    /// disk before the rename and its folder after it, so a finished download also survives a
    /// crash or power loss; see ``DownloadDurability`` to leave that to the kernel.
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
    /// - Parameters:
    ///   - durability: whether the finished file is flushed to disk before this returns.
    ///   - progress: called on Wattle's network thread as bytes arrive; keep it quick.
    /// - Returns: the response, with ``Response/fileURL`` set and an empty ``Response/data``
    ///   (for an accepted status outside 2xx, see above).
    public func download(
        _ request: Request, to destination: URL, durability: DownloadDurability = .synced,
        progress: (@Sendable (DownloadProgress) -> Void)? = nil
    ) async throws(WattleError) -> Response {
        let directory = destination.deletingLastPathComponent()
        let temporary = directory.appendingPathComponent(
            ".\(destination.lastPathComponent).wattle-\(UUID().uuidString.prefix(8)).part")
        var info = stat()
        guard stat(directory.path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
            throw .fileError(path: directory.path, reason: "the destination folder does not exist")
        }
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
        if rename(temporary.path, destination.path) != 0 {
            let reason = String(cString: strerror(errno))
            unlink(temporary.path)
            throw .fileError(path: destination.path, reason: "cannot move the download into place: \(reason)")
        }
        // The file is in place (and its data on disk): a folder that fails to sync is told, not
        // thrown, since throwing now would report a replaced file as not replaced.
        if durability == .synced, let reason = FolderSync.sync(directory.path) {
            configuration.logger.warning(
                """
                download to \(destination.path) is in place, but its folder could not be synced \
                (\(reason)): a power loss may undo the rename
                """)
        }
        response.fileURL = destination
        return response
    }

    /// Streams `GET endpoint` to a file; see ``download(_:to:durability:progress:)-(Request,_,_,_)``.
    public func download(
        _ endpoint: String, parameters: Parameters = [:], to destination: URL, durability: DownloadDurability = .synced,
        progress: (@Sendable (DownloadProgress) -> Void)? = nil
    ) async throws(WattleError) -> Response {
        try await download(
            Request(endpoint, query: parameters), to: destination, durability: durability, progress: progress)
    }
}
