/// The checks on ``Request/omittedHeaders``, and the names as the transport gets them.
enum OmittedHeaders {
    /// Names no request can go without: `Host`, `Content-Length` and `Transfer-Encoding` frame
    /// the message (a server answers 400 to an HTTP/1.1 request without `Host`, and a body
    /// without its length cannot be read), and the cookie jar's cookies are added by libcurl
    /// whatever the header list says.
    private static let refused: [(name: String, reason: String)] = [
        ("Host", "it names the server, which HTTP/1.1 requires"),
        ("Content-Length", "it frames the body"),
        ("Transfer-Encoding", "it frames the body"),
        ("Cookie", "libcurl adds the cookie jar's cookies whatever the request says: use a session with cookies .none"),
    ]

    /// The names, each once (the first spelling kept), after checking them against the
    /// request's own headers.
    ///
    /// - Throws: ``WattleError/invalidRequest(reason:)`` naming the first name refused.
    static func checked(_ names: [String], requestHeaders: HTTPHeaders) throws(WattleError) -> [String] {
        var unique: [String] = []
        unique.reserveCapacity(names.count)
        for name in names {
            guard !name.isEmpty, name.utf8.allSatisfy(HTTPHeaders.isTokenByte) else {
                throw .invalidRequest(
                    reason: "the omitted header name \"\(Redaction.escaped(name))\" is not an HTTP token")
            }
            if let refusal = refused.first(where: { $0.name.caseInsensitiveEquals(name) }) {
                throw .invalidRequest(reason: "the header \(refusal.name) cannot be omitted: \(refusal.reason)")
            }
            if requestHeaders.contains(name) {
                throw .invalidRequest(
                    reason: "the header \(name) is both set and omitted by the request: remove it from one of the two")
            }
            if !unique.contains(where: { $0.caseInsensitiveEquals(name) }) { unique.append(name) }
        }
        return unique
    }

    /// Whether `names` holds `name`, in any case.
    static func contains(_ names: [String], _ name: String) -> Bool {
        names.contains { $0.caseInsensitiveEquals(name) }
    }
}
