import WattleKeychain

/// One waiter's continuation, resumed once: by the first of the outcomes racing for it (a token
/// refresh's result or the waiter's cancellation, see `AuthCoordinator`). An outcome that comes
/// before the continuation is installed resumes it as soon as it is.
final class FirstOutcome<Value: Sendable>: Sendable {
    private enum Slot {
        case empty
        case waiting(CheckedContinuation<Value, any Error>)
        case early(Result<Value, any Error>)
        case done
    }

    private let slot = PThreadLocked(Slot.empty)

    /// Installs the continuation; false when an outcome came first (it is then resumed).
    @discardableResult
    func install(_ continuation: CheckedContinuation<Value, any Error>) -> Bool {
        let early: Result<Value, any Error>? = slot.withLock { slot in
            if case .early(let outcome) = slot {
                slot = .done
                return outcome
            }
            slot = .waiting(continuation)
            return nil
        }
        guard let early else { return true }
        continuation.resume(with: early)
        return false
    }

    /// Resumes the waiter with `outcome`, unless another outcome came first.
    func finish(_ outcome: Result<Value, any Error>) {
        let continuation: CheckedContinuation<Value, any Error>? = slot.withLock { slot in
            switch slot {
            case .empty:
                slot = .early(outcome)
                return nil
            case .waiting(let continuation):
                slot = .done
                return continuation
            case .early, .done:
                return nil
            }
        }
        continuation?.resume(with: outcome)
    }
}
