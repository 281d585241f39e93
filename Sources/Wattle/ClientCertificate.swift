public import WattleKeychain

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A client certificate and its private key, which a session presents to the servers that ask
/// for one (mutual TLS), host by host (``TrustPolicy/present(_:to:)``).
///
/// ```swift
/// let identity = try ClientCertificate(certificateFile: URL(filePath: "client.pem"), privateKeyFile: URL(filePath: "client.key"))
/// try identity.save(in: Keychain(service: "api.example.com"), forKey: "client-certificate")   // sealed; delete the key file
///
/// var trust = TrustPolicy()
/// trust.present(try ClientCertificate.load(from: Keychain(service: "api.example.com"), forKey: "client-certificate")!,
///               to: "api.example.com")
/// ```
///
/// Both parts are PEM: the certificate first, then any intermediate certificates the server
/// needs to build the chain; the key in PKCS#8 (`BEGIN PRIVATE KEY`, or `BEGIN ENCRYPTED
/// PRIVATE KEY` with its passphrase) or its RSA or EC forms (encrypted ones with a
/// `Proc-Type: 4,ENCRYPTED` header too). One text (one file) may hold both: each part takes its
/// own blocks. An encrypted key is decrypted by the TLS library at each new connection with the
/// passphrase given; a wrong passphrase fails the request with
/// ``WattleError/clientCertificate(host:reason:)``.
///
/// libcurl loads the key for each new connection to a host it is presented to, whether or not
/// that host asks for it; the TLS library checks there that the key matches the certificate,
/// and a mismatch fails the request with ``WattleError/clientCertificate(host:reason:)``.
///
/// The private key and its passphrase never appear in a description, a mirror, a log or an
/// error.
public struct ClientCertificate: Sendable, Hashable, CustomStringConvertible, CustomReflectable {
    /// The certificate chain, PEM: the client's certificate first. Only the `CERTIFICATE`
    /// blocks of the text given, never a key.
    public let certificatePEM: String
    /// The private key, PEM: the one key block of the text given. Internal: only the TLS
    /// handshake and the keychain read it.
    let privateKeyPEM: String
    /// The passphrase of an encrypted key (nil for a key in the clear). Internal, as the key.
    let privateKeyPassphrase: String?

    /// A certificate and key from PEM text (the same text for both when it holds both).
    ///
    /// - Parameter passphrase: the passphrase of an encrypted key; ignored for a key in the
    ///   clear.
    /// - Throws: ``WattleError/invalidRequest(reason:)`` when the certificate text holds no PEM
    ///   certificate, the key text no PEM private key or more than one, or the key is encrypted
    ///   and no passphrase is given (the reason never quotes them).
    public init(certificatePEM: String, privateKeyPEM: String, passphrase: String? = nil) throws(WattleError) {
        let certificates = PEMBlock.blocks(in: certificatePEM).filter { $0.label == "CERTIFICATE" }
        guard !certificates.isEmpty else {
            throw .invalidRequest(
                reason: "the client certificate is not a PEM certificate (-----BEGIN CERTIFICATE-----)")
        }
        // (OpenSSL would ask libcurl for a passphrase for a certificate with headers: one the
        // key's, or none, which libcurl's callback does not survive.)
        guard !certificates.contains(where: \.hasHeaders) else {
            throw .invalidRequest(
                reason: "the client certificate's PEM block has headers (Proc-Type:, …): give it without them")
        }
        let key = try Self.privateKeyBlock(in: privateKeyPEM)
        let encrypted = key.isEncrypted
        if encrypted {
            // (libcurl would hand OpenSSL's password callback a null passphrase: never without one.)
            guard let passphrase, !passphrase.isEmpty else {
                throw .invalidRequest(reason: "the client certificate's key is encrypted: give its passphrase")
            }
            guard !passphrase.utf8.contains(0) else {
                throw .invalidRequest(reason: "the client certificate key's passphrase holds a NUL character")
            }
        }
        self.certificatePEM = certificates.map(\.text).joined(separator: "\n") + "\n"
        self.privateKeyPEM = key.text + "\n"
        self.privateKeyPassphrase = encrypted ? passphrase : nil
    }

    /// Whether the private key is encrypted (and goes to the TLS library with its passphrase).
    public var isPrivateKeyEncrypted: Bool { privateKeyPassphrase != nil }

    /// A certificate and key read from PEM files (the same file for both when it holds both).
    ///
    /// - Throws: ``WattleError/fileError(path:reason:)`` for a file that cannot be read, else
    ///   as ``init(certificatePEM:privateKeyPEM:passphrase:)``.
    public init(certificateFile: URL, privateKeyFile: URL, passphrase: String? = nil) throws(WattleError) {
        try self.init(
            certificatePEM: try Self.read(certificateFile), privateKeyPEM: try Self.read(privateKeyFile),
            passphrase: passphrase)
    }

    /// Whether a PEM text's private key is encrypted, so that a caller knows to ask for its
    /// passphrase before ``init(certificatePEM:privateKeyPEM:passphrase:)``. False when the
    /// text holds no private key TLS can use, or more than one (the initialiser says which).
    public static func isEncryptedPrivateKey(pem: String) -> Bool {
        (try? privateKeyBlock(in: pem))?.isEncrypted ?? false
    }

    /// The one private key block of a text, of a kind TLS can use.
    private static func privateKeyBlock(in text: String) throws(WattleError) -> PEMBlock {
        let keys = PEMBlock.blocks(in: text).filter { $0.label.hasSuffix("PRIVATE KEY") }
        guard let key = keys.first else {
            throw .invalidRequest(
                reason: "the client certificate's key is not a PEM private key (-----BEGIN PRIVATE KEY-----)")
        }
        guard keys.count == 1 else {
            throw .invalidRequest(
                reason: "the client certificate's key text holds \(keys.count) private keys: give one")
        }
        guard ["PRIVATE KEY", "ENCRYPTED PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY"].contains(key.label) else {
            throw .invalidRequest(
                reason:
                    "the client certificate's key is a \(key.label), which TLS cannot use: convert it to PKCS#8 (BEGIN PRIVATE KEY)"
            )
        }
        return key
    }

    private static func read(_ file: URL) throws(WattleError) -> String {
        guard let data = FileManager.default.contents(atPath: file.path) else {
            let reason = access(file.path, R_OK) == 0 ? "cannot read it" : String(cString: strerror(errno))
            throw .fileError(path: file.path, reason: "cannot read the client certificate file: \(reason)")
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// Keeps the certificate and key (and an encrypted key's passphrase) sealed in a keychain
    /// item (one transaction, replacing any).
    public func save(in keychain: Keychain, forKey key: String) throws {
        try keychain.setCodable(
            Stored(
                certificatePEM: certificatePEM, privateKeyPEM: privateKeyPEM, privateKeyPassphrase: privateKeyPassphrase
            ),
            forKey: key)
    }

    /// The certificate and key kept under `key`, or nil when there are none.
    ///
    /// - Throws: the keychain's errors (``KeychainError/interactionNotAllowed`` while it is
    ///   locked, ``KeychainError/decode`` for an item that holds something else), and
    ///   ``WattleError/invalidRequest(reason:)`` when what it holds is not a certificate and key.
    public static func load(from keychain: Keychain, forKey key: String) throws -> ClientCertificate? {
        guard let stored = try keychain.codable(Stored.self, forKey: key) else { return nil }
        return try ClientCertificate(
            certificatePEM: stored.certificatePEM, privateKeyPEM: stored.privateKeyPEM,
            passphrase: stored.privateKeyPassphrase)
    }

    /// The stored form: not `Codable` itself, so that encoding one somewhere else, in the clear,
    /// takes a deliberate step.
    private struct Stored: Codable {
        var certificatePEM: String
        var privateKeyPEM: String
        /// Absent in items kept before passphrases were: decoded as nil.
        var privateKeyPassphrase: String?
    }

    /// The number of certificates in the chain.
    public var certificateCount: Int { certificatePEM.components(separatedBy: "-----BEGIN CERTIFICATE-----").count - 1 }

    /// `ClientCertificate(1 certificate, private key hidden)`.
    public var description: String {
        "ClientCertificate(\(certificateCount) certificate\(certificateCount == 1 ? "" : "s"), private key hidden)"
    }

    /// A mirror without the private key or its passphrase, so `dump` shows neither.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "certificatePEM": certificatePEM, "privateKeyPEM": "<hidden>",
                "privateKeyPassphrase": privateKeyPassphrase == nil ? "none" : "<hidden>",
            ])
    }
}

/// One `-----BEGIN label-----` … `-----END label-----` block of a PEM text.
struct PEMBlock {
    /// The label: `CERTIFICATE`, `PRIVATE KEY`, `ENCRYPTED PRIVATE KEY`, …
    var label: String
    /// The block, from its BEGIN line to its END line.
    var text: String

    /// Whether lines of the block are headers (`Proc-Type: 4,ENCRYPTED`, `DEK-Info: …`): base64
    /// has no colon.
    var hasHeaders: Bool { text.split(separator: "\n").dropFirst().dropLast().contains { $0.contains(":") } }

    /// Whether OpenSSL takes the block for an encrypted key: PKCS#8's encrypted form, or any
    /// with headers (OpenSSL reads `Proc-Type:` however it is spaced; any header is taken as
    /// encryption here, failing closed: never a key OpenSSL would ask a passphrase for without one).
    var isEncrypted: Bool { label == "ENCRYPTED PRIVATE KEY" || hasHeaders }

    /// The blocks of a text, in order; text outside them is skipped, as OpenSSL skips it. The
    /// empty line inside an encrypted key's block, after its `Proc-Type` and `DEK-Info`
    /// headers, is kept: OpenSSL needs it.
    static func blocks(in text: String) -> [PEMBlock] {
        var blocks: [PEMBlock] = []
        var current: (label: String, lines: [String])?
        for line in text.split(
            omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" })
        {
            let trimmed = line.trimmingWhitespace()
            if trimmed.isEmpty,
                current?.label.hasSuffix("PRIVATE KEY") != true || current?.lines.last?.hasPrefix("DEK-Info:") != true
            {
                continue
            }
            if let (label, lines) = current {
                current?.lines.append(trimmed)
                if trimmed == "-----END \(label)-----" {
                    blocks.append(PEMBlock(label: label, text: (lines + [trimmed]).joined(separator: "\n")))
                    current = nil
                }
            } else if trimmed.hasPrefix("-----BEGIN "), trimmed.hasSuffix("-----"), trimmed.count > 16 {
                current = (String(trimmed.dropFirst(11).dropLast(5)), [trimmed])
            }
        }
        return blocks
    }
}
