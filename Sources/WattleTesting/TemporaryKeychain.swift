public import WattleKeychain

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// A throw-away keychain file in a new private temporary folder, removed once this object and
/// every store and keychain it handed out are released.
///
/// ```swift
/// let keychain = try TemporaryKeychain().keychain(service: "api.example.com")
/// try keychain.set("token", forKey: "access")
/// ```
///
/// By default the keychain is opened with a key file in the same folder; pass a credential
/// (for example `.passphrase("pw", strength: .minimum)`) to test passphrase handling quickly.
///
/// A test process that is killed (or crashes, or exits without releasing) cannot remove its
/// folder: each folder holds a lock (`flock` on its `.owner` file) for as long as its
/// process lives, and the first `TemporaryKeychain` of a later process removes the
/// `wattle-keychain-*` folders whose lock is free and over a minute old.
public final class TemporaryKeychain: Sendable {
    /// Owns the folder: its last holder's release removes it.
    private final class Folder: Sendable {
        let url: URL
        /// The `.owner` file's descriptor, locked while the folder is in use.
        private let owner: Int32

        /// Makes the folder (0700) and takes its lock.
        init(_ url: URL) throws {
            try FileManager.default.createDirectory(
                at: url, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            let owner = open(
                url.appendingPathComponent(TemporaryKeychain.ownerFile).path,
                O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
            guard owner >= 0 else {
                let code = errno
                try? FileManager.default.removeItem(at: url)
                throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)
            }
            // (A file system without locks: the folder is removed on release only, as before.)
            _ = flock(owner, LOCK_EX | LOCK_NB)
            self.url = url
            self.owner = owner
        }

        deinit {
            try? FileManager.default.removeItem(at: url)
            close(owner)
        }
    }

    /// The name of the file each folder's lock is taken on.
    static let ownerFile = ".owner"
    /// The prefix of the folders' names.
    static let folderPrefix = "wattle-keychain-"

    /// Removes the folders left by processes that ended without removing them, once per process.
    private static let sweptOnce: Void = removeStaleFolders(in: FileManager.default.temporaryDirectory)

    /// Removes every `wattle-keychain-*` folder in `parent` whose `.owner` file is over
    /// `minimumAge` old (so a folder being made, whose lock is not taken yet, is left) and not
    /// locked: its process has ended. A folder without the file (another program's, or from
    /// before the files were locked) is left.
    static func removeStaleFolders(in parent: URL, minimumAge: Duration = .seconds(60)) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: parent.path) else { return }
        let now = time(nil)
        for name in names where name.hasPrefix(folderPrefix) {
            let folder = parent.appendingPathComponent(name, isDirectory: true)
            let ownerPath = folder.appendingPathComponent(ownerFile).path
            var info = stat()
            // This user's private folder (as `init` makes them), not a link or another's.
            guard lstat(folder.path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR, info.st_uid == getuid(),
                info.st_mode & 0o077 == 0
            else { continue }
            guard lstat(ownerPath, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_uid == getuid() else {
                continue
            }
            guard now - info.st_mtim.tv_sec >= minimumAge.components.seconds else { continue }
            let descriptor = open(ownerPath, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
            guard descriptor >= 0 else { continue }
            defer { close(descriptor) }
            // Free: its process is gone. Removed while this process holds the lock, so no one
            // else's sweep removes it at the same time.
            guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else { continue }
            try? FileManager.default.removeItem(at: folder)
        }
    }

    private let folder: Folder
    /// The temporary folder (mode 0700) holding the keychain and its key file.
    public var directory: URL { folder.url }
    /// The keychain file.
    public let fileURL: URL
    /// The key file used when no credential was given.
    public let keyFileURL: URL
    /// The credential the keychain was created with.
    public let credential: KeychainCredential
    /// The open store. It keeps the folder, so a keychain made from it outlives this object.
    public let store: KeychainStore

    /// Creates the folder and opens a new keychain in it.
    public init(credential: KeychainCredential? = nil) throws {
        Self.sweptOnce
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("\(Self.folderPrefix)\(UUID().uuidString)", isDirectory: true)
        folder = try Folder(directory)
        fileURL = directory.appendingPathComponent("test.keychain")
        keyFileURL = directory.appendingPathComponent("test.key")
        self.credential = credential ?? .keyFile(keyFileURL)
        store = try KeychainStore(fileURL: fileURL, credential: self.credential, keepingAlive: folder)
    }

    /// A keychain for a service in this store.
    public func keychain(service: String) -> Keychain {
        Keychain(service: service, store: store)
    }

    /// Opens the same file again as a separate store (as another process would). It keeps the
    /// folder too.
    public func reopen(credential: KeychainCredential? = nil) throws -> KeychainStore {
        try KeychainStore(fileURL: fileURL, credential: credential ?? self.credential, keepingAlive: folder)
    }
}
