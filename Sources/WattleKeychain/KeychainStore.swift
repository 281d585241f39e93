import Synchronization

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One keychain: a SQLite file (or memory) holding sealed items, with the SecItem-style
/// primitives and the lock state.
///
/// A store is safe to use from many threads and tasks at once (its operations run one at a
/// time under a lock), and several processes may open the same file (SQLite WAL with
/// `BEGIN IMMEDIATE` writes). A write waits up to 30 s for another process's write to end,
/// without holding the store's lock: the store's reads and ``lock()`` go on meanwhile. (The
/// first open of a keychain that another process is creating at that moment still waits with
/// it held.) A store opens its file lazily, on first use,
/// unless created with a throwing initializer.
///
/// ```swift
/// // In the default folder ($XDG_DATA_HOME/wattle or ~/.local/share/wattle), with a key file:
/// let store = try KeychainStore(directory: KeychainStore.defaultDirectory)
/// try store.add(.genericPassword(service: "api.example.com", account: "alice", data: Data("pw".utf8)))
/// let found = try store.copyMatching(.genericPassword(service: "api.example.com", account: "alice"))
/// ```
///
/// Files: the keychain `name.keychain` and its key file `name.key` are created with mode
/// `0600` in a folder created with mode `0700`; a keychain or key file that the group or
/// others may read or write is refused with ``KeychainFileError``.
public final class KeychainStore: Sendable {
    enum Source: Sendable {
        case file(URL)
        case memory

        /// Whether there may be a keychain to open rather than one to make: a file that exists
        /// and is not empty (it may still hold no keychain: ``KeychainEngine/NoKeychainYet``).
        var holdsAKeychain: Bool {
            guard case .file(let url) = self else { return false }
            var info = stat()
            return stat(url.path, &info) == 0 && info.st_size > 0
        }
    }

    struct State {
        var engine: KeychainEngine?
        var lockWhenOpened = false
        /// What opens the keychain. A passphrase or key bytes of a file's keychain are dropped
        /// once it is open (``unlock(with:)`` needs them again); a key file's URL and an
        /// in-memory store's credential are kept for ``unlock()``.
        var credential: KeychainCredential?
        /// ``KeychainStore/writeLockTimeout``.
        var writeLockTimeout: Duration = .seconds(30)
    }

    let source: Source
    private let state: PThreadLocked<State>
    /// Lives as long as the store: `WattleTesting`'s temporary folder, removed when the last
    /// store or helper using it is released.
    private let keptAlive: (any AnyObject & Sendable)?

    init(source: Source, credential: KeychainCredential) {
        self.source = source
        state = PThreadLocked(State(credential: credential))
        keptAlive = nil
    }

    /// Whether the store still holds what opens it (tests).
    var keepsCredential: Bool { state.withLock { $0.credential != nil } }

    /// The file, or nil for an in-memory store.
    public var fileURL: URL? {
        if case .file(let url) = source { return url }
        return nil
    }

    /// Opens (creating when missing) the keychain file at `fileURL` with a credential.
    ///
    /// - Throws: ``KeychainError/authFailed`` when the credential does not open an existing
    ///   keychain, ``KeychainFileError`` when a file is refused or cannot be created.
    public convenience init(fileURL: URL, credential: KeychainCredential) throws {
        try self.init(fileURL: fileURL, credential: credential, keepingAlive: nil)
    }

    /// ``init(fileURL:credential:)``, keeping `owner` alive as long as the store.
    package init(fileURL: URL, credential: KeychainCredential, keepingAlive owner: (any AnyObject & Sendable)?) throws {
        source = .file(fileURL)
        state = PThreadLocked(State(credential: credential))
        keptAlive = owner
        try open()
    }

    /// Opens (creating when missing) `name.keychain` in `directory`, unlocked by the key file
    /// `name.key` next to it (created on first use).
    ///
    /// Anyone who can read the key file can open the keychain: see the security model article.
    ///
    /// - Throws: ``KeychainError/param`` when `name` is not one file name (empty, `.` or `..`,
    ///   or holding `/` or NUL), which would put the files outside `directory`, in a folder
    ///   under it, or hide them; ``KeychainError/authFailed`` and ``KeychainFileError`` as
    ///   ``init(fileURL:credential:)``.
    public convenience init(directory: URL, name: String = "default") throws {
        guard Self.isFileName(name) else { throw KeychainError.param }
        let url = directory.appendingPathComponent("\(name).keychain", isDirectory: false)
        let key = directory.appendingPathComponent("\(name).key", isDirectory: false)
        try self.init(fileURL: url, credential: .keyFile(key))
    }

    /// Whether `name` names a file in a folder, and a visible one: not empty, not `.` or `..`,
    /// without `/` or NUL (which would end the path C sees).
    static func isFileName(_ name: String) -> Bool {
        !name.isEmpty && name != "." && name != ".." && !name.contains("/") && !name.contains("\0")
    }

    /// `$XDG_DATA_HOME/wattle/`, else `~/.local/share/wattle/`.
    public static var defaultDirectory: URL { KeychainFiles.defaultDirectory() }

    /// The default keychain, `default.keychain` with the key file `default.key` in
    /// ``defaultDirectory``, opened on first use. ``Keychain/init(service:)`` uses it.
    public static let shared: KeychainStore = {
        let directory = KeychainFiles.defaultDirectory()
        return KeychainStore(
            source: .file(directory.appendingPathComponent("default.keychain")),
            credential: .keyFile(directory.appendingPathComponent("default.key")))
    }()

    /// A keychain that lives in memory only, with the same semantics as a file (items are
    /// sealed the same way). Without a credential it uses random key bytes. It keeps its
    /// credential (any kind, a passphrase too) as long as it lives, so ``unlock()`` works with
    /// no argument; meant for tests.
    public static func inMemory(credential: KeychainCredential? = nil) -> KeychainStore {
        KeychainStore(source: .memory, credential: credential ?? .key(Sodium.randomBytes(Sodium.keyBytes)))
    }

    /// Opens the keychain now if not yet open, so that errors (wrong passphrase, refused file)
    /// show here rather than at first use.
    public func open() throws {
        try withEngine { _ in () }
    }

    func withEngine<T: Sendable>(_ body: (KeychainEngine) throws -> T) throws -> T {
        try waitingForWriteLock { try state.withLock { state throws -> T in try body(try engine(&state)) } }
    }

    /// Runs `attempt`, which takes the store's lock, again while another connection to the file
    /// (another process, or another store) holds its write lock: between attempts the store's
    /// lock is not held, so this store's reads and ``lock()`` go on while a write waits. After
    /// ``writeLockTimeout`` of waiting, ``KeychainError/notAvailable``.
    ///
    /// Each attempt starts over: a write transaction begins before anything is changed, so an
    /// attempt refused for the lock has done nothing.
    private func waitingForWriteLock<T>(_ attempt: () throws -> T) throws -> T {
        var deadline: ContinuousClock.Instant?
        // Short pauses first (another process's write holds the lock for one fsync, a few ms),
        // growing to 50 ms, as SQLite's own busy handler does.
        var pauseMicroseconds: Int64 = 1_000
        while true {
            do {
                return try attempt()
            } catch is SQLiteStorage.WriteLockBusy {
                let now = ContinuousClock.now
                let end = deadline ?? now + writeLockTimeout
                deadline = end
                guard now < end else { throw KeychainError.notAvailable }
                let left = (end - now).components
                let leftMicroseconds = left.seconds * 1_000_000 + left.attoseconds / 1_000_000_000_000 + 1
                usleep(useconds_t(min(pauseMicroseconds, leftMicroseconds)))
                pauseMicroseconds = min(pauseMicroseconds * 2, 50_000)
            }
        }
    }

    /// How long a write waits for another connection's write lock before it fails with
    /// ``KeychainError/notAvailable``: 30 s (tests shorten it).
    var writeLockTimeout: Duration {
        get { state.withLock { $0.writeLockTimeout } }
        set { state.withLock { $0.writeLockTimeout = newValue } }
    }

    /// The open engine, opened (or made) now with the store's own credential if need be;
    /// called under the lock.
    private func engine(_ state: inout State) throws -> KeychainEngine {
        if let engine = state.engine { return engine }
        guard let credential = state.credential else { throw KeychainError.authFailed }
        let engine = try Self.makeEngine(source, credential: credential)
        // Locked before its first use: locked now, so a failed unlock leaves it so.
        if state.lockWhenOpened { engine.lock() }
        state.engine = engine
        if !keeps(credential) { state.credential = nil }
        return engine
    }

    private static func makeEngine(_ source: Source, credential: KeychainCredential, mayCreate: Bool = true) throws
        -> KeychainEngine
    {
        switch source {
        case .memory:
            return try KeychainEngine.open(storage: MemoryStorage(), credential: credential, mayCreate: mayCreate)
        case .file(let url):
            try KeychainFiles.ensureDirectory(url.deletingLastPathComponent())
            try KeychainFiles.checkPrivate(url.path)
            // SQLite reuses a write-ahead log and shared-memory file left beside the keychain as
            // they are; the log holds sealed rows (and, until a checkpoint, a replaced wrapped
            // key): each must be private as the keychain is.
            for suffix in ["-wal", "-shm"] { try KeychainFiles.checkCompanion(url.path + suffix) }
            let storage = try SQLiteStorage(path: url.path)
            return try KeychainEngine.open(storage: storage, credential: credential, mayCreate: mayCreate)
        }
    }

    // MARK: Primitives

    /// Adds an item (`SecItemAdd`).
    ///
    /// - Throws: ``KeychainError/duplicateItem`` when an item with the same identity exists;
    ///   ``KeychainError/interactionNotAllowed`` when locked and the item needs unlocking;
    ///   ``KeychainError/dataTooLarge`` when its data or attributes are too large to store.
    public func add(_ item: KeychainItem) throws {
        try withEngine { try $0.add(item) }
    }

    /// Returns the matching items with what the query asks for (`SecItemCopyMatching`): at most
    /// one with ``KeychainQuery/MatchLimit/one``.
    ///
    /// - Throws: ``KeychainError/itemNotFound`` when nothing matches;
    ///   ``KeychainError/interactionNotAllowed`` when the data of a matching item needs the
    ///   keychain unlocked; ``KeychainError/decode`` when nothing matched and an item of the
    ///   identity or indexed attribute asked for was damaged (it may have been the one): the
    ///   service of a generic password, the server of an internet password, the issuer of a
    ///   certificate or identity, the application tag of a key. A
    ///   damaged item (one whose sealed blobs fail to open) is skipped when others match.
    public func copyMatching(_ query: KeychainQuery) throws -> [KeychainMatch] {
        try withEngine { try $0.copyMatching(query) }
    }

    /// Changes every matching item in one transaction (`SecItemUpdate`).
    ///
    /// - Throws: ``KeychainError/itemNotFound`` when nothing matches;
    ///   ``KeychainError/duplicateItem`` when a changed identity collides (nothing changes);
    ///   ``KeychainError/interactionNotAllowed`` while locked when a matching item needs the
    ///   keychain unlocked (nothing changes); ``KeychainError/decode`` as for
    ///   ``copyMatching(_:)``. A damaged item is skipped, unless given new data, which
    ///   replaces a damaged secret.
    public func update(_ query: KeychainQuery, with change: KeychainUpdate) throws {
        try withEngine { try $0.update(query, with: change) }
    }

    /// Deletes every matching item in one transaction (`SecItemDelete`). A query answered by
    /// identity, or by the indexed attribute alone (service, server, issuer or application
    /// tag, as for ``copyMatching(_:)``), deletes a damaged item too; one that filters on
    /// other attributes cannot tell whether a damaged item matches, and leaves it.
    ///
    /// - Throws: ``KeychainError/itemNotFound`` when nothing matches;
    ///   ``KeychainError/decode`` as for ``copyMatching(_:)``, when a damaged item was left.
    public func delete(_ query: KeychainQuery) throws {
        try withEngine { try $0.delete(query) }
    }

    // MARK: Lock state

    /// Whether the keychain is locked.
    public var isLocked: Bool {
        state.withLock { state in state.engine?.isLocked ?? state.lockWhenOpened }
    }

    /// Wipes the master key and the key of the `whenUnlocked` classes from memory; their items
    /// then fail with ``KeychainError/interactionNotAllowed`` until ``unlock(with:)``, while
    /// `afterFirstUnlock` items stay readable.
    ///
    /// The lock state belongs to this store object: another store or process that opened the
    /// same file keeps its own keys until it locks too.
    public func lock() {
        state.withLock { state in
            state.engine?.lock()
            state.lockWhenOpened = true
        }
    }

    /// Unlocks with a credential. A store whose keychain file exists but is not opened yet
    /// (``shared`` until first use) is opened with this credential rather than the one it was
    /// made with: so a keychain whose credential was changed to a passphrase, or whose key
    /// file is gone while its key bytes are at hand, can still be opened. (A keychain that does
    /// not exist yet is made with the store's own credential, never this one.)
    ///
    /// - Throws: ``KeychainError/authFailed`` when it does not open this keychain (the keychain
    ///   stays locked, or unopened).
    public func unlock(with credential: KeychainCredential) throws {
        try waitingForWriteLock { try unlockOnce(with: credential) }
    }

    /// ``unlock(with:)``, one attempt under the lock.
    private func unlockOnce(with credential: KeychainCredential) throws {
        try state.withLock { state in
            if state.engine == nil, source.holdsAKeychain {
                do {
                    state.engine = try Self.makeEngine(source, credential: credential, mayCreate: false)
                    // What ``unlock()`` uses from now on, when it may be kept (as
                    // changeCredential); the store's own credential is not what opens this keychain.
                    state.credential = keeps(credential) ? credential : nil
                    state.lockWhenOpened = false
                    return
                } catch is KeychainEngine.NoKeychainYet {
                    // A file with no keychain in it (its making was cut short, or another
                    // process is making it now): made below, as a new one.
                }
            }
            // Made (in memory, or a new file) with the store's own credential, then unlocked.
            try engine(&state).unlock(with: credential)
            state.lockWhenOpened = false
        }
    }

    /// Unlocks with the credential the store was created with, when that can be used again: a
    /// key file (read again) or any credential of an in-memory store. A file's passphrase or
    /// key bytes are not kept, so such stores need ``unlock(with:)`` (this throws
    /// ``KeychainError/param``).
    public func unlock() throws {
        guard let credential = state.withLock({ $0.credential }), keeps(credential) else { throw KeychainError.param }
        try unlock(with: credential)
    }

    /// Wraps the master key for a new credential (a new passphrase, key file or key) and
    /// re-encrypts nothing. The keychain must be unlocked.
    ///
    /// ```swift
    /// try store.changeCredential(to: .passphrase("new passphrase"))
    /// ```
    public func changeCredential(to credential: KeychainCredential) throws {
        // Under one hold of the lock: two changes at once leave what ``unlock()`` uses naming
        // the credential that is on disk.
        try waitingForWriteLock {
            try state.withLock { state in
                try engine(&state).changeCredential(to: credential)
                // What ``unlock()`` uses from now on, when it may be kept.
                state.credential = keeps(credential) ? credential : nil
            }
        }
    }

    /// Whether the store may keep a credential for ``unlock()``: a key file's URL, or anything
    /// for an in-memory store (meant for tests); not a file's passphrase or key bytes.
    private func keeps(_ credential: KeychainCredential) -> Bool {
        if case .memory = source { return true }
        return credential.isReusable
    }
}

extension KeychainStore {
    /// Runs `body` on the raw rows under the store's lock (tests and maintenance).
    func withStorage<T: Sendable>(_ body: (any RowStorage) throws -> T) throws -> T {
        try withEngine { try body($0.storage) }
    }
}
