import NIOConcurrencyHelpers
import Synchronization

/// Request counters of a ``DemoServer``, safe to read from any thread.
public final class ServerStats: Sendable {
    // NIOLockedValueBox (pthread-based) rather than Mutex: ThreadSanitizer sees its handovers.
    private let counts = NIOLockedValueBox<[String: Int]>([:])
    private let connections = Atomic<Int>(0)

    /// Creates empty counters.
    public init() {}

    /// How many requests arrived for `path` (without the query).
    public func hits(_ path: String) -> Int { counts.withLockedValue { $0[path] ?? 0 } }

    /// How many requests arrived in all.
    public var totalRequests: Int { counts.withLockedValue { $0.values.reduce(0, +) } }

    /// How many requests arrived for paths starting with `prefix`.
    public func hits(prefix: String) -> Int {
        counts.withLockedValue { $0.filter { $0.key.hasPrefix(prefix) }.values.reduce(0, +) }
    }

    /// How many TCP connections were accepted.
    public var connectionCount: Int { connections.load(ordering: .relaxed) }

    /// Counts a request and returns how many arrived for `path`, this one included.
    @discardableResult
    func record(path: String) -> Int {
        counts.withLockedValue { counts in
            counts[path, default: 0] += 1
            return counts[path]!
        }
    }
    func recordConnection() { connections.add(1, ordering: .relaxed) }
}
