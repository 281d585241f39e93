#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import WattleKeychain
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
/// needs to build the chain; the key unencrypted, in PKCS#8 (`BEGIN PRIVATE KEY`) or its
/// RSA or EC forms. Decrypt an encrypted key first (`openssl pkey -in key.pem`), and keep it in
/// a keychain rather than a file. Whether the key matches the certificate is checked by the TLS
/// library at the first handshake: a mismatch fails that request with
/// ``WattleError/clientCertificate(host:reason:)``.
///
/// The private key never appears in a description, a mirror, a log or an error.
public struct ClientCertificate: Sendable, Hashable, CustomStringConvertible, CustomReflectable {
    /// The certificate chain, PEM: the client's certificate first.
    public let certificatePEM: String
    /// The private key, PEM. Internal: only the TLS handshake and the keychain read it.
    let privateKeyPEM: String

    /// A certificate and key from PEM text.
    ///
    /// - Throws: ``WattleError/invalidRequest(reason:)`` when the certificate text holds no PEM
    ///   certificate, or the key text no unencrypted PEM private key (the reason never quotes it).
    public init(certificatePEM: String, privateKeyPEM: String) throws(WattleError) {
        guard certificatePEM.contains("-----BEGIN CERTIFICATE-----"), certificatePEM.contains("-----END CERTIFICATE-----") else {
            throw .invalidRequest(reason: "the client certificate is not a PEM certificate (-----BEGIN CERTIFICATE-----)")
        }
        guard let begin = privateKeyPEM.firstRange(of: "-----BEGIN "), privateKeyPEM.contains("PRIVATE KEY-----"),
            privateKeyPEM.contains("-----END ")
        else {
            throw .invalidRequest(reason: "the client certificate's key is not a PEM private key (-----BEGIN PRIVATE KEY-----)")
        }
        let label = privateKeyPEM[begin.upperBound...].prefix { $0 != "-" }
        if label.contains("ENCRYPTED") || privateKeyPEM.contains("Proc-Type: 4,ENCRYPTED") {
            throw .invalidRequest(
                reason: "the client certificate's key is encrypted: decrypt it (openssl pkey -in key.pem -out plain.pem) and keep it in a keychain")
        }
        self.certificatePEM = certificatePEM
        self.privateKeyPEM = privateKeyPEM
    }

    /// A certificate and key read from PEM files (the same file for both when it holds both).
    ///
    /// - Throws: ``WattleError/fileError(path:reason:)`` for a file that cannot be read, else
    ///   as ``init(certificatePEM:privateKeyPEM:)``.
    public init(certificateFile: URL, privateKeyFile: URL) throws(WattleError) {
        try self.init(certificatePEM: try Self.read(certificateFile), privateKeyPEM: try Self.read(privateKeyFile))
    }

    private static func read(_ file: URL) throws(WattleError) -> String {
        guard let data = FileManager.default.contents(atPath: file.path) else {
            let reason = access(file.path, R_OK) == 0 ? "cannot read it" : String(cString: strerror(errno))
            throw .fileError(path: file.path, reason: "cannot read the client certificate file: \(reason)")
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// Keeps the certificate and key sealed in a keychain item (one transaction, replacing any).
    public func save(in keychain: Keychain, forKey key: String) throws {
        try keychain.setCodable(Stored(certificatePEM: certificatePEM, privateKeyPEM: privateKeyPEM), forKey: key)
    }

    /// The certificate and key kept under `key`, or nil when there are none.
    ///
    /// - Throws: the keychain's errors (``KeychainError/interactionNotAllowed`` while it is
    ///   locked, ``KeychainError/decode`` for an item that holds something else), and
    ///   ``WattleError/invalidRequest(reason:)`` when what it holds is not a certificate and key.
    public static func load(from keychain: Keychain, forKey key: String) throws -> ClientCertificate? {
        guard let stored = try keychain.codable(Stored.self, forKey: key) else { return nil }
        return try ClientCertificate(certificatePEM: stored.certificatePEM, privateKeyPEM: stored.privateKeyPEM)
    }

    /// The stored form: not `Codable` itself, so that encoding one somewhere else, in the clear,
    /// takes a deliberate step.
    private struct Stored: Codable {
        var certificatePEM: String
        var privateKeyPEM: String
    }

    /// The number of certificates in the chain.
    public var certificateCount: Int { certificatePEM.components(separatedBy: "-----BEGIN CERTIFICATE-----").count - 1 }

    /// `ClientCertificate(1 certificate, private key hidden)`.
    public var description: String {
        "ClientCertificate(\(certificateCount) certificate\(certificateCount == 1 ? "" : "s"), private key hidden)"
    }

    /// A mirror without the private key, so `dump` shows none.
    public var customMirror: Mirror {
        Mirror(self, children: ["certificatePEM": certificatePEM, "privateKeyPEM": "<hidden>"])
    }
}
