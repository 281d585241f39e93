/// Finds the user-info of a URL's text (RFC 3986 section 3.2.1: `user:password@` at the start of
/// the authority), on the bytes, without parsing the URL.
package enum UserInfo {
    /// Whether `url` starts with `scheme://` and its authority (up to the first `/`, `?` or `#`)
    /// holds an `@`: credentials of the URL's own, which libcurl sends as HTTP Basic. False for
    /// a relative reference, and for an `@` in a path, a query or a fragment.
    package static func isPresent(in url: String) -> Bool {
        guard let authority = authority(in: url) else { return false }
        return url.utf8[authority].contains(UInt8(ascii: "@"))
    }

    /// The authority of `url` (``PercentEncoding/authority(_:)``) when it starts with a
    /// `scheme://`; nil otherwise (a `//host` reference is a path to a session's endpoints, and a
    /// `://` later on, in a query's `redirect_uri=https://…`, starts no authority).
    static func authority(in url: String) -> Range<String.Index>? {
        guard url.utf8.first != UInt8(ascii: "/") else { return nil }
        return PercentEncoding.authority(url.utf8)
    }

    /// Where the credentials of a `user:password@host…` written without a scheme
    /// (`alice:s3cret@host/me`) end: the UTF-8 offset after the last `@` before the first `/`,
    /// `?` or `#`, when a `:` comes before that `@`. Nil for anything else: `@types/node` and
    /// `alice@example.com` (no colon) are paths, and so is `/a:b@c` (a leading slash).
    ///
    /// - Parameter hostFollows: also ask that what follows the `@`, up to the first `/`, `?` or
    ///   `#`, reads as `host` or `host:port` (`nginx:1.25@sha256:0d17…/json`, a container
    ///   image's digest, does not: its "port" is not a number).
    static func endOfSchemelessCredentials(in string: String, hostFollows: Bool = false) -> Int? {
        string.withUTF8Bytes { bytes -> Int? in
            guard let first = bytes.first, first != UInt8(ascii: "@"), first != UInt8(ascii: "/") else { return nil }
            var sawColon = false
            var end: Int?
            var index = 0
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "/") || byte == UInt8(ascii: "?") || byte == UInt8(ascii: "#") { break }
                if byte == UInt8(ascii: ":") { sawColon = true }
                if byte == UInt8(ascii: "@") { end = sawColon ? index + 1 : nil }
                index += 1
            }
            guard let end else { return nil }
            guard hostFollows else { return end }
            return isHostAndPort(UnsafeBufferPointer(rebasing: bytes[end..<index])) ? end : nil
        }
    }

    /// Where the text after a mistyped `http` or `https` scheme starts: `https:/`, `https:`,
    /// `https:///` and `https//` in any case (not `https://`, whose authority
    /// ``authority(in:)`` finds) followed
    /// by more. The UTF-8 offset, or nil when the text does not begin so. What follows may be
    /// `user:password@host…`, a password to keep out of error lines and process lists. (Other
    /// schemes are not taken: `From:ada:x@example.com` is a header.)
    package static func afterMistypedScheme(in string: String) -> Int? {
        string.withUTF8Bytes { bytes -> Int? in
            let http = Array("http".utf8)
            guard bytes.count > http.count, zip(bytes, http).allSatisfy({ $0 | 0x20 == $1 }) else { return nil }
            var index = http.count
            if bytes[index] | 0x20 == UInt8(ascii: "s") { index += 1 }
            let slash = UInt8(ascii: "/")
            var rest = index
            if index < bytes.count, bytes[index] == UInt8(ascii: ":") {
                rest += 1
                let slashes = bytes[rest...].prefix { $0 == slash }.count
                // (Three or more, `https:///bob:pw@host`, libcurl reads as two.)
                guard slashes != 2 else { return nil }
                rest += slashes
            } else if index + 1 < bytes.count, bytes[index] == slash, bytes[index + 1] == slash {
                rest += 2
            } else {
                return nil
            }
            return rest < bytes.count ? rest : nil
        }
    }

    /// The credentials right after a mistyped scheme (``afterMistypedScheme(in:)``), as
    /// ``endOfSchemelessCredentials(in:hostFollows:)`` finds them: UTF-8 offsets from the end of
    /// the scheme to just after the `@` (`https//alice:pw@host` gives the range of `alice:pw@`).
    static func credentialsAfterMistypedScheme(in string: String) -> Range<Int>? {
        guard let start = afterMistypedScheme(in: string),
            let length = endOfSchemelessCredentials(in: String(Substring(string.utf8.dropFirst(start))))
        else { return nil }
        return start..<(start + length)
    }

    /// Whether what follows the `@` reads as a host, which is anything but text whose colon
    /// (after an IPv6 literal's brackets) is followed by more than digits: `host`, `host:8443`,
    /// `build_server`, `bücher.de`, `[::1]:8080` and an empty host are hosts, so their
    /// credentials are refused; `sha256:0d17…` (a container image's digest) is not.
    private static func isHostAndPort(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var rest = bytes[...]
        if rest.first == UInt8(ascii: "[") {
            guard let close = rest.firstIndex(of: UInt8(ascii: "]")) else { return true }
            rest = rest[(close + 1)...]
        }
        guard let colon = rest.firstIndex(of: UInt8(ascii: ":")) else { return true }
        return rest[(colon + 1)...].allSatisfy { (0x30...0x39).contains($0) }
    }
}
