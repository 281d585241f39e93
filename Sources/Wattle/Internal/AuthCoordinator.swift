import Logging
import WattleKeychain

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The token state of one session: the current token, its version, and the one refresh in flight.
actor AuthCoordinator {
    private let authenticator: Authenticator
    /// Sends without the authenticator, for the refresh call.
    private let bareSession: Session
    private let logger: Logger

    private var token: AuthToken?
    /// When `token` was obtained by this coordinator (nil for a token loaded from the store).
    private var obtainedAt: Date?
    private var loaded = false
    /// Bumped by every completed refresh, successful or not.
    private var version = 0
    /// The outcome of the refresh that produced `version`.
    private var lastOutcome: Result<AuthToken?, WattleError> = .success(nil)
    private var inFlight: Task<(AuthToken?, Int), any Error>?
    private var refreshTimes: [ContinuousClock.Instant] = []
    /// The token this coordinator last read from the store or saved to it: a store still
    /// holding it has not been written by anyone else since.
    private var lastStoreToken: AuthToken?
    /// Whether a step that reads or writes the store and sets the state it decides has the
    /// store's turn (see `takeStoreTurn`).
    private var storeTurnTaken = false
    /// The steps waiting for the store's turn, first come first served; each resumed with true
    /// when it gets the turn, with false when its task was cancelled first (sign-ins and
    /// sign-outs only).
    private var storeTurnQueue: [(waiter: UInt64, continuation: CheckedContinuation<Bool, Never>)] = []
    /// The number of the next waiter for the store's turn.
    private var nextStoreTurnWaiter: UInt64 = 0

    /// - Parameter storedToken: what the store holds when the caller has read it already
    ///   (`.some(nil)`: no token); nil to read it before the first request.
    init(authenticator: Authenticator, bareSession: Session, logger: Logger, storedToken: AuthToken?? = nil) {
        self.authenticator = authenticator
        self.bareSession = bareSession
        self.logger = logger
        if let storedToken {
            token = storedToken
            lastStoreToken = storedToken
            loaded = true
        }
    }

    /// The current token if it is newer than the one of `failedVersion` (for a session that
    /// cannot refresh: a request that failed with an older token retries with this one).
    func newerToken(than failedVersion: Int) -> AuthToken? {
        failedVersion < version ? token : nil
    }

    /// The token to send and its version, refreshing first when it has expired, and obtaining
    /// one first when there is none and the authenticator can (``Authenticator/obtain``).
    func current() async throws(WattleError) -> (token: AuthToken, version: Int)? {
        try await loadIfNeeded()
        guard let token else {
            guard authenticator.obtain != nil else { return nil }
            logger.debug("no token; obtaining one before sending")
            return try await renewed()
        }
        if token.isExpired(leeway: effectiveLeeway(for: token)), renewsBeforeExpiry(token) {
            logger.debug("access token expired or about to; renewing before sending")
            do {
                return try await renewed()
            } catch {
                // Renewed early, within the leeway: a renewal that failed (a 503, a timeout, the
                // cap) but left the token in place does not fail a request the server would still
                // take. A refused refresh token cleared it; a cancelled request stays cancelled.
                if case .cancelled = error { throw error }
                guard let kept = self.token, kept.isSameCredential(as: token), !kept.isExpired() else { throw error }
                logger.debug("renewing the token before it expires failed; sending it while it lasts: \(error)")
                return (kept, version)
            }
        }
        return (token, version)
    }

    /// The outcome of the renewal of the current version (started if none is running). A
    /// sign-out during it leaves no token: the request then goes without one, unless the
    /// session obtains its tokens, where it fails (sent without a token, it would only be
    /// refused).
    private func renewed() async throws(WattleError) -> (token: AuthToken, version: Int)? {
        let (fresh, freshVersion) = try await refresh(after: version)
        guard let fresh else {
            guard authenticator.obtain == nil else {
                throw .authenticationFailed(reason: "signed out while a token was being obtained or refreshed")
            }
            return nil
        }
        return (fresh, freshVersion)
    }

    /// How a token is renewed.
    private enum Renewal {
        /// With ``Authenticator/refresh``, from this token.
        case refresh(AuthToken, Authenticator.Refresh)
        /// With ``Authenticator/obtain``, from nothing.
        case obtain(Authenticator.Obtain)

        /// Whether the token is obtained afresh rather than refreshed.
        var obtains: Bool { if case .obtain = self { true } else { false } }
    }

    /// How `token` (nil: no token) is renewed, or nil when it cannot be. A token with a refresh
    /// token is refreshed when a refresh is configured; otherwise a token is obtained when that
    /// is configured; otherwise a configured refresh is given the token as it is (a custom
    /// refresh may not need a refresh token).
    private func renewal(for token: AuthToken?) -> Renewal? {
        if let token, let refresh = authenticator.refresh, token.refreshToken != nil || authenticator.obtain == nil {
            return .refresh(token, refresh)
        }
        return authenticator.obtain.map(Renewal.obtain)
    }

    /// Whether an expiring token is renewed before it is sent: when it is obtained afresh or
    /// has a refresh token. (A refresh given a token without a refresh token runs only when the
    /// server refuses the token: until then the token may still work.)
    private func renewsBeforeExpiry(_ token: AuthToken) -> Bool {
        switch renewal(for: token) {
        case .refresh(let token, _): token.refreshToken != nil
        case .obtain: true
        case nil: false
        }
    }

    /// A token newer than the one of `failedVersion`: the current one if it is already newer,
    /// else the result of the single refresh in flight (started if none is).
    func refresh(after failedVersion: Int) async throws(WattleError) -> (AuthToken?, Int) {
        if failedVersion < version {
            return (try lastOutcome.get() ?? token, version)
        }
        let task: Task<(AuthToken?, Int), any Error>
        if let inFlight {
            task = inFlight
        } else {
            task = try startRefresh()
        }
        do {
            return try await Self.waitCancellably(for: task)
        } catch let error as WattleError {
            throw error
        } catch {
            throw .authenticationFailed(reason: "the token refresh failed: \(error)")
        }
    }

    /// What a refresh gives one waiter. A waiter whose task is cancelled stops waiting at once
    /// with ``WattleError/cancelled`` (as a cancelled transfer does), while the refresh goes on
    /// for the others and its outcome is kept (`Task.value` alone would wait it out: up to the
    /// refresh's own timeout).
    private static func waitCancellably(for task: Task<(AuthToken?, Int), any Error>) async throws -> (AuthToken?, Int)
    {
        let waiter = FirstOutcome<(AuthToken?, Int)>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                guard waiter.install(continuation) else { return }
                Task.detached { waiter.finish(await task.result) }
            }
        } onCancel: {
            waiter.finish(.failure(WattleError.cancelled))
        }
    }

    /// The leeway, at most half the lifetime of a token obtained here, so short-lived tokens
    /// are not refreshed over and over.
    private func effectiveLeeway(for token: AuthToken) -> Duration {
        guard let obtainedAt, let expiresAt = token.expiresAt else { return authenticator.expiryLeeway }
        // At most 10^12 s: a lifetime of `1e19` ("never") must not trap the conversion.
        let half = Duration.milliseconds(Int(min(1e12, max(0, expiresAt.timeIntervalSince(obtainedAt))) * 500))
        return min(authenticator.expiryLeeway, half)
    }

    func signIn(_ newToken: AuthToken) async throws(WattleError) {
        // Cancelled while it waits (for a refresh's store step): nothing is changed, and the
        // turn is not waited for.
        guard await takeStoreTurnUnlessCancelled() else { throw .cancelled }
        defer { passStoreTurn() }
        // Cancelled just as it got the turn: nothing is changed either.
        if Task.isCancelled { throw .cancelled }
        do {
            let store = authenticator.store
            try await Self.offNetworkThread { try await store.save(newToken) }
        } catch {
            throw .authenticationFailed(reason: "cannot save the token: \(error)")
        }
        token = newToken
        lastStoreToken = newToken
        obtainedAt = Date()
        loaded = true
        version += 1
        lastOutcome = .success(newToken)
        // A refresh still running belongs to the old token: a request refused with the new one
        // starts its own instead of joining it (that one ends as overtaken).
        inFlight = nil
    }

    func signOut() async throws(WattleError) {
        guard await takeStoreTurnUnlessCancelled() else { throw .cancelled }
        defer { passStoreTurn() }
        if Task.isCancelled { throw .cancelled }
        do {
            let store = authenticator.store
            let current = token
            try await Self.offNetworkThread {
                // A client's store clears only the client's token: one a person signed in with
                // on this session is cleared by its credential, not left in the keychain.
                if let current, store is BoundTokenStore {
                    do {
                        _ = try await store.clear(ifStill: current)
                    } catch let error as KeychainError where error == .decode {
                        // An item that cannot be read: `clear()` below removes it.
                    }
                }
                try await store.clear()
            }
        } catch {
            throw .authenticationFailed(reason: "cannot clear the token: \(error)")
        }
        token = nil
        lastStoreToken = nil
        loaded = true
        version += 1
        lastOutcome = .success(nil)
        inFlight = nil
    }

    /// Waits for the store's turn. A sign-in, a sign-out and each of a refresh's store steps
    /// (its read before calling the server, its save, its clear of a refused token) take it for
    /// their store call and the state that call decides, so that the store ends holding what
    /// the state says: a refresh's save can no longer land after a sign-out's clear while the
    /// sign-out's state is set last. A refresh's call to the server is made without it.
    ///
    /// A store call made with the turn must not call back into this session (sign in or out, or
    /// send a request that needs a refresh): it would wait for the turn it holds.
    private func takeStoreTurn() async {
        guard storeTurnTaken else {
            storeTurnTaken = true
            return
        }
        // Resumed with true only: this wait is not cancellable. A refresh's steps must not be
        // cut short: once its refresh token is spent, its new token may be the only one that works.
        _ = await withCheckedContinuation { storeTurnQueue.append((nextWaiterNumber(), $0)) }
    }

    /// Waits for the store's turn as `takeStoreTurn` does, unless the task is cancelled first
    /// (sign-ins and sign-outs, which then change nothing).
    ///
    /// - Returns: true with the turn taken, to be passed on with `passStoreTurn`; false when
    ///   the task was cancelled before it came (the turn is not held).
    private func takeStoreTurnUnlessCancelled() async -> Bool {
        guard storeTurnTaken else {
            storeTurnTaken = true
            return true
        }
        if Task.isCancelled { return false }
        let waiter = nextWaiterNumber()
        return await withTaskCancellationHandler {
            // On this actor, with no suspension before the append: a cancellation that arrives
            // meanwhile runs `stopWaiting` after it.
            await withCheckedContinuation { storeTurnQueue.append((waiter, $0)) }
        } onCancel: {
            Task { await self.stopWaiting(waiter) }
        }
    }

    private func nextWaiterNumber() -> UInt64 {
        defer { nextStoreTurnWaiter &+= 1 }
        return nextStoreTurnWaiter
    }

    /// Ends a cancelled waiter's wait, unless the turn has come to it already (it then holds
    /// the turn, sees the cancellation and passes the turn on).
    private func stopWaiting(_ waiter: UInt64) {
        guard let index = storeTurnQueue.firstIndex(where: { $0.waiter == waiter }) else { return }
        storeTurnQueue.remove(at: index).continuation.resume(returning: false)
    }

    /// How many steps wait for the store's turn (for tests).
    var storeTurnWaiters: Int { storeTurnQueue.count }

    /// Passes the store's turn to the next step waiting for it, if any.
    private func passStoreTurn() {
        if storeTurnQueue.isEmpty {
            storeTurnTaken = false
        } else {
            storeTurnQueue.removeFirst().continuation.resume(returning: true)
        }
    }

    func isSignedIn() async throws(WattleError) -> Bool {
        try await loadIfNeeded()
        return token != nil
    }

    private func loadIfNeeded() async throws(WattleError) {
        guard !loaded else { return }
        // With the store's turn, as every store call: a sign-in saving meanwhile comes first.
        await takeStoreTurn()
        defer { passStoreTurn() }
        guard !loaded else { return }
        let stored: AuthToken?
        do {
            let store = authenticator.store
            stored = try await Self.offNetworkThread { try await store.load() }
        } catch let error as KeychainError where error == .decode && authenticator.obtain != nil {
            // A damaged item, or one that is not a token: a client obtains a token, saved over
            // it. (Without an obtain, a sign-in saves over it; a locked keychain is no reason.)
            logger.warning("the stored token cannot be read (\(error)); obtaining a new one in its place")
            stored = nil
        } catch {
            throw .authenticationFailed(reason: "cannot read the stored token: \(error)")
        }
        token = stored
        lastStoreToken = stored
        loaded = true
    }

    /// Runs a token store call on Swift's global executor. Stores may block (the keychain store
    /// opens SQLite and fsyncs its writes), and inside `Session.withNetworkThreadExecutor` this
    /// actor's code would otherwise run on the network thread, stalling every transfer. (The
    /// refresh's own task has no executor preference: for its store calls this is one hop more.)
    private static func offNetworkThread<Value: Sendable>(_ body: @Sendable () async throws -> Value) async throws
        -> Value
    {
        try await withTaskExecutorPreference(globalConcurrentExecutor, isolation: nil) { try await body() }
    }

    private func startRefresh() throws(WattleError) -> Task<(AuthToken?, Int), any Error> {
        let current = token
        guard let initial = renewal(for: current) else {
            guard current != nil else {
                throw .authenticationFailed(
                    reason: "not signed in: the server refused the request and there is no token to refresh")
            }
            throw .authenticationFailed(
                reason: "the server refused the token and no refresh is configured; sign in again")
        }
        let now = ContinuousClock.now
        refreshTimes.removeAll { now - $0 > authenticator.refreshWindow }
        // At the cap, the store is still read: a token another session saved costs no call to
        // the server, and is taken up.
        let capped: WattleError?
        if refreshTimes.count < authenticator.maximumRefreshesPerWindow {
            capped = nil
            refreshTimes.append(now)
        } else {
            let what = initial.obtains ? "obtain a token" : "refresh the token"
            capped = .authenticationFailed(
                reason:
                    "refused to \(what) more than \(authenticator.maximumRefreshesPerWindow) times in \(WattleError.format(authenticator.refreshWindow))"
            )
        }
        let session = bareSession
        let store = authenticator.store
        // What another holder's renewal may take: a refresh and an obtain after it, each up to
        // the total timeout (5 minutes without one), and the store's save.
        let leaseWait = (session.configuration.timeouts.total ?? .seconds(300)) * 2 + .seconds(30)
        let rejected = authenticator.isRefreshRejected
        let startVersion = version
        let task = Task { () async throws -> (AuthToken?, Int) in
            // Held from the store's read to the new token's save: another session or process
            // sharing the store waits, then reads this one's token (see TokenStore.refreshLease).
            let lease = try? await Self.offNetworkThread { await store.refreshLease(waitingAtMost: leaseWait) }
            defer { lease?.release() }
            // Runs on this actor: the state below changes before any waiter resumes.
            var renewal: Renewal
            switch await self.readStore(before: current, startVersion: startVersion, countedAt: now) {
            case .superseded: return self.superseded()
            case .adopted(let stored): return (stored, self.version)
            case .renew(let token):
                if let capped {
                    self.finish(.failure(capped))
                    throw capped
                }
                // A token the store gave may be renewed another way than the one it replaces.
                // (Always some way: a refresh or an obtain is configured, and either takes a token.)
                renewal = self.renewal(for: token) ?? initial
            }
            // Set once the server has refused a refresh token and an obtain replaces it.
            var refusedRefresh = false
            // Whether any call of this renewal reached a server (across the refresh and an
            // obtain after it): then a failure is counted, whatever its error says.
            let reach = RenewalReach()
            while true {
                let fresh: AuthToken
                do {
                    fresh = try await Self.$renewalReach.withValue(reach) {
                        switch renewal {
                        case .refresh(let base, let refresh): try await refresh(base, session)
                        case .obtain(let obtain): try await obtain(session)
                        }
                    }
                } catch {
                    // A sign-in or sign-out while the refresh ran decides the token, whatever it did.
                    guard self.version == startVersion else { return self.superseded() }
                    // A refresh the server refused as a request, not for its token (a 4xx such as
                    // `invalid_client` or `unsupported_grant_type`: a refresh made without the
                    // client's authentication, or a server that has no refresh grant), is not the
                    // end when tokens can be obtained: one is obtained in the same renewal, and the
                    // refresh token is kept.
                    if case .refresh = renewal, !refusedRefresh, let obtain = self.authenticator.obtain,
                        !rejected(error), Self.isClientError(error)
                    {
                        self.logger.debug("the refresh was refused as a request; obtaining a token instead")
                        reach.markReached()
                        renewal = .obtain(obtain)
                        continue
                    }
                    guard case .refresh(let base, _) = renewal, rejected(error) else {
                        // (A refused obtain refuses the client, not a token: nothing is cleared.)
                        let what =
                            refusedRefresh
                            ? "the server rejected the refresh token, and obtaining a new token"
                            : renewal.obtains ? "obtaining a token" : "the token refresh"
                        let failure = Self.refreshFailure(error, what: what, reached: reach.hasReached)
                        if Self.neverReachedServer(error), !reach.hasReached, !refusedRefresh {
                            // The window stops a refresh loop with a server that answers; during an
                            // outage it would lock refreshes out for its length once the network is back.
                            self.uncountRefresh(at: now)
                        }
                        self.finish(.failure(failure))
                        self.logger.debug("token renewal failed (version \(self.version))")
                        throw failure
                    }
                    switch try await self.refreshRejected(
                        base, store: store, startVersion: startVersion, cause: error as? WattleError)
                    {
                    case .settled(let outcome): return outcome
                    case .obtain(let obtain):
                        renewal = .obtain(obtain)
                        refusedRefresh = true
                        continue
                    }
                }
                return await self.saveRefreshed(
                    fresh, obtained: renewal.obtains, startVersion: startVersion, store: store)
            }
        }
        inFlight = task
        return task
    }

    /// What the store says before a refresh calls the server.
    private enum StoreReading {
        /// A sign-in or sign-out came first: it decides the token.
        case superseded
        /// Another process or session saved a newer token, unexpired: it is the current one now.
        case adopted(AuthToken)
        /// Renew this token: `current`, or a newer one from the store that has expired too (nil:
        /// there is none, one is obtained).
        case renew(AuthToken?)
    }

    /// Reads the store before a refresh calls the server. Another process or session sharing
    /// the store may have refreshed first: its token is the one to use (or, expired too, to
    /// refresh), as `current`'s refresh token may be spent. A server that rotates refresh
    /// tokens refuses a second use, and one that detects reuse (RFC 9700) revokes the new token
    /// too: both would be signed out.
    private func readStore(
        before current: AuthToken?, startVersion: Int, countedAt now: ContinuousClock.Instant
    ) async -> StoreReading {
        await takeStoreTurn()
        defer { passStoreTurn() }
        let store = authenticator.store
        let stored = try? await Self.offNetworkThread { try await store.load() }
        guard version == startVersion else {
            uncountRefresh(at: now)
            return .superseded
        }
        guard let stored, !(current.map(stored.isSameCredential) ?? false),
            !(lastStoreToken?.isSameCredential(as: stored) ?? false)
        else { return .renew(current) }
        lastStoreToken = stored
        guard !stored.isExpired(leeway: authenticator.expiryLeeway) else {
            // Expired too: it is the token now (the one whose refresh token is not spent), for
            // the refresh below and, should that fail, for the next one; a refused refresh
            // clears it.
            token = stored
            obtainedAt = nil
            return .renew(stored)
        }
        // No call to the server: not counted against the cap.
        uncountRefresh(at: now)
        finish(.success(stored))
        logger.debug("using the newer token another session stored (version \(version))")
        return .adopted(stored)
    }

    /// Saves a refreshed token and makes it the current one, unless a sign-in or sign-out came
    /// first (it wrote the store, and decides the token: nothing is saved).
    private func saveRefreshed(
        _ fresh: AuthToken, obtained: Bool, startVersion: Int, store: any TokenStore
    ) async -> (AuthToken?, Int) {
        await takeStoreTurn()
        defer { passStoreTurn() }
        // While this step has the turn, nothing else changes the version: sign-ins and
        // sign-outs wait for it, and a refresh of the current version is this one (older ones,
        // overtaken by a sign-in, can only end as overtaken).
        guard version == startVersion else { return superseded() }
        do {
            try await Self.offNetworkThread { try await store.save(fresh) }
            lastStoreToken = fresh
        } catch {
            // A refresh token is spent: the new token is the only one that works. Keep it for
            // this session's requests rather than fail them; the store keeps the old.
            logger.error("the new token is in use but could not be saved: \(error)")
        }
        finish(.success(fresh))
        logger.debug("token \(obtained ? "obtained" : "refreshed") (version \(version))")
        return (fresh, version)
    }

    /// Takes a refresh that never called the server off the cap's count.
    private func uncountRefresh(at time: ContinuousClock.Instant) {
        if let index = refreshTimes.firstIndex(of: time) { refreshTimes.remove(at: index) }
    }

    /// Whether a renewal call was refused as a request: 400, 401 or 403 (an OAuth error such as
    /// `invalid_client`), 404 or 405 (no such grant there). Not 408 or 429, which ask to wait,
    /// and an obtain at once would only be a second call.
    private static func isClientError(_ error: any Error) -> Bool {
        guard let error = error as? WattleError, case .httpStatus(let response) = error else { return false }
        return [400, 401, 403, 404, 405].contains(response.statusCode)
    }

    /// Ends a refresh overtaken by a sign-in or sign-out: its outcome is dropped, and the
    /// waiting requests take the token that the sign-in stored (none after a sign-out).
    private func superseded() -> (AuthToken?, Int) {
        // (`inFlight` was let go by the sign-in or sign-out, and may be a newer refresh now.)
        logger.debug("token refresh overtaken by a sign-in or sign-out (version \(version))")
        return (token, version)
    }

    /// The error for a refresh (or an obtain: `what` names it) that failed other than by a
    /// refused refresh token:
    /// ``WattleError/authenticationFailed(reason:cause:)``, whose reason carries the cause (the
    /// network error's own description, or the status the refresh call got).
    static func refreshFailure(_ error: any Error, what: String, reached: Bool = false) -> WattleError {
        if let error = error as? WattleError, case .authenticationFailed = error { return error }
        // The call's own failure, when it was made: a request refused before it was sent
        // (a bad URL or header) made none, unless a server had answered first (`reached`: a
        // redirect to a URL that cannot be followed).
        var cause = error as? WattleError
        switch cause {
        case .invalidURL?, .invalidHeader?, .invalidRequest?: if !reached { cause = nil }
        default: break
        }
        // An OAuth error code names the cause (a refused client secret is `invalid_client`);
        // it is a fixed word, never a secret.
        if let error = error as? WattleError, case .httpStatus(let response) = error,
            let code = Authenticator.oauthErrorCode(of: response),
            code.utf8.count <= 64, code.utf8.allSatisfy({ $0 == UInt8(ascii: "_") || (0x61...0x7A).contains($0) })
        {
            return .authenticationFailed(reason: "\(what) failed: \(error) (OAuth error \(code))", cause: cause)
        }
        return .authenticationFailed(reason: "\(what) failed: \(error)", cause: cause)
    }

    /// Whether a renewal's calls reached a server: set by the session when a call fails after a
    /// server answered (a redirect refused, or a later hop's failure), whose error alone would
    /// read as never sent.
    final class RenewalReach: Sendable {
        private let reached = PThreadLocked(false)
        func markReached() { reached.withLock { $0 = true } }
        var hasReached: Bool { reached.withLock { $0 } }
    }

    /// The running renewal's reach, for the session's calls it makes (nil outside a renewal).
    @TaskLocal static var renewalReach: RenewalReach?

    /// Whether a refresh failed before its request could reach the server: no address, no
    /// connection, a connect timeout, TLS, the proxy, or a request refused before it was sent. (Not a lost connection or a total
    /// timeout: the server may have taken, and rotated, the refresh token by then.)
    static func neverReachedServer(_ error: any Error) -> Bool {
        guard let error = error as? WattleError else { return false }
        switch error {
        case .cannotResolveHost, .cannotConnect, .proxyFailed, .untrustedCertificate, .pinMismatch,
            .timedOut(phase: .connect, _, _), .invalidURL, .invalidHeader, .invalidRequest:
            // (The last three: refused before anything was sent.)
            return true
        default:
            return false
        }
    }

    /// The server rejected the refresh token of `current`. Another process sharing the store
    /// may have refreshed with that same refresh token first (a server that rotates refresh
    /// tokens then rejects the second use) and saved its new token: a token in the store that
    /// is neither `current` nor the one this coordinator last read or saved is taken up, and
    /// the waiting requests retry with it. Otherwise the token is cleared, in the store only
    /// while it still holds `current`. With ``Authenticator/obtain`` the renewal goes on to
    /// obtain a token; without, the requests fail, and the next request reads the store again,
    /// so a token saved there later (a sign-in elsewhere) is used.
    private func refreshRejected(
        _ current: AuthToken, store: any TokenStore, startVersion: Int, cause: WattleError?
    ) async throws -> AfterRejection {
        await takeStoreTurn()
        defer { passStoreTurn() }
        let stored = try? await Self.offNetworkThread { try await store.load() }
        guard version == startVersion else { return .settled(superseded()) }
        if let stored, !stored.isSameCredential(as: current),
            !(lastStoreToken?.isSameCredential(as: stored) ?? false)
        {
            lastStoreToken = stored
            finish(.success(stored))
            logger.debug("refresh token rejected; using the token another process stored (version \(version))")
            return .settled((stored, version))
        }
        _ = try? await Self.offNetworkThread { try await store.clear(ifStill: current) }
        if let obtain = authenticator.obtain {
            // The session can get a token without one: the same renewal goes on to obtain one,
            // and the waiting requests are sent with it. (The version stays: a sign-in or
            // sign-out from here on still overtakes the renewal.)
            if let token, token.isSameCredential(as: current) { self.token = nil }
            if lastStoreToken?.isSameCredential(as: current) ?? false { lastStoreToken = nil }
            logger.debug("refresh token rejected; obtaining a new token")
            return .obtain(obtain)
        }
        let failure = WattleError.authenticationFailed(
            reason: "the server rejected the refresh token; sign in again", cause: cause)
        finish(.failure(failure), clearing: current)
        logger.debug("token refresh failed (version \(version))")
        throw failure
    }

    /// What follows a refused refresh token.
    private enum AfterRejection {
        /// The renewal's outcome: another process's token, or the state a sign-in or sign-out set.
        case settled((AuthToken?, Int))
        /// The token is gone: one is obtained instead, in the same renewal.
        case obtain(Authenticator.Obtain)
    }

    /// Ends the refresh in flight. A failure that `clearing` names forgets that token, unless a
    /// sign-in replaced it meanwhile, and has the next request read the store again.
    private func finish(_ outcome: Result<AuthToken, WattleError>, clearing cleared: AuthToken? = nil) {
        switch outcome {
        case .success(let fresh):
            token = fresh
            obtainedAt = Date()
        case .failure:
            if let cleared, let token, token.isSameCredential(as: cleared) {
                self.token = nil
                loaded = false
            }
        }
        version += 1
        lastOutcome = outcome.map { Optional($0) }
        inFlight = nil
    }
}
