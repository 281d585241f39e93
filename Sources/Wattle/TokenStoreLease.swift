import WattleKeychain

/// A lease on a stored token, which a refresh holds from its read of the store to the save of
/// its new token (``TokenStore/refreshLease(waitingAtMost:)``): another session or process that shares the
/// store waits for it, then reads the token the first one saved instead of sending the same
/// refresh token again.
///
/// Given back by ``release()``, or when the lease is released.
public final class TokenStoreLease: Sendable {
    private let onRelease: PThreadLocked<(@Sendable () -> Void)?>

    /// A lease that `release` gives back (called once, on the first ``release()``).
    public init(release: @escaping @Sendable () -> Void) {
        onRelease = PThreadLocked(release)
    }

    /// Gives the lease back; later calls do nothing.
    public func release() {
        let release = onRelease.withLock { release -> (@Sendable () -> Void)? in
            defer { release = nil }
            return release
        }
        release?()
    }

    deinit { release() }
}
