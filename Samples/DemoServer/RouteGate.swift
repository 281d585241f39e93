import NIOConcurrencyHelpers

/// Holds answers until it is opened: for tests that must act while a request waits on the
/// server, which a fixed delay cannot promise on a loaded machine (the test's next step may
/// come after it).
final class RouteGate: Sendable {
    private struct State {
        var open = false
        var waiting: [@Sendable () -> Void] = []
    }

    // NIOLockedValueBox (pthread-based) rather than Mutex: ThreadSanitizer sees its handovers
    // between the event loops' threads and the test's.
    private let state = NIOLockedValueBox(State())

    /// Runs `answer` once the gate is open: at once when it is.
    func whenOpen(_ answer: @escaping @Sendable () -> Void) {
        let now = state.withLockedValue { state -> Bool in
            if !state.open { state.waiting.append(answer) }
            return state.open
        }
        if now { answer() }
    }

    /// Opens the gate: every held answer goes out, and later ones at once.
    func open() {
        let waiting = state.withLockedValue { state -> [@Sendable () -> Void] in
            state.open = true
            defer { state.waiting = [] }
            return state.waiting
        }
        for answer in waiting { answer() }
    }
}
