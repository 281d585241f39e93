import Foundation

/// The JSON `/echo` answers with: the request as the server read it.
struct EchoAnswer: Encodable {
    var method: String
    var path: String
    var query: String
    var headers: [[String]]
    /// The body as UTF-8 text, each ill-formed sequence shown as U+FFFD.
    var body: String
    var bodyLength: Int
    var bodyBase64: String
}
