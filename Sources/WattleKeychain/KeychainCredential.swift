#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// What unlocks a keychain: a passphrase, a key file, or 32 key bytes.
///
/// The credential never encrypts items itself: it wraps the keychain's random master key,
/// which is stored only wrapped in the keychain file. Changing it
/// (``KeychainStore/changeCredential(to:)``) re-wraps the master key and re-encrypts nothing.
///
/// - A passphrase is stretched with Argon2id (`crypto_pwhash`); its limits and salt are kept
///   in the keychain file, so ``PassphraseStrength`` matters only when a keychain is created
///   or its credential changed.
/// - A key file holds exactly 32 random bytes; it is created (mode `0600`) with the keychain
///   when missing, and refused when the group or others may read or write it.
/// - Key bytes suit CI and containers, where a secret arrives in an environment variable.
///
/// A key file and key bytes are interchangeable: the bytes of a key file open its keychain.
///
/// Swift strings and arrays cannot be wiped, so a passphrase or key bytes held in this value
/// may linger in memory until it is released. What unlocks a keychain is stretched or copied
/// into guarded memory at once. A ``KeychainStore`` of a file drops its copy of a passphrase or
/// key bytes once the keychain is open (``KeychainStore/unlock(with:)`` needs them again), and
/// keeps a key file's URL, which is no secret, for ``KeychainStore/unlock()``. A store from
/// ``KeychainStore/inMemory(credential:)`` (meant for tests) keeps whatever credential it was
/// given or changed to, a passphrase or key bytes too, for as long as the store lives, so that
/// ``KeychainStore/unlock()`` works.
public struct KeychainCredential: Sendable {
    /// How much work stretching a passphrase costs (Argon2id limits of libsodium).
    public enum PassphraseStrength: Sendable, Hashable {
        /// The smallest limits: for tests only, never for real secrets.
        case minimum
        /// Interactive limits (about 64 MiB and a fraction of a second), the default.
        case interactive
        /// Moderate limits (about 256 MiB).
        case moderate
        /// Sensitive limits (about 1 GiB and seconds).
        case sensitive
    }

    enum Kind: Sendable {
        case passphrase(String, PassphraseStrength)
        case keyFile(URL)
        case key([UInt8])
    }

    let kind: Kind

    /// Whether the credential can be kept to open the keychain again: a key file's URL is not
    /// a secret; a passphrase or key bytes are.
    var isReusable: Bool {
        if case .keyFile = kind { return true }
        return false
    }

    /// A passphrase stretched with Argon2id.
    ///
    /// ```swift
    /// let store = try KeychainStore(fileURL: url, credential: .passphrase("correct horse"))
    /// ```
    public static func passphrase(_ passphrase: String, strength: PassphraseStrength = .interactive) -> Self {
        KeychainCredential(kind: .passphrase(passphrase, strength))
    }

    /// A file holding 32 key bytes, created with mode `0600` when the keychain is created.
    public static func keyFile(_ url: URL) -> Self {
        KeychainCredential(kind: .keyFile(url))
    }

    /// 32 key bytes supplied by the caller; any other length fails with ``KeychainError/param``.
    public static func key(_ bytes: some Sequence<UInt8>) -> Self {
        KeychainCredential(kind: .key(Array(bytes)))
    }
}

/// A credential's description, debug description and mirror name its kind only: a passphrase
/// or key bytes never show in a log line, `print`, `dump` or a debugger summary (nor does
/// anything holding a credential, such as a store).
extension KeychainCredential: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// `passphrase(<redacted>)`, `keyFile(<path>)` or `key(<redacted>)`.
    public var description: String {
        switch kind {
        case .passphrase: "KeychainCredential.passphrase(<redacted>)"
        case .keyFile(let url): "KeychainCredential.keyFile(\(url.path))"
        case .key: "KeychainCredential.key(<redacted>)"
        }
    }

    /// The same as ``description``.
    public var debugDescription: String { description }

    /// A mirror with no children, so `dump` shows only ``description``.
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}
