import CCurl
import Logging
import WattleKeychain

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One libcurl multi handle and the one thread that drives it.
///
/// Requests arrive from any task through `start` and `cancel`, which only append to an inbox
/// and wake the thread (`curl_multi_wakeup`). Everything else, every curl call included, runs
/// on the engine thread, so no blocking curl work touches Swift's cooperative pool.
///
/// The engine is also a `TaskExecutor` (``Session/withNetworkThreadExecutor(isolation:_:)``):
/// jobs of tasks that prefer it arrive through the same inbox and run on the engine thread
/// between two rounds of curl work. A request from such a task is then started, completed and
/// resumed on this one thread, with no wake-up of another thread in between.
final class CurlEngine: TaskExecutor, @unchecked Sendable {
    /// Per-engine values every transfer applies.
    struct Settings {
        var share: UnsafeMutableRawPointer
        var httpVersion: Int
        var multiplexing: Bool
        /// `CURLOPT_PROXY`: nil leaves libcurl to read the environment, "" means no proxy.
        var proxy: String?
        /// The configured proxy (``Configuration/Proxy/url(_:)``), for `CURLOPT_NOPROXY` and
        /// for errors that name it.
        var proxyEndpoint: ProxyEndpoint?
        /// The session cannot send: every transfer fails with this, unsent (a configured proxy
        /// URL that is unusable, or host overrides libcurl could not store).
        var setupError: WattleError?
        var resolveList: UnsafeMutablePointer<curl_slist>?
        /// Each plain-`http` transfer opens its own connection and closes it after (HTTP/2 by
        /// prior knowledge on a libcurl that cannot reuse such connections, see
        /// ``CurlGlobal/reusesCleartextPriorKnowledgeConnections``).
        var freshCleartextConnections = false
        /// Each handle runs libcurl's cookie engine on the share's jar (any ``Configuration/CookieStorage`` but `none`).
        var keepsCookies = false
    }

    private enum Command {
        case start(CurlTransfer)
        case cancel(CurlTransfer)
        /// A streamed transfer paused for its reader may go on.
        case resume(CurlTransfer)
        /// A job of a task that prefers this executor.
        case run(UnownedJob)
        /// Work with an easy handle of the engine, in no transfer (nil once the engine stops).
        case withHandle(@Sendable (EasyHandle?) -> Void)
    }

    private struct Inbox {
        var commands: [Command] = []
        var stopping = false
        /// The thread has finished: jobs go to the global executor instead.
        var stopped = false
        /// Whether the engine thread is (about to be) blocked in `curl_multi_poll`; only then
        /// does a new command need `curl_multi_wakeup` (a syscall) to be seen.
        var sleeping = false
    }

    private let multi: UnsafeMutableRawPointer
    private let settings: Settings
    private let inbox = PThreadLocked(Inbox())
    // Unchecked exclusivity (as `CurlTransfer`'s buffers): engine-thread state whose accesses
    // are each one standard-library call, so none can overlap another; the dynamic check cost
    // ~115 instructions on each, several per request.
    /// Engine thread only: the transfers in the multi handle, each at its `activeIndex`. A
    /// finished handle names its transfer through `CURLOPT_PRIVATE`, so no lookup by handle is
    /// needed: a list, not a dictionary keyed by the handle (whose hashing ran twice a request,
    /// and whose first use scanned the binary's conformances for the pointer's `Hashable`).
    @exclusivity(unchecked) private var active: [CurlTransfer] = []
    /// Engine thread only: easy handles kept for reuse, with the session's fixed options set.
    @exclusivity(unchecked) private var idleHandles: [EasyHandle] = []
    private let maximumIdleHandles: Int

    init(configuration: Configuration) {
        precondition(CurlGlobal.initialized, "curl_global_init failed")
        multi = curl_multi_init()
        let share = curl_share_init()!
        _ = wattle_curl_share_setopt_long(share, CURLSHOPT_SHARE, Int(CURL_LOCK_DATA_SSL_SESSION.rawValue))
        _ = wattle_curl_share_setopt_long(share, CURLSHOPT_SHARE, Int(CURL_LOCK_DATA_DNS.rawValue))
        // The session's cookie jar: every handle of the engine (all on its one thread) uses it.
        let keepsCookies = configuration.cookies.keepsCookies
        if keepsCookies {
            _ = wattle_curl_share_setopt_long(share, CURLSHOPT_SHARE, Int(CURL_LOCK_DATA_COOKIE.rawValue))
        }

        _ = wattle_curl_multi_setopt_long(
            multi, CURLMOPT_PIPELINING, configuration.multiplexing ? Int(CURLPIPE_MULTIPLEX) : Int(CURLPIPE_NOTHING))
        _ = wattle_curl_multi_setopt_long(
            multi, CURLMOPT_MAX_HOST_CONNECTIONS, max(1, configuration.connectionsPerHost))
        _ = wattle_curl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, max(1, configuration.connectionCacheSize))
        maximumIdleHandles = max(8, configuration.connectionCacheSize)

        let httpVersion: Int
        switch configuration.httpVersion {
        case .http1_1: httpVersion = CURL_HTTP_VERSION_1_1
        case .http2OverTLS: httpVersion = CURL_HTTP_VERSION_2TLS
        case .http2PriorKnowledge: httpVersion = CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE
        }
        var proxy: String?
        var proxyEndpoint: ProxyEndpoint?
        var setupError: WattleError?
        switch configuration.proxy {
        case .environment: proxy = nil
        case .none: proxy = ""
        case .url(let url):
            do {
                let endpoint = try ProxyEndpoint(parsing: url)
                proxy = endpoint.url
                proxyEndpoint = endpoint
            } catch {
                // Fail closed: no transfer goes out, directly or otherwise.
                proxy = ""
                setupError = error
            }
        }
        // Fail closed, and say why: a malformed pin would fail every request as a mismatch.
        if setupError == nil { setupError = configuration.trust.invalidPin() }
        if let keyLog = CurlGlobal.keyLogFile {
            configuration.logger.warning(
                "SSLKEYLOGFILE is set: libcurl writes the secrets of every TLS connection to \(Redaction.escaped(keyLog)), from which its traffic (tokens and passwords included) can be decrypted. Unset it outside debugging."
            )
        }
        var resolve: UnsafeMutablePointer<curl_slist>?
        do {
            resolve = try CurlStringList.make(
                configuration.hostOverrides.lazy.map { "\($0.host):\($0.port):\($0.address)" })
        } catch {
            // Fail closed: without the list the names would go to DNS.
            setupError =
                setupError
                ?? .transport(
                    code: Int(CURLE_OUT_OF_MEMORY.rawValue), message: "out of memory storing the host overrides")
        }
        settings = Settings(
            share: share, httpVersion: httpVersion, multiplexing: configuration.multiplexing, proxy: proxy,
            proxyEndpoint: proxyEndpoint, setupError: setupError, resolveList: resolve,
            freshCleartextConnections: configuration.httpVersion == .http2PriorKnowledge
                && !CurlGlobal.reusesCleartextPriorKnowledgeConnections, keepsCookies: keepsCookies)

        DetachedThread.start(name: "wattle-curl") { [self] in run() }
    }

    /// Hands a transfer to the engine thread (or fails it with `cancelled` once it has stopped).
    func start(_ transfer: CurlTransfer) {
        if !post(.start(transfer)) { complete(transfer, with: .failure(.cancelled)) }
    }

    /// Asks the engine thread to stop a transfer now and fail it with `cancelled`.
    func cancel(_ transfer: CurlTransfer) {
        _ = post(.cancel(transfer))
    }

    /// Asks the engine thread to let a transfer paused for its reader go on.
    func resume(_ transfer: CurlTransfer) {
        _ = post(.resume(transfer))
    }

    /// Runs a job on the engine thread, after the commands posted before it. Once the engine has
    /// stopped, on the global concurrent executor, so that no task is ever stranded.
    func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        if !post(.run(unowned)) { globalConcurrentExecutor.enqueue(ExecutorJob(unowned)) }
    }

    /// Runs `body` on the engine thread with a new easy handle, its fixed options set (its
    /// share handle among them), and returns what it returns; with nil once the engine has
    /// stopped (or libcurl could not make a handle).
    func withHandle<Value: Sendable>(_ body: @escaping @Sendable (EasyHandle?) -> Value) async -> Value {
        await withCheckedContinuation { continuation in
            if !post(.withHandle({ continuation.resume(returning: body($0)) })) {
                continuation.resume(returning: body(nil))
            }
        }
    }

    /// Appends a command and wakes the thread if it sleeps; false (and nothing appended) once
    /// the thread has finished.
    private func post(_ command: Command) -> Bool {
        inbox.withLock { inbox -> Bool in
            guard !inbox.stopped else { return false }
            inbox.commands.append(command)
            wakeIfSleeping(&inbox)
            return true
        }
    }

    /// Wakes the thread from `curl_multi_poll` if it sleeps there. Called under the inbox's
    /// lock, so that the thread cannot finish and free the multi handle in between.
    private func wakeIfSleeping(_ inbox: inout Inbox) {
        guard inbox.sleeping else { return }
        inbox.sleeping = false
        _ = curl_multi_wakeup(multi)
    }

    /// Stops the thread; transfers still running fail with `cancelled`.
    func shutdown() {
        inbox.withLock { inbox in
            inbox.stopping = true
            wakeIfSleeping(&inbox)
        }
    }

    // MARK: Engine thread

    private func run() {
        var running: Int32 = 0
        // Swapped with the inbox's array, so that draining it allocates nothing.
        var commands: [Command] = []
        while true {
            var stopping = false
            // A job usually posts the next command (a task resumed here starts its next
            // request): take those in the same round, before curl's, up to a bound so that
            // tasks that only yield cannot starve the network.
            for _ in 0..<4 {
                let more = inbox.withLock { inbox -> Bool in
                    swap(&inbox.commands, &commands)
                    stopping = inbox.stopping
                    return !commands.isEmpty
                }
                guard more else { break }
                for command in commands { handle(command) }
                commands.removeAll(keepingCapacity: true)
                if stopping { break }
            }
            if stopping { break }
            _ = curl_multi_perform(multi, &running)
            collectFinished()
            checkTimeouts()
            // Sleep only if no command arrived meanwhile; the flag is set under the same lock
            // posters take, so none is missed.
            let sleep = inbox.withLock { inbox -> Bool in
                guard inbox.commands.isEmpty, !inbox.stopping else { return false }
                inbox.sleeping = true
                return true
            }
            if sleep {
                // With transfers running, wake at least every 100 ms for the timeout check.
                _ = curl_multi_poll(multi, nil, 0, active.isEmpty ? 1000 : 100, nil)
                inbox.withLock { $0.sleeping = false }
            }
        }
        tearDown()
    }

    private func handle(_ command: Command) {
        switch command {
        case .start(let transfer): begin(transfer)
        case .cancel(let transfer): stop(transfer)
        case .resume(let transfer): resumeNow(transfer)
        case .run(let job): job.runSynchronously(on: asUnownedTaskExecutor())
        case .withHandle(let body):
            // A new handle, freed after: one that ran transfers keeps per-transfer state that
            // `curl_easy_reset` leaves (libcurl 7.88 stops taking cookies on a handle whose last
            // response set 50, until its next connection).
            body(EasyHandle(settings: settings))
        }
    }

    private func begin(_ transfer: CurlTransfer) {
        if transfer.cancelledBeforeStart {
            complete(transfer, with: .failure(.cancelled))
            return
        }
        if let error = settings.setupError {
            complete(transfer, with: .failure(error))
            return
        }
        if let error = transfer.openUpload() {
            complete(transfer, with: .failure(error))
            return
        }
        guard let handle = idleHandle() else {
            complete(
                transfer,
                with: .failure(
                    .transport(code: Int(CURLE_OUT_OF_MEMORY.rawValue), message: "cannot create a curl handle")))
            return
        }
        if let error = transfer.configure(handle) {
            // Options may be half set: start from scratch next time.
            handle.needsReset = true
            recycle(transfer)
            complete(transfer, with: .failure(error))
            return
        }
        // The transfer is kept alive by `active` for as long as the handle names it.
        _ = wattle_curl_easy_setopt_pointer(handle.easy, CURLOPT_PRIVATE, Unmanaged.passUnretained(transfer).toOpaque())
        let code = curl_multi_add_handle(multi, handle.easy)
        guard code == CURLM_OK else {
            recycle(transfer)
            complete(
                transfer,
                with: .failure(
                    .transport(code: Int(code.rawValue), message: String(cString: curl_multi_strerror(code)))))
            return
        }
        transfer.handedToCurlAt = .now
        transfer.activeIndex = active.count
        active.append(transfer)
    }

    /// Takes a transfer off the list (the last one moves into its place).
    private func removeActive(_ transfer: CurlTransfer) {
        guard let index = transfer.activeIndex else { return }
        let last = active.removeLast()
        if last !== transfer {
            active[index] = last
            last.activeIndex = index
        }
        transfer.activeIndex = nil
    }

    /// The transfer a handle in the multi handle runs, from its `CURLOPT_PRIVATE`.
    private func activeTransfer(of easy: UnsafeMutableRawPointer) -> CurlTransfer? {
        var pointer: UnsafeMutableRawPointer?
        guard wattle_curl_easy_getinfo_pointer(easy, CURLINFO_PRIVATE, &pointer) == CURLE_OK, let pointer else {
            return nil
        }
        // Valid: the handle is still in the multi handle (curl removes a removed handle's
        // pending messages), so its transfer is still in `active`, which holds it.
        let transfer = Unmanaged<CurlTransfer>.fromOpaque(pointer).takeUnretainedValue()
        return transfer.activeIndex != nil && transfer.easy == easy ? transfer : nil
    }

    private func stop(_ transfer: CurlTransfer) {
        guard let easy = transfer.easy, transfer.activeIndex != nil else {
            // Not started yet (the cancel overtook the start), or already finished.
            transfer.cancelledBeforeStart = true
            return
        }
        removeActive(transfer)
        curl_multi_remove_handle(multi, easy)
        transfer.discardPartialDownload()
        recycle(transfer)
        complete(transfer, with: .failure(.cancelled))
    }

    /// Lets a transfer paused for its reader go on; one that cannot (libcurl failed to hand
    /// over the bytes it held) fails with libcurl's error.
    private func resumeNow(_ transfer: CurlTransfer) {
        let code = transfer.resume()
        guard code != CURLE_OK, let easy = transfer.easy, transfer.activeIndex != nil else { return }
        removeActive(transfer)
        curl_multi_remove_handle(multi, easy)
        let result = transfer.finish(code: code)
        recycle(transfer)
        complete(transfer, with: result)
    }

    /// Engine thread only (unchecked exclusivity: see `active`).
    @exclusivity(unchecked) private var nextTimeoutCheck = ContinuousClock.now

    /// Fails transfers that moved no byte for their stall timeout, and those past their total
    /// timeout that libcurl has not ended, having waited for a connection (every 100 ms).
    private func checkTimeouts() {
        let now = ContinuousClock.now
        guard now >= nextTimeoutCheck, !active.isEmpty else { return }
        nextTimeoutCheck = now + .milliseconds(100)
        // Backwards: a removal moves the last transfer into the removed one's place.
        for index in active.indices.reversed() {
            let transfer = active[index]
            let error: WattleError
            if transfer.hasStalled(now: now) {
                error = .timedOut(
                    phase: .stall, after: transfer.request.timeouts.stall ?? .zero, url: transfer.request.url)
            } else if transfer.hasOverrunTotal(now: now) {
                error = .timedOut(
                    phase: .total, after: transfer.request.timeouts.total ?? .zero, url: transfer.request.url)
            } else {
                continue
            }
            removeActive(transfer)
            if let easy = transfer.easy { curl_multi_remove_handle(multi, easy) }
            transfer.discardPartialDownload()
            recycle(transfer)
            complete(transfer, with: .failure(error))
        }
    }

    /// Completes the transfers curl reports done.
    private func collectFinished() {
        var remaining: Int32 = 0
        while let message = curl_multi_info_read(multi, &remaining) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
            let code = message.pointee.data.result
            let transfer = activeTransfer(of: easy)
            curl_multi_remove_handle(multi, easy)
            guard let transfer else { continue }
            removeActive(transfer)
            let result = transfer.finish(code: code)
            if case .failure = result { transfer.discardPartialDownload() }
            recycle(transfer)
            complete(transfer, with: result)
        }
    }

    /// A handle ready for a transfer: a kept one (reset first if its last transfer asked for
    /// it), or a new one.
    private func idleHandle() -> EasyHandle? {
        while let handle = idleHandles.popLast() {
            if !handle.needsReset || handle.reset(settings: settings) == nil { return handle }
        }
        return EasyHandle(settings: settings)
    }

    /// Takes the handle back from a transfer that is no longer in the multi handle. The
    /// transfer lets go of it here, so a handle is only ever freed on this thread.
    private func recycle(_ transfer: CurlTransfer) {
        guard let handle = transfer.handle else { return }
        transfer.releaseHandle()
        handle.forgetTransfer()
        // libcurl keeps its copy of a request body until the option is set again.
        if transfer.request.hasBody { handle.forgetBody() }
        if !handle.isSpent, idleHandles.count < maximumIdleHandles { idleHandles.append(handle) }
    }

    private func complete(_ transfer: CurlTransfer, with result: Result<CurlTransfer.Completed, WattleError>) {
        let continuation = transfer.continuation
        transfer.continuation = nil
        switch result {
        case .success(let completed) where completed.unsyncedDescriptor >= 0:
            Self.syncThenResume(completed, path: transfer.request.download?.file.path ?? "", continuation)
        case .success(let completed): continuation?.resume(returning: completed)
        case .failure(let error): continuation?.resume(throwing: error)
        }
    }

    /// Flushes a `.synced` download to disk and closes it on a thread of its own, then resumes
    /// the caller: the engine thread goes on with every other transfer meanwhile. (With no
    /// caller left to resume, the file is still closed.) When no thread can be made, here.
    private static func syncThenResume(
        _ completed: CurlTransfer.Completed, path: String,
        _ continuation: CheckedContinuation<CurlTransfer.Completed, any Error>?
    ) {
        let work: @Sendable () -> Void = {
            if let failure = CurlTransfer.syncAndClose(completed.unsyncedDescriptor) {
                continuation?.resume(throwing: WattleError.fileError(path: path, reason: failure))
            } else {
                var done = completed
                done.unsyncedDescriptor = -1
                continuation?.resume(returning: done)
            }
        }
        // A small stack: the thread only syncs, closes and resumes.
        if DetachedThread.start(name: "wattle-fsync", stackSize: 256 << 10, work) != nil { work() }
    }

    private func tearDown() {
        for transfer in active {
            transfer.activeIndex = nil
            if let easy = transfer.easy { curl_multi_remove_handle(multi, easy) }
            transfer.discardPartialDownload()
            transfer.releaseHandle()
            complete(transfer, with: .failure(.cancelled))
        }
        active.removeAll()
        // Late arrivals after the stop flag was read: starts fail, jobs still run (here, until
        // none is left; later ones go to the global executor, see `enqueue`).
        while true {
            let late = inbox.withLock { inbox -> [Command] in
                defer { inbox.commands.removeAll() }
                if inbox.commands.isEmpty { inbox.stopped = true }
                return inbox.commands
            }
            if late.isEmpty { break }
            for command in late {
                switch command {
                case .start(let transfer): complete(transfer, with: .failure(.cancelled))
                case .cancel, .resume: break
                case .run(let job): job.runSynchronously(on: asUnownedTaskExecutor())
                case .withHandle(let body): body(nil)
                }
            }
        }
        idleHandles.removeAll()
        curl_multi_cleanup(multi)
        curl_share_cleanup(settings.share)
        if let list = settings.resolveList { curl_slist_free_all(list) }
    }
}
