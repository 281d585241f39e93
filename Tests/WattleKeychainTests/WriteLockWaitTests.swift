import Dispatch
import Foundation
import Testing
import WattleTesting

@testable import WattleKeychain

/// A write that waits for another process's write lock does not hold the store: the store's
/// reads and `lock()` go on meanwhile, and the write goes on once the lock is free.
@Suite struct WriteLockWaitTests {
    /// A blocking call run on its own thread, and what it gave (under a lock: read while the
    /// thread may still run).
    final class BackgroundCall: @unchecked Sendable {
        private let done = DispatchSemaphore(value: 0)
        private let lock = NSLock()
        private var outcome: (error: (any Error)?, finished: Bool) = (nil, false)

        init(_ body: @escaping @Sendable () throws -> Void) {
            Thread.detachNewThread { [self] in
                var failure: (any Error)?
                do { try body() } catch { failure = error }
                lock.withLock { outcome = (failure, true) }
                done.signal()
            }
        }

        /// What the call threw, once it has ended.
        var error: (any Error)? { lock.withLock { outcome.error } }
        /// Whether the call has ended.
        var hasFinished: Bool { lock.withLock { outcome.finished } }

        /// Whether the call ended within `seconds`.
        func wait(seconds: Double) -> Bool { done.wait(timeout: .now() + seconds) == .success }
    }

    /// A keychain file holding "kept" under "k", and a second connection to it holding the
    /// write lock, as another process in the middle of a write does.
    static func keychainWithWriterHoldingTheLock() throws -> (TemporaryKeychain, SQLiteConnection) {
        let temporary = try TemporaryKeychain()
        try Keychain(service: "wait", store: temporary.store).set("kept", forKey: "k")
        let writer = try SQLiteConnection(path: temporary.fileURL.path, create: false)
        try writer.execute("BEGIN IMMEDIATE")
        return (temporary, writer)
    }

    @Test(
        "while a write waits for another process's write lock, the same store reads at once, and the write goes on when the lock is free"
    )
    func readsGoOnWhileAWriteWaits() throws {
        let (temporary, writer) = try Self.keychainWithWriterHoldingTheLock()
        let store = temporary.store
        let write = BackgroundCall { try Keychain(service: "wait", store: store).set("new", forKey: "k2") }
        #expect(!write.wait(seconds: 0.3), "the write waits for the lock")

        // Before, the waiting write held the store's lock for SQLite's 30-second busy timeout,
        // and this read waited behind it. 10 s: wide for a sanitized build, short of 30.
        let started = ContinuousClock.now
        #expect(try Keychain(service: "wait", store: store).string(forKey: "k") == "kept")
        #expect(try store.copyMatching(.genericPassword(service: "wait")).count == 1)
        #expect(ContinuousClock.now - started < .seconds(10))
        #expect(!write.hasFinished, "the write still waits")

        try writer.execute("ROLLBACK")
        #expect(write.wait(seconds: 25))
        #expect(write.error == nil)
        #expect(try Keychain(service: "wait", store: store).string(forKey: "k2") == "new")
    }

    @Test("lock() takes effect while a write waits for the write lock: the write then finds the keychain locked")
    func lockGoesOnWhileAWriteWaits() throws {
        let (temporary, writer) = try Self.keychainWithWriterHoldingTheLock()
        let store = temporary.store
        let write = BackgroundCall { try Keychain(service: "wait", store: store).set("new", forKey: "k2") }
        #expect(!write.wait(seconds: 0.3))

        let locking = BackgroundCall { store.lock() }
        #expect(locking.wait(seconds: 10), "lock() waited behind the write")
        #expect(store.isLocked)

        try writer.execute("ROLLBACK")
        #expect(write.wait(seconds: 25))
        // A `whenUnlocked` value cannot be written while locked: the lock came first.
        #expect((write.error as? KeychainError) == .interactionNotAllowed)
        try store.unlock()
        #expect(try Keychain(service: "wait", store: store).string(forKey: "k2") == nil)
    }

    @Test("a write that cannot get the write lock within the timeout fails with notAvailable and changes nothing")
    func writeGivesUpAfterTheTimeout() throws {
        let (temporary, writer) = try Self.keychainWithWriterHoldingTheLock()
        defer { try? writer.execute("ROLLBACK") }
        let store = temporary.store
        store.writeLockTimeout = .milliseconds(300)
        let started = ContinuousClock.now
        #expect(keychainError { try Keychain(service: "wait", store: store).set("new", forKey: "k") } == .notAvailable)
        #expect(ContinuousClock.now - started >= .milliseconds(300))
        #expect(try Keychain(service: "wait", store: store).string(forKey: "k") == "kept")

        // The same for the other writes: add, update, delete, and a credential change.
        let query = KeychainQuery.genericPassword(service: "wait")
        #expect(
            keychainError { try store.add(.genericPassword(service: "wait", account: "a", data: Data("x".utf8))) }
                == .notAvailable)
        #expect(keychainError { try store.update(query, with: KeychainUpdate(data: Data("y".utf8))) } == .notAvailable)
        #expect(keychainError { try store.delete(query) } == .notAvailable)
        #expect(
            keychainError { try store.changeCredential(to: .passphrase("pw", strength: .minimum)) } == .notAvailable)
        try writer.execute("ROLLBACK")
        #expect(try Keychain(service: "wait", store: store).string(forKey: "k") == "kept")
        #expect(try store.copyMatching(query).count == 1)
    }
}
