public import Foundation

/// The JSON `/echo` answers with: the request as the server read it. Tests decode it with this
/// same type, so the two sides cannot drift apart.
public struct EchoAnswer: Codable, Sendable {
    /// The request's method.
    public var method: String
    /// The request's path, without the query.
    public var path: String
    /// The raw query, without `?`; empty when there is none.
    public var query: String
    /// Each header field as `[name, value]`, in the order sent, repeated names kept.
    public var headers: [[String]]
    /// The body as UTF-8 text, each ill-formed sequence shown as U+FFFD.
    public var body: String
    /// The body's length in bytes.
    public var bodyLength: Int
    /// The body's exact bytes, in base64.
    public var bodyBase64: String

    /// The value of the first header field named `name` (case-insensitively), if any.
    public func header(_ name: String) -> String? {
        headerValues(name).first
    }

    /// The values of every header field named `name` (case-insensitively), in order.
    public func headerValues(_ name: String) -> [String] {
        headers.filter { $0[0].lowercased() == name.lowercased() }.map { $0[1] }
    }

    /// The body's exact bytes.
    public var bodyData: Data { Data(base64Encoded: bodyBase64) ?? Data() }
}
