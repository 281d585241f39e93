#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The outcome of the command's task, handed to the main thread that waits for it.
///
/// A POSIX semaphore: the main thread blocks in `wait()` (it serves no executor, so nothing
/// is left waiting for it) until the task calls `finish(with:)` once.
final class CommandOutcome: @unchecked Sendable {
    // Written once by `finish(with:)` before `sem_post`, read by `wait()` after `sem_wait`:
    // the semaphore orders the two.
    private var failure: (any Error)?
    private let semaphore = UnsafeMutablePointer<sem_t>.allocate(capacity: 1)

    init() {
        sem_init(semaphore, 0, 0)
    }

    deinit {
        sem_destroy(semaphore)
        semaphore.deallocate()
    }

    /// Records the command's error (nil for success) and wakes the waiting thread.
    func finish(with failure: (any Error)?) {
        self.failure = failure
        sem_post(semaphore)
    }

    /// Blocks until `finish(with:)` has been called, and returns its error.
    func wait() -> (any Error)? {
        while sem_wait(semaphore) != 0 {}
        return failure
    }
}
