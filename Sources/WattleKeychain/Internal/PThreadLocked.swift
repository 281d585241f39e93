#if canImport(Glibc)
import Glibc
#endif

/// A value guarded by a pthread mutex.
///
/// Used instead of `Synchronization.Mutex` where threads contend: on Linux that Mutex hands
/// over through a futex in an uninstrumented library, so ThreadSanitizer cannot see the
/// happens-before edge and reports false races; pthread mutexes it intercepts. Shared with the
/// Wattle module (`package` access).
package final class PThreadLocked<Value>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    /// The value lives behind a pointer, not in a stored `var`: the mutex already makes each
    /// access exclusive, and a class's `var` passed `inout` costs a dynamic exclusivity check
    /// (`swift_beginAccess`, ~80 instructions with its thread-local lookup) on every lock taken;
    /// the engine takes several per request.
    private let value: UnsafeMutablePointer<Value>

    package init(_ value: Value) {
        self.value = .allocate(capacity: 1)
        self.value.initialize(to: value)
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
        value.deinitialize(count: 1)
        value.deallocate()
    }

    /// Runs `body` with the value, holding the lock.
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value.pointee)
    }
}
