public import WattleKeychain

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
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
/// (A test process that is killed leaves its `wattle-keychain-*` folder in the temporary
/// folder.)
public final class TemporaryKeychain: Sendable {
    /// Owns the folder: its last holder's release removes it.
    private final class Folder: Sendable {
        let url: URL
        init(_ url: URL) { self.url = url }
        deinit { try? FileManager.default.removeItem(at: url) }
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
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("wattle-keychain-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(
            at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        folder = Folder(directory)
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
