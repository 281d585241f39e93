#if canImport(FoundationEssentials)
package import FoundationEssentials
#else
package import Foundation
#endif

#if canImport(Glibc)
import Glibc
#endif

/// A request body streamed from memory and files, in order: what libcurl's read callback sends
/// for ``RequestBody/file(_:contentType:)`` (one file) and for a multipart body with parts from
/// files (``TransportRequest/bodySegments``).
///
/// Every file is opened and its size taken when the stream is opened, that is when an attempt
/// starts: the `Content-Length` is known before anything is sent, and a file that cannot be
/// sent fails the attempt unsent. A file is read with `pread` at the stream's position, so a
/// rewind (libcurl sending the body again on a new connection) needs no file position moved,
/// and a file that ends before its size fails the transfer instead of sending too little.
///
/// Owned by one transfer on the engine thread (or by one `StubTransport` call); the files are
/// closed when it is released.
package final class UploadStream {
    private enum Piece {
        case bytes(Data)
        case file(descriptor: Int32, path: String, size: Int64)

        var size: Int64 {
            switch self {
            case .bytes(let data): Int64(data.count)
            case .file(_, _, let size): size
            }
        }
    }

    /// Why a read failed: the file and what happened to it.
    package struct Failure: Error {
        package var path: String
        package var reason: String
    }

    private var pieces: [Piece] = []
    /// The body's size when the stream was opened: the `Content-Length` sent.
    package private(set) var size: Int64 = 0
    /// Where the next read starts, in the whole body; and the piece it falls in, with that
    /// piece's first byte's place in the body.
    private var offset: Int64 = 0
    private var pieceIndex = 0
    private var pieceStart: Int64 = 0

    private init() {}

    deinit {
        for case .file(let descriptor, _, _) in pieces { close(descriptor) }
    }

    /// Opens the request's streamed body, if it has one: nil for a body in memory or none.
    package static func opening(bodyOf request: TransportRequest) throws(WattleError) -> UploadStream? {
        if let file = request.bodyFile { return try opening([.file(file)]) }
        guard !request.bodySegments.isEmpty else { return nil }
        return try opening(request.bodySegments)
    }

    /// Opens every file among the segments and takes its size; the error for the first that
    /// cannot be sent (the files opened so far are closed).
    ///
    /// `O_NONBLOCK`: opening a FIFO must not wait for a writer on the engine thread (it is then
    /// refused, not being a regular file); it changes nothing for a regular file, whose reads
    /// the engine thread then makes itself.
    package static func opening(_ segments: [RequestBody.Segment]) throws(WattleError) -> UploadStream {
        let stream = UploadStream()
        stream.pieces.reserveCapacity(segments.count)
        for segment in segments {
            switch segment {
            case .data(let data):
                if !data.isEmpty { stream.pieces.append(.bytes(data)) }
            case .file(let url):
                let path = url.path
                let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
                guard descriptor >= 0 else {
                    throw .fileError(
                        path: path, reason: "cannot open the body file: \(String(cString: strerror(errno)))")
                }
                var status = stat()
                guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
                    close(descriptor)
                    throw .fileError(path: path, reason: "the body file is not a regular file")
                }
                if status.st_size == 0 {
                    close(descriptor)
                } else {
                    stream.pieces.append(.file(descriptor: descriptor, path: path, size: Int64(status.st_size)))
                }
            }
        }
        stream.size = stream.pieces.reduce(0) { $0 + $1.size }
        return stream
    }

    /// Copies up to `buffer.count` of the next bytes into `buffer`: how many, 0 at the end.
    ///
    /// - Throws: ``Failure`` when a file cannot be read, or ends before the size it had when
    ///   the stream was opened.
    package func read(into buffer: UnsafeMutableRawBufferPointer) throws(Failure) -> Int {
        while pieceIndex < pieces.count, offset >= pieceStart + pieces[pieceIndex].size {
            pieceStart += pieces[pieceIndex].size
            pieceIndex += 1
        }
        guard pieceIndex < pieces.count, let base = buffer.baseAddress else { return 0 }
        let within = offset - pieceStart
        let wanted = Int(min(Int64(buffer.count), pieces[pieceIndex].size - within))
        switch pieces[pieceIndex] {
        case .bytes(let data):
            let start = data.startIndex + Int(within)
            data.copyBytes(to: base.assumingMemoryBound(to: UInt8.self), from: start..<(start + wanted))
            offset += Int64(wanted)
            return wanted
        case .file(let descriptor, let path, let size):
            while true {
                let count = pread(descriptor, base, wanted, off_t(within))
                if count > 0 {
                    offset += Int64(count)
                    return count
                }
                if count < 0, errno == EINTR { continue }
                throw Failure(
                    path: path,
                    reason: count < 0
                        ? "cannot read the body file: \(String(cString: strerror(errno)))"
                        : "the body file ended at \(within) bytes of the \(size) it had when the request started")
            }
        }
    }

    /// Moves to `position` in the body, for libcurl to send it again; false past the end.
    package func seek(to position: Int64) -> Bool {
        guard (0...size).contains(position) else { return false }
        offset = position
        pieceIndex = 0
        pieceStart = 0
        return true
    }

    /// The whole body, read into memory (for `StubTransport`, which hands a body to a test).
    package func readAll() throws(Failure) -> Data {
        _ = seek(to: 0)
        var data = Data(count: Int(size))
        var filled = 0
        var failure: Failure?
        data.withUnsafeMutableBytes { bytes in
            while filled < bytes.count {
                do throws(Failure) {
                    let count = try read(into: UnsafeMutableRawBufferPointer(rebasing: bytes[filled...]))
                    guard count > 0 else { break }
                    filled += count
                } catch {
                    failure = error
                    return
                }
            }
        }
        if let failure { throw failure }
        return data
    }
}
