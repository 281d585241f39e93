import Logging
import WattleKeychain

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Keeps an engine's cookie jar in a keychain item (``Configuration/CookieStorage/keychain(_:)``):
/// reads it into the jar once, before the first request, and writes the jar's changes back
/// after each response that set a cookie.
///
/// Keychain work runs on Swift's global executor, never on the engine thread (a task of
/// ``Session/withNetworkThreadExecutor(isolation:_:)`` runs there). Writes run one at a time,
/// each listing the engine's jar just before it writes, so a slower write never stores an
/// older jar over a newer one;
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
        /// How many times `removeAll` has emptied the engine's jar (counted on the engine
        /// thread, with its `ALL`: a read that began before one adds none of its cookies), and
        /// how many of those a write has stored by replacing the stored jar instead of merging
        /// into it (or failed to: those are not tried again): while they differ, writes replace.
        var emptied = 0
        var emptiedStored = 0
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
            let emptied = state.emptied
            let loading = Task(executorPreference: globalConcurrentExecutor) {
                await self.load(emptiedAtStart: emptied)
            }
            state.loading = loading
            return loading
        }
        if let read, let error = await read.value { throw error }
    }

    private func load(emptiedAtStart: Int) async -> WattleError? {
        let lines: [String]
        do {
            lines = try Self.lines(in: try item.keychain.data(forKey: item.key), item: item)
        } catch {
            state.withLock { $0.loading = nil }
            return error as? WattleError ?? .cookieJar(reason: "cannot read the stored jar \(item): \(error)")
        }
        let added = await engine.withHandle { handle -> Bool in
            guard let handle else { return false }
            // A `removeAll` whose `ALL` ran since the read began wants none of them. One whose
            // `ALL` runs later, on this thread too, removes them.
            if self.state.withLock({ $0.emptied }) != emptiedAtStart { return true }
            guard handle.addCookieLines(lines) else { return false }
            // What libcurl kept, not what was stored: it drops some lines and folds others
            // into one cookie by its own rules, and a stored line missing from the jar would
            // read as a server's removal at the next write.
            guard let kept = handle.cookieLines() else { return false }
            let base = CookieJarMerge.Jar(kept, now: Date())
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
                throw .cookieJar(
                    reason: "the stored jar \(item) is damaged (line \(number + 1)); removeAllCookies() empties it")
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
        guard let (covering, base) = state.withLock({ $0.saved >= ticket ? nil : ($0.changes, $0.base) }) else {
            return nil
        }
        // Listed with the count of `removeAll`s on the engine thread, where their `ALL` runs:
        // a list taken after an `ALL` replaces the stored jar, one taken before merges.
        // Nil once the engine has stopped: nothing is written then (an empty jar would erase
        // the stored one).
        let listing = await engine.withHandle { handle -> ([String], emptied: Int)? in
            guard let lines = handle?.cookieLines() else { return nil }
            return (lines, self.state.withLock { $0.emptied })
        }
        guard let (listed, emptied) = listing else {
            return .cookieJar(
                reason: "the session has stopped, or libcurl could not list the cookies; they were not kept")
        }
        let now = Date()
        let ours = CookieJarMerge.Jar(listed, now: now)
        let replacing = state.withLock { $0.emptiedStored < emptied }
        do {
            if replacing {
                // Without reading the stored jar, so that a damaged item can still be emptied.
                try Self.store(ours, in: item)
            } else {
                try item.keychain.updateValue(forKey: item.key) { stored -> Data? in
                    let theirs = CookieJarMerge.Jar(try Self.lines(in: stored, item: item), now: now)
                    return Self.text(of: CookieJarMerge.merge(ours: ours, base: base, theirs: theirs, now: now))
                }
            }
        } catch {
            // A failed replace is not tried again by a later write, which could be hours
            // later and would erase what other sessions stored since: later writes merge from
            // `base` (removing this session's cookies only). `removeAll` reports the failure.
            if replacing { state.withLock { $0.emptiedStored = max($0.emptiedStored, emptied) } }
            switch error {
            case let error as WattleError: return error
            case KeychainError.decode:
                return .cookieJar(reason: "the stored jar \(item) is damaged (\(error)); removeAllCookies() empties it")
            default: return .cookieJar(reason: "cannot store the jar in \(item): \(error)")
            }
        }
        state.withLock { state in
            state.saved = max(state.saved, covering)
            state.base = ours
            state.emptiedStored = max(state.emptiedStored, emptied)
        }
        return nil
    }

    /// The stored form of a jar; nil for an empty one (the item is removed).
    private static func text(of jar: CookieJarMerge.Jar) -> Data? {
        let lines = jar.lines
        return lines.isEmpty ? nil : Data((([header] + lines).joined(separator: "\n") + "\n").utf8)
    }

    /// Stores `jar` in place of whatever the item holds, without reading it.
    private static func store(_ jar: CookieJarMerge.Jar, in item: KeychainCookieJar) throws {
        if let data = text(of: jar) {
            try item.keychain.set(data, forKey: item.key)
        } else {
            try item.keychain.removeValue(forKey: item.key)
        }
    }

    /// Empties the jar and the stored item (cookies another session stored included). A read
    /// under way, or one that starts later, adds none of the stored cookies: the jar counts as
    /// read, and a read that began before checks the count of `ALL`s on the engine thread,
    /// where they run.
    func removeAll() async throws(WattleError) {
        state.withLock { $0.loaded = true }
        let emptied = await engine.withHandle { handle -> Bool in
            guard let handle else { return false }
            handle.removeAllCookies()
            self.state.withLock { $0.emptied += 1 }
            return true
        }
        guard emptied else { throw .cookieJar(reason: "the session has stopped; its cookies were not removed") }
        try await save()
    }
}
