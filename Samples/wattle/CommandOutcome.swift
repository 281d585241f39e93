import Dispatch

/// The outcome of the command's task, handed to the main thread that waits for it.
///
/// The main thread blocks in `wait()` (it serves no executor, so nothing is left waiting for
/// it) until the task calls `finish(with:)`, once.
final class CommandOutcome: @unchecked Sendable {
    // Written once by `finish(with:)` before the signal, read by `wait()` after it: the
    // semaphore orders the two.
    private var failure: (any Error)?
    private let done = DispatchSemaphore(value: 0)

    /// Records the command's error (nil for success) and wakes the waiting thread.
    func finish(with failure: (any Error)?) {
        self.failure = failure
        done.signal()
    }

    /// Blocks until `finish(with:)` has been called, and returns its error.
    func wait() -> (any Error)? {
        done.wait()
        return failure
    }
}
