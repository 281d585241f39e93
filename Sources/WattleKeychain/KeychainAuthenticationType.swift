/// The authentication type of an internet password (`kSecAttrAuthenticationType`), an open set.
public struct KeychainAuthenticationType: RawRepresentable, Sendable, Hashable, ExpressibleByStringLiteral {
    /// The type's name.
    public let rawValue: String
    /// Creates a type from its name.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// Creates a type from a string literal.
    public init(stringLiteral value: String) { self.rawValue = value }

    /// The default authentication.
    public static let `default`: Self = "default"
    /// HTTP Basic.
    public static let httpBasic: Self = "httpBasic"
    /// HTTP Digest.
    public static let httpDigest: Self = "httpDigest"
    /// An HTML form.
    public static let htmlForm: Self = "htmlForm"
    /// A bearer token.
    public static let bearer: Self = "bearer"
}
