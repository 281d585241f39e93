#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// A response whose body is read as it arrives (``Session/stream(_:)``): server-sent events,
/// JSON lines, a model's tokens, a body too large to hold.
///
/// ```swift
/// let stream = try await session.stream(Request("events", headers: ["Accept": "text/event-stream"]))
/// print(stream.response.statusCode, stream.response.headers["Content-Type"] ?? "")
/// for try await line in stream.lines where line.hasPrefix("data: ") {
///     print(line.dropFirst(6))
/// }
/// ```
///
/// The body's pieces come in order, as the network delivers them, each a `Data` of any size
/// (with the libcurl transport, usually up to 16 KB). A reader that falls behind holds back the
/// server: past 1 MB not yet read, the transfer pauses until the reader catches up, so memory
/// stays bounded whatever the body's size and however slow the reader. Over HTTP/1.1, TCP then
/// holds the server back at about that. Over HTTP/2, libcurl 7.88 pauses a stream without
/// telling the server (curl issue 4939): the server may go on sending up to the 32 MiB window
/// libcurl offered each stream, which libcurl keeps in memory, and other requests on the same
/// connection arrive behind those bytes. For a large body read slowly over HTTP/2, give it a
/// session of its own, or set ``Configuration/httpVersion`` to `.http1_1`.
///
/// Read it once, from one task. Cancelling that task, or letting go of the stream (and its
/// iterators) before the end, stops the transfer; a transfer that fails part-way ends the
/// iteration with its ``WattleError``, after the pieces that did arrive.
public struct ResponseStream: AsyncSequence, Sendable {
    /// A piece of the body.
    public typealias Element = Data
    /// What ends an iteration early.
    public typealias Failure = WattleError

    /// The status, headers, URL and method, with an empty ``Response/data``; its metrics are
    /// those known when the head arrived (``ResponseMetrics/total`` is the time to the head;
    /// ``finalMetrics`` has the whole exchange's).
    public let response: Response

    /// The exchange's metrics once its body has arrived whole, as ``Response/metrics`` are for
    /// ``Session/send(_:)``: ``ResponseMetrics/total`` is the time to the last byte and
    /// ``ResponseMetrics/bytesReceived`` counts the whole body. Nil until then (read it after
    /// the iteration has ended), and after a transfer that failed or was let go.
    ///
    /// ```swift
    /// for try await piece in stream { consume(piece) }
    /// if let metrics = stream.finalMetrics { print(metrics.bytesReceived, metrics.total) }
    /// ```
    public var finalMetrics: ResponseMetrics? { reader.buffer.finalMetrics }

    private let reader: Reader

    init(response: Response, buffer: ResponseStreamBuffer) {
        self.response = response
        reader = Reader(buffer: buffer)
    }

    /// The most body bytes held for the reader at once so far (for the tests of the pause).
    var peakBuffered: Int { reader.buffer.peakBuffered }
    /// Whether a reader waits for the next piece (for the tests of a second reader).
    var hasWaitingReader: Bool { reader.buffer.hasWaitingReader }

    /// Returns an iterator over the body's pieces.
    public func makeAsyncIterator() -> Iterator {
        Iterator(reader: reader)
    }

    /// Reads the body's pieces in order.
    public struct Iterator: AsyncIteratorProtocol, Sendable {
        /// A piece of the body.
        public typealias Element = Data
        /// What ends the iteration early.
        public typealias Failure = WattleError

        private let reader: Reader
        /// Whether this iterator has ended (at the end of the body, or by throwing): it then
        /// returns nil, as `AsyncIteratorProtocol` asks, so a loop that catches an error and
        /// reads on ends instead of getting the error again for ever.
        private var finished = false

        init(reader: Reader) {
            self.reader = reader
        }

        /// The next piece, or nil at the end of the body (and after an error was thrown).
        public mutating func next() async throws(WattleError) -> Data? {
            guard !finished else { return nil }
            let piece: Data?
            do {
                piece = try await reader.buffer.next().get()
            } catch {
                finished = true
                throw error
            }
            if piece == nil { finished = true }
            return piece
        }

        /// The next piece, or nil at the end of the body (and after an error was thrown).
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(WattleError) -> Data? {
            try await next()
        }

        /// Stops the exchange (its body is given up: a limit was passed), so that its
        /// connection is freed now rather than when the stream is released; later reads get
        /// `error`.
        func stop(with error: WattleError) { reader.buffer.stop(with: error) }
    }

    /// Stops the exchange now: the rest of the body is given up and its connection freed,
    /// where otherwise a stream no longer read holds them, paused, until it is released (a
    /// stream kept in a property, or a `break` out of a loop over it). A read after it, or
    /// one waiting, ends with ``WattleError/cancelled``. Nothing happens once the exchange
    /// has ended: what arrived is still read to its end (with `StubTransport`, whose exchanges
    /// have ended when ``Session/stream(_:)`` returns, always), and an error that ended it
    /// stays the one reads get.
    ///
    /// ```swift
    /// for try await line in stream.lines where line == "event: done" { break }
    /// stream.cancel()
    /// ```
    public func cancel() { reader.buffer.cancel(ifRunning: true) }

    /// The body read whole, for a stream that turned out small (a status the request accepts,
    /// an answer with no events).
    ///
    /// - Throws: ``WattleError/responseTooLarge(limit:url:)`` past `limit` bytes (the exchange
    ///   is then stopped, its connection freed, and a later read of the stream gets the same
    ///   error), and the error that ended the transfer.
    public func collect(upTo limit: Int) async throws(WattleError) -> Data {
        var data = Data()
        var pieces = makeAsyncIterator()
        while let piece = try await pieces.next() {
            guard data.count + piece.count <= limit else {
                let error = WattleError.responseTooLarge(limit: limit, url: response.url)
                pieces.stop(with: error)
                throw error
            }
            data.append(piece)
        }
        return data
    }

    /// The body as lines of text, split at each line feed (a carriage return before it is
    /// dropped), decoded as UTF-8 (an invalid sequence becomes U+FFFD). A last line without a
    /// line feed is the last element. For server-sent events and JSON lines.
    ///
    /// A line longer than 8 MB ends the iteration with
    /// ``WattleError/responseTooLarge(limit:url:)``: see ``lines(maximumLength:)``.
    public var lines: Lines { Lines(pieces: self, maximumLength: 8 * 1024 * 1024) }

    /// The body as lines of text (see ``lines``), none longer than `maximumLength` bytes: a
    /// longer one ends the iteration with ``WattleError/responseTooLarge(limit:url:)`` and
    /// stops the exchange, so that a body with no line feed cannot fill memory.
    public func lines(maximumLength: Int) -> Lines { Lines(pieces: self, maximumLength: maximumLength) }

    /// The lines of a ``ResponseStream``'s body.
    public struct Lines: AsyncSequence, Sendable {
        /// A line, without its line ending.
        public typealias Element = String
        /// What ends an iteration early.
        public typealias Failure = WattleError

        let pieces: ResponseStream
        let maximumLength: Int

        /// Returns an iterator over the lines.
        public func makeAsyncIterator() -> Iterator {
            Iterator(pieces: pieces.makeAsyncIterator(), maximumLength: maximumLength, url: pieces.response.url)
        }

        /// Reads the lines in order.
        public struct Iterator: AsyncIteratorProtocol, Sendable {
            /// A line, without its line ending.
            public typealias Element = String
            /// What ends the iteration early.
            public typealias Failure = WattleError

            private var pieces: ResponseStream.Iterator
            private let maximumLength: Int
            private let url: URL
            /// Bytes read and not yet returned, from `start`; those from `start` to `scanned`
            /// (never before `start`) hold no line feed: they were searched already.
            private var pending: [UInt8] = []
            private var start = 0
            private var scanned = 0
            private var ended = false
            /// Whether this iterator threw: it then returns nil (see ``ResponseStream/Iterator``).
            private var failed = false

            init(pieces: ResponseStream.Iterator, maximumLength: Int, url: URL) {
                self.pieces = pieces
                self.maximumLength = maximumLength
                self.url = url
            }

            /// The next line, or nil at the end of the body (and after an error was thrown).
            public mutating func next() async throws(WattleError) -> String? {
                guard !failed else { return nil }
                do {
                    return try await nextLine()
                } catch {
                    failed = true
                    throw error
                }
            }

            private mutating func nextLine() async throws(WattleError) -> String? {
                while true {
                    if let newline = pending[scanned...].firstIndex(of: UInt8(ascii: "\n")) {
                        var end = newline
                        if end > start, pending[end - 1] == UInt8(ascii: "\r") { end -= 1 }
                        guard end - start <= maximumLength else { throw tooLong() }
                        let line = String(decoding: pending[start..<end], as: UTF8.self)
                        start = newline + 1
                        scanned = start
                        return line
                    }
                    scanned = pending.count
                    // (A line ending may still follow: its carriage return is not counted.)
                    // (Written so that `maximumLength: .max`, no limit, cannot overflow.)
                    if pending.count - start - 1 > maximumLength { throw tooLong() }
                    if ended {
                        guard start < pending.count else { return nil }
                        guard pending.count - start <= maximumLength else { throw tooLong() }
                        let line = String(decoding: pending[start...], as: UTF8.self)
                        start = pending.count
                        return line
                    }
                    // Keep only what is not yet a line, then read on.
                    if start > 0 {
                        pending.removeFirst(start)
                        scanned -= start
                        start = 0
                    }
                    if let piece = try await pieces.next() {
                        pending.append(contentsOf: piece)
                    } else {
                        ended = true
                    }
                }
            }

            /// The next line, or nil at the end of the body (and after an error was thrown).
            public mutating func next(isolation actor: isolated (any Actor)?) async throws(WattleError) -> String? {
                try await next()
            }

            /// A line past the limit: the exchange is stopped, and this is the error.
            private func tooLong() -> WattleError {
                let error = WattleError.responseTooLarge(limit: maximumLength, url: url)
                pieces.stop(with: error)
                return error
            }
        }
    }

    /// The reading side's hold on the exchange: when the stream and every iterator are gone,
    /// the exchange is stopped (a no-op once it has ended).
    final class Reader: Sendable {
        let buffer: ResponseStreamBuffer

        init(buffer: ResponseStreamBuffer) {
            self.buffer = buffer
        }

        deinit { buffer.cancel() }
    }
}
