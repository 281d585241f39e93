#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging
import WattleKeychain

/// Keeps an engine's cookie jar in a keychain item (``Configuration/CookieStorage/keychain(_:)``):
/// reads it into the jar once, before the first request, and writes the jar back after each
/// response that set a cookie.
///
/// Keychain work runs on Swift's global executor, never on the engine thread (a task of
/// ``Session/withNetworkThreadExecutor(isolation:_:)`` runs there). Writes run one at a time,
/// each reading the jar just before it writes, so a slower write never replaces a newer jar;
/// a request whose cookies a later write already covered does not write again.
///
/// Several sessions or processes may keep one jar: a write merges this session's changes
/// since its last read or write into the stored jar, reading and writing in one keychain
/// transaction (``CookieJarMerge``), so one writer's cookies are not lost to another's. A
/// session reads the stored jar once; cookies another writer stores later reach it in its
/// next run. `removeAll` replaces the stored jar whole.
final class PersistentCookieJar: Sendable {
    let item: KeychainCookieJar
    private let engine: CurlEngine
    private let logger: Logger
    private let state = PThreadLocked(State())

    private struct State {
        /// The stored jar has been read into the engine's (or emptied by `removeAll`).
        var loaded = false
        /// How many times `removeAll` has run: a read that began before one drops its cookies.
        var clears = 0
        /// The read under way, shared by the requests waiting for it.
        var loading: Task<WattleError?, Never>?
        /// Changes to the jar that need writing: responses that set a cookie, additions, removals.
        var changes = 0
        /// The changes the last successful write covered.
        var saved = 0
        /// The last write asked for; the next one starts after it.
        var lastWrite: Task<WattleError?, Never>?
        /// The jar as this session last read or stored it: a write stores the changes from it.
        var base = CookieJarMerge.Jar()
        /// `removeAll` has run and the next write replaces the stored jar instead of merging.
        var replacePending = false
    }

    /// The first line of the stored form, as in curl's cookie files.
    static let header = "# Netscape HTTP Cookie File"

    init(item: KeychainCookieJar, engine: CurlEngine, logger: Logger) {
        self.item = item
        self.engine = engine
        self.logger = logger
    }

    /// Reads the stored jar into the engine's, once; requests arriving meanwhile wait for the
    /// same read. A read that fails is not remembered: the next call tries again.
    func ensureLoaded() async throws(WattleError) {
        let read = state.withLock { state -> Task<WattleError?, Never>? in
            if state.loaded { return nil }
            if let loading = state.loading { return loading }
            let clears = state.clears
            let loading = Task(executorPreference: globalConcurrentExecutor) { await self.load(clearsAtStart: clears) }
            state.loading = loading
            return loading
        }
        if let read, let error = await read.value { throw error }
    }

    private func load(clearsAtStart: Int) async -> WattleError? {
        let lines: [String]
        do {
            lines = try Self.lines(in: try item.keychain.data(forKey: item.key), item: item)
        } catch {
            state.withLock { $0.loading = nil }
            return error as? WattleError ?? .cookieJar(reason: "cannot read the stored jar \(item): \(error)")
        }
        let added = await engine.withHandle { handle -> Bool in
            guard let handle else { return false }
            // A `removeAll` since the read began wants none of them. Its `ALL` runs on this
            // thread too, after this if it counted its clear after this check.
            if self.state.withLock({ $0.clears }) != clearsAtStart { return true }
            guard handle.addCookieLines(lines) else { return false }
            let base = CookieJarMerge.Jar(lines, now: Date())
            self.state.withLock { $0.base = base }
            return true
        }
        state.withLock { state in
            state.loading = nil
            state.loaded = state.loaded || added
        }
        return added ? nil : .cookieJar(reason: "the session has stopped, or libcurl could not take the stored cookies")
    }

    /// The cookie lines of a stored jar (nil: none stored). Every line must read as a cookie:
    /// only those reach `CURLOPT_COOKIELIST`, which takes words such as `ALL` as commands.
    static func lines(in data: Data?, item: KeychainCookieJar) throws(WattleError) -> [String] {
        guard let data else { return [] }
        guard let text = String(data: data, encoding: .utf8) else {
            throw .cookieJar(reason: "the stored jar \(item) is damaged (not UTF-8); removeAllCookies() empties it")
        }
        var lines: [String] = []
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if line.isEmpty || (line.hasPrefix("#") && !line.hasPrefix("#HttpOnly_")) { continue }
            guard Cookie(netscapeLine: String(line)) != nil else {
                throw .cookieJar(reason: "the stored jar \(item) is damaged (line \(number + 1)); removeAllCookies() empties it")
            }
            lines.append(String(line))
        }
        return lines
    }

    /// Writes the jar after a response that set a cookie (or a failed transfer whose head
    /// did); a failure is logged (the cookies stay in memory and the next write tries again),
    /// not thrown: the response, or the transfer's own error, stands.
    func saveAfterResponse(url: URL) async {
        do {
            try await save()
        } catch {
            logger.error("the cookies \(Redaction.url(url.absoluteString)) set could not be kept: \(error)")
        }
    }

    /// Writes the jar as it is now, after any write already asked for.
    func save() async throws(WattleError) {
        let write = state.withLock { state -> Task<WattleError?, Never> in
            state.changes += 1
            let ticket = state.changes
            let previous = state.lastWrite
            let write = Task(executorPreference: globalConcurrentExecutor) { () -> WattleError? in
                _ = await previous?.value
                return await self.write(for: ticket)
            }
            state.lastWrite = write
            return write
        }
        if let error = await write.value { throw error }
    }

    /// Reads the jar from the engine and stores it, merged into the stored one (or in its
    /// place after `removeAll`), unless a write since `ticket` was asked for has stored it
    /// already.
    private func write(for ticket: Int) async -> WattleError? {
        guard
            let (covering, base, replacing, clears) = state.withLock({
                state -> (Int, CookieJarMerge.Jar, Bool, Int)? in
                state.saved >= ticket ? nil : (state.changes, state.base, state.replacePending, state.clears)
            })
        else { return nil }
        // Nil once the engine has stopped: nothing is written then (an empty jar would erase
        // the stored one).
        guard let listed = await engine.withHandle({ $0?.cookieLines() }) else {
            return .cookieJar(reason: "the session has stopped, or libcurl could not list the cookies; they were not kept")
        }
        let now = Date()
        let ours = CookieJarMerge.Jar(listed, now: now)
        do {
            try item.keychain.updateValue(forKey: item.key) { stored -> Data? in
                let jar =
                    replacing
                    ? ours
                    : CookieJarMerge.merge(
                        ours: ours, base: base, theirs: CookieJarMerge.Jar(try Self.lines(in: stored, item: item), now: now),
                        now: now)
                guard !jar.lines.isEmpty else { return nil }
                return Data((([Self.header] + jar.lines).joined(separator: "\n") + "\n").utf8)
            }
        } catch let error as WattleError {
            return error
        } catch {
            return .cookieJar(reason: "cannot store the jar in \(item): \(error)")
        }
        state.withLock { state in
            state.saved = max(state.saved, covering)
            state.base = ours
            // A `removeAll` since this write began asks for its own replacing write.
            if replacing && state.clears == clears { state.replacePending = false }
        }
        return nil
    }

    /// Empties the jar and the stored item (cookies another session stored included). A read
    /// under way, or one that starts later, adds none of the stored cookies: the jar counts as
    /// read, and a read that began before checks the clear count on the engine thread, where
    /// `ALL` runs too.
    func removeAll() async throws(WattleError) {
        state.withLock { state in
            state.clears += 1
            state.loaded = true
            state.replacePending = true
        }
        await engine.withHandle { $0?.removeAllCookies() }
        try await save()
    }
}
