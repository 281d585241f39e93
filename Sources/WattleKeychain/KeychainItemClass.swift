/// The class of a keychain item, as in Apple's `kSecClass`.
///
/// The class decides which attributes make up an item's identity (what makes two items
/// duplicates), see ``KeychainAttributes``:
///
/// | Class | Identity |
/// |---|---|
/// | ``genericPassword`` | account, service, access group, synchronizable |
/// | ``internetPassword`` | account, security domain, server, protocol, authentication type, port, path, access group, synchronizable |
/// | ``certificate`` | certificate type, issuer, serial number, access group, synchronizable |
/// | ``key`` | key class, application label, application tag, key type, key size, effective key size, access group, synchronizable |
/// | ``identity`` | certificate type, issuer, serial number, access group, synchronizable (the certificate's identity, as on Apple platforms) |
public enum KeychainItemClass: UInt8, Sendable, Hashable, CaseIterable {
    /// A password for anything, identified by service and account (`kSecClassGenericPassword`).
    case genericPassword = 1
    /// A password for a server, identified by server, account, protocol, port, path...
    /// (`kSecClassInternetPassword`).
    case internetPassword = 2
    /// A certificate, stored as its DER bytes (`kSecClassCertificate`).
    case certificate = 3
    /// A cryptographic key, stored as its bytes (`kSecClassKey`).
    case key = 4
    /// A certificate with its private key, stored as bytes such as PKCS#12 (`kSecClassIdentity`).
    case identity = 5
}
