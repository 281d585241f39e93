import Crypto
public import Foundation
import SwiftASN1
import X509

/// A certificate and its private key, both PEM, made fresh at run time.
///
/// ```swift
/// let identity = try TLSIdentity.selfSigned(names: ["localhost"], addresses: ["127.0.0.1"])
/// let server = try await DemoServer.start(tls: identity)
/// ```
public struct TLSIdentity: Sendable {
    /// The certificate, PEM.
    public let certificatePEM: String
    /// The private key, PEM (PKCS#8).
    public let privateKeyPEM: String

    /// A self-signed P-256 certificate for the given DNS names and IP addresses.
    ///
    /// - Parameters:
    ///   - validFrom, validUntil: the validity window (default: an hour ago to a day from now);
    ///     pass dates in the past to make an expired certificate.
    public static func selfSigned(
        names: [String], addresses: [String] = [], validFrom: Date = Date(timeIntervalSinceNow: -3600),
        validUntil: Date = Date(timeIntervalSinceNow: 86_400)
    ) throws -> TLSIdentity {
        let key = P256.Signing.PrivateKey()
        let subject = try DistinguishedName {
            CommonName(names.first ?? addresses.first ?? "wattle-demo")
            OrganizationName("Wattle demo")
        }
        var alternativeNames: [GeneralName] = names.map { .dnsName($0) }
        for address in addresses {
            alternativeNames.append(.ipAddress(ASN1OctetString(contentBytes: ArraySlice(try Self.ipBytes(address)))))
        }
        let extensions = try Certificate.Extensions {
            Critical(BasicConstraints.notCertificateAuthority)
            Critical(KeyUsage(digitalSignature: true, keyEncipherment: true))
            try ExtendedKeyUsage([.serverAuth])
            SubjectAlternativeNames(alternativeNames)
        }
        let certificate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(key.publicKey),
            notValidBefore: validFrom, notValidAfter: validUntil, issuer: subject, subject: subject,
            signatureAlgorithm: .ecdsaWithSHA256, extensions: extensions, issuerPrivateKey: .init(key))
        return TLSIdentity(
            certificatePEM: try certificate.serializeAsPEM().pemString, privateKeyPEM: key.pemRepresentation)
    }

    /// A certificate authority: a self-signed P-256 CA certificate that ``issuedClientCertificate(commonName:)`` signs with.
    public static func certificateAuthority(name: String) throws -> TLSIdentity {
        let key = P256.Signing.PrivateKey()
        let subject = try DistinguishedName {
            CommonName(name)
            OrganizationName("Wattle demo")
        }
        let extensions = try Certificate.Extensions {
            Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
            Critical(KeyUsage(keyCertSign: true))
        }
        let certificate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(key.publicKey),
            notValidBefore: Date(timeIntervalSinceNow: -3600), notValidAfter: Date(timeIntervalSinceNow: 86_400),
            issuer: subject, subject: subject, signatureAlgorithm: .ecdsaWithSHA256, extensions: extensions,
            issuerPrivateKey: .init(key))
        return TLSIdentity(
            certificatePEM: try certificate.serializeAsPEM().pemString, privateKeyPEM: key.pemRepresentation)
    }

    /// A client certificate (extended key usage clientAuth) for `commonName`, issued by this
    /// identity, which must be a ``certificateAuthority(name:)``.
    public func issuedClientCertificate(commonName: String) throws -> TLSIdentity {
        let issuer = try Certificate(pemEncoded: certificatePEM)
        let issuerKey = try P256.Signing.PrivateKey(pemRepresentation: privateKeyPEM)
        let key = P256.Signing.PrivateKey()
        let subject = try DistinguishedName {
            CommonName(commonName)
            OrganizationName("Wattle demo")
        }
        let extensions = try Certificate.Extensions {
            Critical(BasicConstraints.notCertificateAuthority)
            Critical(KeyUsage(digitalSignature: true))
            try ExtendedKeyUsage([.clientAuth])
        }
        let certificate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(key.publicKey),
            notValidBefore: Date(timeIntervalSinceNow: -3600), notValidAfter: Date(timeIntervalSinceNow: 86_400),
            issuer: issuer.subject, subject: subject, signatureAlgorithm: .ecdsaWithSHA256, extensions: extensions,
            issuerPrivateKey: .init(issuerKey))
        return TLSIdentity(
            certificatePEM: try certificate.serializeAsPEM().pemString, privateKeyPEM: key.pemRepresentation)
    }

    private static func ipBytes(_ address: String) throws -> [UInt8] {
        let parts = address.split(separator: ".").compactMap { UInt8($0) }
        guard parts.count == 4 else { throw TLSIdentityError.unsupportedAddress(address) }
        return parts
    }
}

/// Why a ``TLSIdentity`` could not be made.
public enum TLSIdentityError: Error, Sendable {
    /// Only dotted IPv4 addresses are supported in certificates here.
    case unsupportedAddress(String)
}
