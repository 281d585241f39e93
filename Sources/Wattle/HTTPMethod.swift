/// An HTTP request method, such as `GET` or `POST`.
///
/// A string-backed value rather than a closed enum, so any method a server understands can be
/// used: `HTTPMethod(rawValue: "PROPFIND")`. A method containing anything but RFC 9110 token
/// characters is refused when the request is sent.
public struct HTTPMethod: RawRepresentable, Hashable, Sendable, CustomStringConvertible,
    ExpressibleByStringLiteral
{
    /// The method as sent on the request line, e.g. `"GET"`.
    public let rawValue: String

    /// Creates a method from its name, as sent on the wire.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Creates a method from a string literal: `let method: HTTPMethod = "PURGE"`.
    public init(stringLiteral value: String) { self.rawValue = value }

    /// `GET`
    public static let get: HTTPMethod = "GET"
    /// `HEAD`
    public static let head: HTTPMethod = "HEAD"
    /// `POST`
    public static let post: HTTPMethod = "POST"
    /// `PUT`
    public static let put: HTTPMethod = "PUT"
    /// `PATCH`
    public static let patch: HTTPMethod = "PATCH"
    /// `DELETE`
    public static let delete: HTTPMethod = "DELETE"
    /// `OPTIONS`
    public static let options: HTTPMethod = "OPTIONS"

    /// The method name.
    public var description: String { rawValue }

    /// Whether the method is idempotent per RFC 9110 (safe to retry): GET, HEAD, PUT, DELETE,
    /// OPTIONS and TRACE.
    public var isIdempotent: Bool {
        switch rawValue {
        case "GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE": true
        default: false
        }
    }

    /// Whether a request with this method says how long its body is even when it has none
    /// (`Content-Length: 0`): POST, PUT and PATCH, whose content has a meaning (RFC 9110
    /// section 8.6; some servers answer 411 Length Required without it).
    var sendsLengthWithoutBody: Bool {
        switch rawValue {
        case "POST", "PUT", "PATCH": true
        default: false
        }
    }

    /// Whether this is a valid RFC 9110 method token.
    var isValidToken: Bool { !rawValue.isEmpty && rawValue.utf8.allSatisfy(HTTPHeaders.isTokenByte) }
}
