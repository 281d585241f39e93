#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import WattleKeychain

/// A throw-away keychain file in a new private temporary folder, removed when this object is
/// released. Keep it alive for as long as its store or keychains are used.
///
/// ```swift
/// let temporary = try TemporaryKeychain()
/// let keychain = temporary.keychain(service: "api.example.com")
/// try keychain.set("token", forKey: "access")
/// ```
///
/// By default the keychain is opened with a key file in the same folder; pass a credential
/// (for example `.passphrase("pw", strength: .minimum)`) to test passphrase handling quickly.
public final class TemporaryKeychain: Sendable {
    /// The temporary folder (mode 0700) holding the keychain and its key file.
    public let directory: URL
    /// The keychain file.
    public let fileURL: URL
    /// The key file used when no credential was given.
    public let keyFileURL: URL
    /// The credential the keychain was created with.
    public let credential: KeychainCredential
    /// The open store.
    public let store: KeychainStore

    /// Creates the folder and opens a new keychain in it.
    public init(credential: KeychainCredential? = nil) throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("wattle-keychain-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(
            at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        self.directory = directory
        fileURL = directory.appendingPathComponent("test.keychain")
        keyFileURL = directory.appendingPathComponent("test.key")
        self.credential = credential ?? .keyFile(keyFileURL)
        do {
            store = try KeychainStore(fileURL: fileURL, credential: self.credential)
        } catch {
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
    }

    /// A keychain for a service in this store.
    public func keychain(service: String) -> Keychain {
        Keychain(service: service, store: store)
    }

    /// Opens the same file again as a separate store (as another process would).
    public func reopen(credential: KeychainCredential? = nil) throws -> KeychainStore {
        try KeychainStore(fileURL: fileURL, credential: credential ?? self.credential)
    }

    deinit {
        try? FileManager.default.removeItem(at: directory)
    }
}
