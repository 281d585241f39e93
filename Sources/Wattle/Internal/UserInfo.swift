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
    /// (`alice:s3cret@host/me`) end: the index after the last `@` before the first `/`, `?` or
    /// `#`, when a `:` comes before that `@`. Nil for anything else: `@types/node` and
    /// `alice@example.com` (no colon) are paths, and so is `/a:b@c` (a leading slash).
    static func endOfSchemelessCredentials(in string: String) -> String.Index? {
        let bytes = string.utf8
        guard let first = bytes.first, first != UInt8(ascii: "@"), first != UInt8(ascii: "/") else { return nil }
        var sawColon = false
        var end: String.Index?
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "/") || byte == UInt8(ascii: "?") || byte == UInt8(ascii: "#") { break }
            if byte == UInt8(ascii: ":") { sawColon = true }
            let next = bytes.index(after: index)
            if byte == UInt8(ascii: "@") { end = sawColon ? next : nil }
            index = next
        }
        return end
    }
}
