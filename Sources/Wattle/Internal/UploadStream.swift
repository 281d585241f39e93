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
/// Every file's size is taken (with `stat`) when the stream is made, that is when an attempt
/// starts: the `Content-Length` is known before anything is sent, and a file that cannot be
/// sent (missing, not a regular file) fails the attempt unsent. The files are opened only once
/// a connection is ready for the request (``openFiles()``, from libcurl's pre-request
/// callback, which can still stop it unsent): a transfer queued for a connection holds no
/// descriptor, so thousands of uploads queued on one session do not run the process out of
/// them. An opened file must be the one whose size was taken. A file is read with `pread` at
/// the stream's position, so a rewind (libcurl sending the body again on a new connection)
/// needs no file position moved, and a file that ends before its size fails the transfer
/// instead of sending too little.
///
/// Owned by one transfer on the engine thread (or by one `StubTransport` call); the files are
/// closed when it is released.
package final class UploadStream {
    private enum Piece {
        case bytes(Data)
        case file(path: String, size: Int64, device: UInt64, inode: UInt64)

        var size: Int64 {
            switch self {
            case .bytes(let data): Int64(data.count)
            case .file(_, let size, _, _): size
            }
        }
    }

    /// Why a read failed: the file and what happened to it.
    package struct Failure: Error {
        package var path: String
        package var reason: String

        /// As the request's error: ``WattleError/fileError(path:reason:)``.
        package var error: WattleError { .fileError(path: path, reason: reason) }
    }

    private var pieces: [Piece] = []
    /// The open descriptor of each file piece, by its index, once ``openFiles()`` has run.
    private var descriptors: [Int: Int32] = [:]
    /// The body's size when the stream was opened: the `Content-Length` sent.
    package private(set) var size: Int64 = 0
    /// Where the next read starts, in the whole body; and the piece it falls in, with that
    /// piece's first byte's place in the body.
    private var offset: Int64 = 0
    private var pieceIndex = 0
    private var pieceStart: Int64 = 0

    private init() {}

    deinit {
        for descriptor in descriptors.values { close(descriptor) }
    }

    /// Opens the request's streamed body, if it has one: nil for a body in memory or none.
    package static func opening(bodyOf request: TransportRequest) throws(WattleError) -> UploadStream? {
        if let file = request.bodyFile { return try opening([.file(file)]) }
        guard !request.bodySegments.isEmpty else { return nil }
        return try opening(request.bodySegments)
    }

    /// Takes the size of every file among the segments; the error for the first that cannot be
    /// sent. Nothing is opened yet: a FIFO is refused by its type, without waiting for a writer.
    package static func opening(_ segments: [RequestBody.Segment]) throws(WattleError) -> UploadStream {
        let stream = UploadStream()
        stream.pieces.reserveCapacity(segments.count)
        for segment in segments {
            switch segment {
            case .data(let data):
                if !data.isEmpty { stream.pieces.append(.bytes(data)) }
            case .file(let url):
                let path = url.path
                var status = stat()
                guard stat(path, &status) == 0 else {
                    throw .fileError(
                        path: path, reason: "cannot open the body file: \(String(cString: strerror(errno)))")
                }
                guard status.st_mode & S_IFMT == S_IFREG else {
                    throw .fileError(path: path, reason: "the body file is not a regular file")
                }
                if status.st_size > 0 {
                    stream.pieces.append(
                        .file(
                            path: path, size: Int64(status.st_size), device: UInt64(status.st_dev),
                            inode: UInt64(status.st_ino)))
                }
            }
        }
        stream.size = stream.pieces.reduce(0) { $0 + $1.size }
        return stream
    }

    /// Opens the files not open yet, each checked to be the file whose size was taken.
    ///
    /// `O_NONBLOCK`: opening a FIFO put in a file's place must not wait for a writer on the
    /// engine thread (it is then refused, not being the file); it changes nothing for a
    /// regular file, whose reads the engine thread then makes itself.
    ///
    /// - Throws: ``Failure`` for the first file that cannot be opened or was replaced (the
    ///   files opened stay open, closed with the stream).
    package func openFiles() throws(Failure) {
        for (index, piece) in pieces.enumerated() {
            guard case .file(let path, _, let device, let inode) = piece, descriptors[index] == nil else { continue }
            let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
            guard descriptor >= 0 else {
                throw Failure(path: path, reason: "cannot open the body file: \(String(cString: strerror(errno)))")
            }
            var status = stat()
            guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG,
                UInt64(status.st_dev) == device, UInt64(status.st_ino) == inode
            else {
                close(descriptor)
                throw Failure(path: path, reason: "the body file was replaced by another after its size was taken")
            }
            descriptors[index] = descriptor
        }
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
        case .file(let path, let size, _, _):
            if descriptors[pieceIndex] == nil { try openFiles() }
            guard let descriptor = descriptors[pieceIndex] else { return 0 }
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
