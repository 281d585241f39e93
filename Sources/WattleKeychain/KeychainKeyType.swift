/// The algorithm of a key item (`kSecAttrKeyType`), an open set.
public struct KeychainKeyType: RawRepresentable, Sendable, Hashable, ExpressibleByStringLiteral {
    /// The algorithm's name.
    public let rawValue: String
    /// Creates a key type from its name.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// Creates a key type from a string literal.
    public init(stringLiteral value: String) { self.rawValue = value }

    /// RSA.
    public static let rsa: Self = "rsa"
    /// Elliptic curve on a NIST prime curve.
    public static let ecSECPrimeRandom: Self = "ecSECPrimeRandom"
    /// Ed25519.
    public static let ed25519: Self = "ed25519"
    /// X25519.
    public static let x25519: Self = "x25519"
    /// AES.
    public static let aes: Self = "aes"
}
