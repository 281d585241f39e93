/// The class of a key item (`kSecAttrKeyClass`).
public struct KeychainKeyClass: RawRepresentable, Sendable, Hashable, ExpressibleByStringLiteral {
    /// The class's name.
    public let rawValue: String
    /// Creates a key class from its name.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// Creates a key class from a string literal.
    public init(stringLiteral value: String) { self.rawValue = value }

    /// A public key.
    public static let `public`: Self = "public"
    /// A private key.
    public static let `private`: Self = "private"
    /// A symmetric key.
    public static let symmetric: Self = "symmetric"
}
