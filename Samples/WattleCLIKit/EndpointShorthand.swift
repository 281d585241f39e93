/// httpie's URL shorthands for the `wattle` command line.
public enum EndpointShorthand {
    /// The endpoint a command-line URL argument means:
    /// - `:3000/path` is `http://localhost:3000/path` (`:/path` and `:` too), as in httpie;
    /// - with no base URL, `host[:port][/path]` without a scheme is `http://host[:port][/path]`,
    ///   as httpie and curl take it (`localhost:8080/users`, `api.example.test/v1`), when the
    ///   host names itself as one: with a dot, a port, or as `localhost`.
    ///
    /// Anything else stands as written: a URL with a scheme, a path under the base URL, a word
    /// starting with `/`, and one with user-info (`alice:pw@host/…`), which the library refuses
    /// without a scheme so that a password is never sent where it is not meant to go.
    public static func expanded(_ word: String, hasBaseURL: Bool) -> String {
        let utf8 = Array(word.utf8)
        if utf8.first == UInt8(ascii: ":") {
            let digits = utf8.dropFirst().prefix { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
            let rest = utf8.dropFirst(1 + digits.count)
            guard rest.isEmpty || rest.first == UInt8(ascii: "/") || rest.first == UInt8(ascii: "?") else {
                return word
            }
            return "http://localhost" + (digits.isEmpty ? "" : ":") + String(decoding: utf8.dropFirst(), as: UTF8.self)
        }
        guard !hasBaseURL, let first = utf8.first, first != UInt8(ascii: "/"), !hasScheme(utf8) else { return word }
        let authority = utf8.prefix { $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") }
        // A host names itself: a dot, a port or `localhost` (`users/42` is a path, and the error
        // then says to give a scheme or a base URL).
        let host = authority.prefix { $0 != UInt8(ascii: ":") }
        guard !authority.contains(UInt8(ascii: "@")),
            host.contains(UInt8(ascii: ".")) || host.count < authority.count
                || String(decoding: host, as: UTF8.self).lowercased() == "localhost"
        else { return word }
        return "http://" + word
    }

    /// Whether the text starts with an RFC 3986 scheme and `://`.
    private static func hasScheme(_ utf8: [UInt8]) -> Bool {
        guard let first = utf8.first, isLetter(first) else { return false }
        var index = 1
        while index < utf8.count, isLetter(utf8[index]) || isDigit(utf8[index]) || "+-.".utf8.contains(utf8[index]) {
            index += 1
        }
        return utf8[index...].starts(with: "://".utf8)
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
            || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
}
