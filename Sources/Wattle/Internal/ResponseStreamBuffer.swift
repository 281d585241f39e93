import WattleKeychain

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The hand-over between the exchange behind ``Session/stream(_:)`` and the task reading its
/// body: the response's head once it is known, then the body's pieces in order, then its end.
///
/// The libcurl transport hands over a 2xx body as it arrives (``offer(_:)``), on the network
/// thread. Past ``pauseAbove`` bytes not yet read it is told to wait, and the transfer pauses
/// (libcurl's `CURL_WRITEFUNC_PAUSE`): over HTTP/1.1 TCP then holds the server back, so a slow
/// reader costs at most about that much memory. (Over HTTP/2, libcurl 7.88 shrinks the
/// stream's window without a WINDOW_UPDATE, so the server may send up to the 32 MiB it was
/// offered, which libcurl buffers; see ``ResponseStream``.) Reading down to
/// ``resumeBelow`` asks the network thread to go on (``resumer``).
///
/// Any other transport delivers no piece: the whole response then arrives at the end
/// (``finish(_:)``), and its body is read from it, in one piece.
final class ResponseStreamBuffer: Sendable {
    /// Bytes held for the reader past which the transfer pauses.
    static let pauseAbove = 1 << 20
    /// Bytes held below which a paused transfer goes on.
    static let resumeBelow = 256 << 10

    private typealias HeadWaiter = CheckedContinuation<Result<Response, WattleError>, Never>
    private typealias BodyWaiter = CheckedContinuation<Result<Data?, WattleError>, Never>

    private struct State {
        var head: Response?
        var headWaiter: HeadWaiter?
        var pieces: [Data] = []
        var firstPiece = 0
        var buffered = 0
        /// The most bytes ever held, for the tests of the pause.
        var peakBuffered = 0
        var bodyWaiter: BodyWaiter?
        /// The end of the exchange: nil while it runs, then `.success` or its error.
        var end: Result<Void, WattleError>?
        var paused = false
        var resumer: (@Sendable () -> Void)?
        var task: Task<Void, Never>?
        var cancelled = false
        /// Why the reading side stopped the exchange, when it was not a cancellation (a body
        /// past `collect(upTo:)`'s or `lines(maximumLength:)`'s limit): what reads after it get.
        var stoppedBy: WattleError?
        var redirectCount = 0
        /// The metrics of an exchange that ended whole.
        var finalMetrics: ResponseMetrics?
    }

    private let state = PThreadLocked(State())

    // MARK: The exchange's side

    /// How many redirects the session followed before the hop now under way (set by the
    /// session before each hop, read into the head's metrics).
    func setRedirectCount(_ count: Int) {
        state.withLock { $0.redirectCount = count }
    }

    /// The task running the exchange, cancelled when the reader goes away or is cancelled.
    func setTask(_ task: Task<Void, Never>) {
        let cancelNow = state.withLock { state -> Bool in
            state.task = task
            return state.cancelled
        }
        if cancelNow { task.cancel() }
    }

    /// How the transfer now streaming is told to go on after a pause; nil when it ends.
    func setResumer(_ resumer: (@Sendable () -> Void)?) {
        state.withLock { $0.resumer = resumer }
    }

    /// Whether the head has been handed to the reader: from then on the exchange cannot be
    /// retried, since the reader has seen part of it.
    var hasStarted: Bool { state.withLock { $0.head != nil } }

    /// The exchange's metrics once it has ended whole; nil before, and after a failure.
    var finalMetrics: ResponseMetrics? { state.withLock { $0.finalMetrics } }

    /// The head of a 2xx response, before its first piece.
    func receiveHead(_ response: Response) {
        let (waiter, head) = state.withLock { state -> (HeadWaiter?, Response?) in
            guard state.head == nil else { return (nil, nil) }
            var head = response
            head.metrics.redirectCount = state.redirectCount
            state.head = head
            defer { state.headWaiter = nil }
            return (state.headWaiter, head)
        }
        if let waiter, let head { waiter.resume(returning: .success(head)) }
    }

    /// Takes a piece of the body, or refuses it (false) while too much is held: the transfer
    /// then pauses, and the same bytes come again once it goes on.
    func offer(_ bytes: UnsafeRawBufferPointer) -> Bool {
        enum Outcome {
            case refused
            case held
            case handed(BodyWaiter, Data)
        }
        let outcome = state.withLock { state -> Outcome in
            if state.buffered >= Self.pauseAbove {
                state.paused = true
                return .refused
            }
            let piece = Data(bytes)
            if let waiter = state.bodyWaiter {
                // A reader is waiting, so nothing is held: the piece goes straight to it.
                state.bodyWaiter = nil
                return .handed(waiter, piece)
            }
            state.pieces.append(piece)
            state.buffered += piece.count
            state.peakBuffered = max(state.peakBuffered, state.buffered)
            return .held
        }
        switch outcome {
        case .refused: return false
        case .held: return true
        case .handed(let waiter, let piece):
            waiter.resume(returning: .success(piece))
            return true
        }
    }

    /// The end of the exchange. A response whose head was not handed over (from a transport
    /// that does not stream, a body-less 2xx, or a status the request accepts) becomes the
    /// head now, its body the one piece to read.
    func finish(_ result: Result<Response, WattleError>) {
        let (headWaiter, bodyWaiter, headResult, bodyResult) = state.withLock {
            state -> (HeadWaiter?, BodyWaiter?, Result<Response, WattleError>?, Result<Data?, WattleError>?) in
            state.resumer = nil
            state.task = nil
            switch result {
            case .success(var response):
                state.end = .success(())
                // (Not for a reader that was cancelled meanwhile: its stream was let go.)
                if !state.cancelled {
                    state.finalMetrics = response.metrics
                    state.finalMetrics?.redirectCount = max(response.metrics.redirectCount, state.redirectCount)
                }
                var headResult: Result<Response, WattleError>?
                if state.head == nil {
                    let body = response.data
                    response.data = Data()
                    response.metrics.redirectCount = max(response.metrics.redirectCount, state.redirectCount)
                    state.head = response
                    headResult = .success(response)
                    if !body.isEmpty {
                        state.pieces.append(body)
                        state.buffered += body.count
                    }
                }
                let headWaiter = state.headWaiter
                state.headWaiter = nil
                guard let bodyWaiter = state.bodyWaiter else { return (headWaiter, nil, headResult, nil) }
                state.bodyWaiter = nil
                return (headWaiter, bodyWaiter, headResult, .success(Self.take(&state)))
            case .failure(let error):
                state.end = .failure(error)
                let headWaiter = state.headWaiter
                state.headWaiter = nil
                let bodyWaiter = state.bodyWaiter
                state.bodyWaiter = nil
                return (headWaiter, bodyWaiter, .failure(error), .failure(error))
            }
        }
        if let headWaiter, let headResult { headWaiter.resume(returning: headResult) }
        if let bodyWaiter, let bodyResult { bodyWaiter.resume(returning: bodyResult) }
    }

    // MARK: The reader's side

    /// The head, once the exchange has one; its error if it ends without; ``WattleError/cancelled``
    /// at once for a cancelled reader.
    func head() async -> Result<Response, WattleError> {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state -> Result<Response, WattleError>? in
                    // A reader cancelled before it asked: the handler above ran first, with no
                    // waiter to answer, and the exchange may take long to end (a hook, a refresh).
                    if state.cancelled { return .failure(state.stoppedBy ?? .cancelled) }
                    if let head = state.head { return .success(head) }
                    if case .failure(let error) = state.end { return .failure(error) }
                    state.headWaiter = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            cancel()
        }
    }

    /// The next piece of the body, nil at its end, or the error that ended the exchange. A
    /// cancelled reader gets ``WattleError/cancelled`` at once, not what is still held.
    func next() async -> Result<Data?, WattleError> {
        if Task.isCancelled {
            cancel()
            return .failure(.cancelled)
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                var resumer: (@Sendable () -> Void)?
                let ready = state.withLock { state -> Result<Data?, WattleError>? in
                    if state.cancelled { return .failure(state.stoppedBy ?? .cancelled) }
                    if state.bodyWaiter != nil {
                        return .failure(
                            .invalidRequest(
                                reason:
                                    "a ResponseStream's body is already being read by another task: read it once, from one task"
                            ))
                    }
                    if state.firstPiece < state.pieces.count {
                        let piece = Self.take(&state)
                        if state.paused, state.buffered <= Self.resumeBelow {
                            state.paused = false
                            resumer = state.resumer
                        }
                        return .success(piece)
                    }
                    switch state.end {
                    case .success: return .success(nil)
                    case .failure(let error): return .failure(error)
                    case nil:
                        state.bodyWaiter = continuation
                        return nil
                    }
                }
                resumer?()
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            cancel()
        }
    }

    /// Stops the exchange: the reader gave up its body, past a limit. Reads after it get
    /// `error`, not ``WattleError/cancelled``.
    func stop(with error: WattleError) {
        state.withLock { state in
            if !state.cancelled { state.stoppedBy = error }
        }
        cancel()
    }

    /// Stops the exchange: the reader was cancelled or went away. Its error (``WattleError/cancelled``)
    /// then ends the stream.
    ///
    /// - Parameter ifRunning: do nothing when the exchange has ended (``ResponseStream/cancel()``):
    ///   what arrived is read to its end, and an error that ended it stays the stream's error.
    func cancel(ifRunning: Bool = false) {
        let (task, headWaiter, bodyWaiter) = state.withLock { state -> (Task<Void, Never>?, HeadWaiter?, BodyWaiter?) in
            if ifRunning, state.end != nil { return (nil, nil, nil) }
            state.cancelled = true
            defer {
                state.headWaiter = nil
                state.bodyWaiter = nil
            }
            return (state.task, state.headWaiter, state.bodyWaiter)
        }
        task?.cancel()
        // A waiting reader is answered now, not when the transport has stopped.
        headWaiter?.resume(returning: .failure(.cancelled))
        bodyWaiter?.resume(returning: .failure(.cancelled))
    }

    /// The most bytes held at once so far.
    var peakBuffered: Int { state.withLock { $0.peakBuffered } }

    /// The slots of held and read pieces (for the test of a reader that stays behind).
    var pieceSlots: Int { state.withLock { $0.pieces.count } }

    /// Whether a reader waits for the next piece (for the tests of a second reader).
    var hasWaitingReader: Bool { state.withLock { $0.bodyWaiter != nil } }

    /// The first held piece (there is one), taken off.
    private static func take(_ state: inout State) -> Data? {
        guard state.firstPiece < state.pieces.count else { return nil }
        let piece = state.pieces[state.firstPiece]
        state.pieces[state.firstPiece] = Data()
        state.firstPiece += 1
        state.buffered -= piece.count
        if state.firstPiece == state.pieces.count {
            state.pieces.removeAll(keepingCapacity: true)
            state.firstPiece = 0
        } else if state.firstPiece >= 64, state.firstPiece * 2 >= state.pieces.count {
            // A reader that stays behind never empties the array: drop the slots it has read
            // once they are half of it (amortized O(1) a piece), or they would grow by one
            // for every piece the stream ever carried.
            state.pieces.removeFirst(state.firstPiece)
            state.firstPiece = 0
        }
        return piece
    }
}
