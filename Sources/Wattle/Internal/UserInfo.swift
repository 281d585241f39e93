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

    /// The authority of `url`: after a valid scheme (`ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )`)
    /// and `://`, up to the first `/`, `?` or `#`; nil when the text does not start so (a
    /// `://` later on, in a query's `redirect_uri=https://…`, starts no authority).
    static func authority(in url: String) -> Range<String.Index>? {
        let bytes = url.utf8
        var index = bytes.startIndex
        guard let first = bytes.first, PercentEncoding.isASCIILetter(first) else { return nil }
        while index < bytes.endIndex, PercentEncoding.isSchemeByte(bytes[index]) { index = bytes.index(after: index) }
        let slashes = bytes[index...].prefix(3)
        guard slashes.elementsEqual("://".utf8) else { return nil }
        let start = bytes.index(index, offsetBy: 3)
        let end =
            bytes[start...].firstIndex {
                $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#")
            } ?? bytes.endIndex
        return start..<end
    }
}
