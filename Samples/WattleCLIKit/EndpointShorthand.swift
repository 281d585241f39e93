import Wattle

/// httpie's URL shorthands for the `wattle` command line.
public enum EndpointShorthand {
    /// The endpoint a command-line URL argument means:
    /// - `:3000/path` is `http://localhost:3000/path` (`:/path` and `:` too), as in httpie;
    /// - with no base URL, `host[:port][/path]` without a scheme is `http://host[:port][/path]`,
    ///   as httpie and curl take it (`localhost:8080/users`, `api.example.test/v1`), when the
    ///   host names itself as one: with a dot, a port (digits), or as `localhost`.
    ///
    /// Anything else stands as written: a URL with a scheme (and whatever the library reads as
    /// one, `file:/etc/passwd` or the typo `http:/host`, which it refuses), a path under the base
    /// URL, a word starting with `/`, and one with user-info (`alice:pw@host/…`), which the
    /// library refuses without a scheme so that a password is never sent where it is not meant to go.
    public static func expanded(_ word: String, hasBaseURL: Bool) -> String {
        let utf8 = Array(word.utf8)
        if utf8.first == UInt8(ascii: ":") {
            let digits = utf8.dropFirst().prefix(while: isDigit)
            let rest = utf8.dropFirst(1 + digits.count)
            guard rest.isEmpty || rest.first == UInt8(ascii: "/") || rest.first == UInt8(ascii: "?") else {
                return word
            }
            return "http://localhost" + (digits.isEmpty ? "" : ":") + String(decoding: utf8.dropFirst(), as: UTF8.self)
        }
        guard !hasBaseURL, let first = utf8.first, first != UInt8(ascii: "/"),
            EndpointResolver.scheme(of: word) == nil
        else { return word }
        let authority = utf8.prefix { $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") }
        guard !authority.contains(UInt8(ascii: "@")) else { return word }
        let host = authority.prefix { $0 != UInt8(ascii: ":") }
        let port = authority.dropFirst(host.count + 1)
        let hasPort = host.count < authority.count
        // A host names itself: a dot, a port or `localhost` (`users/42` is a path, and the error
        // then says to give a scheme or a base URL).
        guard !host.isEmpty, port.allSatisfy(isDigit),
            host.contains(UInt8(ascii: ".")) || hasPort
                || String(decoding: host, as: UTF8.self).lowercased() == "localhost"
        else { return word }
        return "http://" + word
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
}
