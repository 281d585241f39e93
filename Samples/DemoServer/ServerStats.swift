import Synchronization

/// Request counters of a ``DemoServer``, safe to read from any thread.
public final class ServerStats: Sendable {
    private let counts = Mutex<[String: Int]>([:])
    private let connections = Atomic<Int>(0)

    /// Creates empty counters.
    public init() {}

    /// How many requests arrived for `path` (without the query).
    public func hits(_ path: String) -> Int { counts.withLock { $0[path] ?? 0 } }

    /// How many TCP connections were accepted.
    public var connectionCount: Int { connections.load(ordering: .relaxed) }

    func record(path: String) { counts.withLock { $0[path, default: 0] += 1 } }
    func recordConnection() { connections.add(1, ordering: .relaxed) }
}
