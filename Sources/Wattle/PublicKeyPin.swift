import CCurl
import CSodium

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Computes `sha256//` public-key pins, for ``TrustPolicy/pin(_:to:)``, without openssl
/// incantations.
///
/// A pin is `sha256//` followed by the base64 of the SHA-256 of the certificate's DER
/// `SubjectPublicKeyInfo` — the format of curl's `--pinnedpubkey`. It survives certificate
/// renewals that keep the key.
///
/// ```swift
/// let pin = try PublicKeyPin.pin(forCertificatePEM: pemText)
/// let live = try await PublicKeyPin.pin(ofServer: "dev.internal.test", port: 8443)
/// ```
public enum PublicKeyPin {
    /// The pin of the first certificate in a PEM text.
    ///
    /// - Throws: ``WattleError/invalidRequest(reason:)`` when the text holds no parsable certificate.
    public static func pin(forCertificatePEM pem: String) throws(WattleError) -> String {
        guard let first = try pins(forPEM: pem).first else {
            throw .invalidRequest(reason: "the PEM text holds no certificate")
        }
        return first
    }

    /// The pins of every certificate in a PEM text, in order.
    public static func pins(forPEM pem: String) throws(WattleError) -> [String] {
        try PEM.certificates(in: pem).map { der throws(WattleError) in try pin(forCertificateDER: der) }
    }

    /// The pin of a DER-encoded certificate.
    public static func pin(forCertificateDER der: [UInt8]) throws(WattleError) -> String {
        guard let spki = DER.subjectPublicKeyInfo(ofCertificate: der) else {
            throw .invalidRequest(reason: "the certificate could not be parsed (no SubjectPublicKeyInfo found)")
        }
        var digest = [UInt8](repeating: 0, count: Int(crypto_hash_sha256_BYTES))
        guard sodiumReady else { throw .invalidRequest(reason: "libsodium could not be initialised") }
        crypto_hash_sha256(&digest, spki, UInt64(spki.count))
        return "sha256//" + Data(digest).base64EncodedString()
    }

    /// Connects to `host:port`, completes a TLS handshake without sending a request, and
    /// returns the pin of the certificate the server presents.
    ///
    /// The certificate is read, not trusted: compare the pin with one obtained another way
    /// before relying on it. The host name is still checked against the certificate.
    ///
    /// - Throws: ``WattleError/invalidRequest(reason:)``, unsent, when `host` is not a bare host
    ///   name, IPv4 address or IPv6 literal (bracketed or not) or `port` is not 1 to 65535;
    ///   ``WattleError/timedOut(phase:after:url:)`` (`connect`) when the handshake takes
    ///   longer than `timeout`; ``WattleError/cancelled`` when the task is cancelled: libcurl
    ///   checks about once a second while it waits for the server.
    public static func pin(ofServer host: String, port: Int = 443, timeout: Duration = .seconds(10))
        async throws(WattleError) -> String
    {
        let pem = try await ServerCertificateReader.leafCertificatePEM(host: host, port: port, timeout: timeout)
        return try pin(forCertificatePEM: pem)
    }
}

/// `sodium_init()`, once for the process (it is idempotent, but we keep the rule).
private let sodiumReady: Bool = sodium_init() >= 0

/// PEM armour.
enum PEM {
    /// The DER bytes of each `CERTIFICATE` block.
    static func certificates(in text: String) -> [[UInt8]] {
        var result: [[UInt8]] = []
        var body: String?
        for line in text.split(whereSeparator: \.isNewline).map({ String($0).trimmingWhitespace() }) {
            if line == "-----BEGIN CERTIFICATE-----" {
                body = ""
            } else if line == "-----END CERTIFICATE-----" {
                if let encoded = body, let data = Data(base64Encoded: encoded) { result.append(Array(data)) }
                body = nil
            } else if body != nil {
                body! += line
            }
        }
        return result
    }
}

/// Just enough DER to find a certificate's SubjectPublicKeyInfo.
enum DER {
    /// One element: tag, and the ranges of the whole element and of its content.
    struct Element {
        var tag: UInt8
        var whole: Range<Int>
        var content: Range<Int>
    }

    static func element(in bytes: [UInt8], at offset: Int) -> Element? {
        guard offset + 2 <= bytes.count else { return nil }
        let tag = bytes[offset]
        var index = offset + 1
        var length = Int(bytes[index])
        index += 1
        if length & 0x80 != 0 {
            let count = length & 0x7F
            guard count > 0, count <= 4, index + count <= bytes.count else { return nil }
            length = 0
            for _ in 0..<count {
                length = (length << 8) | Int(bytes[index])
                index += 1
            }
        }
        guard length >= 0, index + length <= bytes.count else { return nil }
        return Element(tag: tag, whole: offset..<(index + length), content: index..<(index + length))
    }

    /// Certificate → tbsCertificate → the seventh field (sixth without the optional version).
    static func subjectPublicKeyInfo(ofCertificate bytes: [UInt8]) -> [UInt8]? {
        guard let certificate = element(in: bytes, at: 0), certificate.tag == 0x30,
            let tbs = element(in: bytes, at: certificate.content.lowerBound), tbs.tag == 0x30
        else { return nil }
        var offset = tbs.content.lowerBound
        var fields: [Element] = []
        while offset < tbs.content.upperBound, fields.count < 8, let field = element(in: bytes, at: offset) {
            fields.append(field)
            offset = field.whole.upperBound
        }
        let skip = fields.first?.tag == 0xA0 ? 1 : 0
        // serial, signature, issuer, validity, subject, then subjectPublicKeyInfo.
        guard fields.count > skip + 5, fields[skip + 5].tag == 0x30 else { return nil }
        return Array(bytes[fields[skip + 5].whole])
    }
}
