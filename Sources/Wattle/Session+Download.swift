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
    /// never leaves a partial file or replaces an existing one.
    ///
    /// ```swift
    /// let response = try await session.download("files/big.iso", to: URL(filePath: "/tmp/big.iso")) { progress in
    ///     print(progress.fractionCompleted ?? 0)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - progress: called on Wattle's network thread as bytes arrive; keep it quick.
    /// - Returns: the response, with ``Response/fileURL`` set and an empty ``Response/data``.
    public func download(
        _ request: Request, to destination: URL, progress: (@Sendable (DownloadProgress) -> Void)? = nil
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
            response = try await sendRetrying(request, download: .init(file: temporary, progress: progress))
        } catch {
            unlink(temporary.path)
            throw error
        }
        if rename(temporary.path, destination.path) != 0 {
            let reason = String(cString: strerror(errno))
            unlink(temporary.path)
            throw .fileError(path: destination.path, reason: "cannot move the download into place: \(reason)")
        }
        response.fileURL = destination
        return response
    }

    /// Streams `GET endpoint` to a file; see ``download(_:to:progress:)-(Request,_,_)``.
    public func download(
        _ endpoint: String, parameters: Parameters = [:], to destination: URL,
        progress: (@Sendable (DownloadProgress) -> Void)? = nil
    ) async throws(WattleError) -> Response {
        try await download(Request(endpoint, query: parameters), to: destination, progress: progress)
    }
}
