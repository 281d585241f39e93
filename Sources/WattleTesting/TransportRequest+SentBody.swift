public import Wattle

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

extension TransportRequest {
    /// The body's bytes as a transport sends them: ``TransportRequest/body``, or the file or
    /// the pieces of a streamed body (``TransportRequest/bodyFile``,
    /// ``TransportRequest/bodySegments``) read now, whole. For a `StubTransport` handler that
    /// checks what an upload would send:
    ///
    /// ```swift
    /// stub.on(.post, "/photos") { request throws(WattleError) in
    ///     let body = try request.sentBody()
    ///     #expect(body.count == expectedSize)
    ///     return Response(statusCode: 201, url: request.url)
    /// }
    /// ```
    ///
    /// - Throws: ``WattleError/fileError(path:reason:)`` for a file that cannot be read, as
    ///   the libcurl transport would fail it.
    public func sentBody() throws(WattleError) -> Data {
        guard let stream = try UploadStream.opening(bodyOf: self) else { return body ?? Data() }
        do {
            return try stream.readAll()
        } catch {
            throw error.error
        }
    }
}
