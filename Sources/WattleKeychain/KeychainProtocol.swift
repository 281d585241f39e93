/// The protocol of an internet password (`kSecAttrProtocol`), an open set of names.
///
/// ```swift
/// let query = KeychainQuery.internetPassword(server: "api.example.com", protocol: .https)
/// ```
public struct KeychainProtocol: RawRepresentable, Sendable, Hashable, ExpressibleByStringLiteral {
    /// The protocol's name.
    public let rawValue: String
    /// Creates a protocol from its name.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// Creates a protocol from a string literal.
    public init(stringLiteral value: String) { self.rawValue = value }

    /// HTTP.
    public static let http: Self = "http"
    /// HTTPS.
    public static let https: Self = "https"
    /// FTP.
    public static let ftp: Self = "ftp"
    /// SSH.
    public static let ssh: Self = "ssh"
    /// SMTP.
    public static let smtp: Self = "smtp"
    /// IMAP.
    public static let imap: Self = "imap"
}
