/// RFC 3986 percent-encoding.
enum PercentEncoding {
    /// Encodes everything but the unreserved characters (`A-Z a-z 0-9 - . _ ~`), byte by byte
    /// of the UTF-8 form, as RFC 3986 section 2.3 recommends for query names and values.
    static func encodeUnreserved(_ string: String) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(string.utf8.count)
        for byte in string.utf8 {
            if isUnreserved(byte) {
                bytes.append(byte)
            } else {
                bytes.append(UInt8(ascii: "%"))
                bytes.append(hexDigit(byte >> 4))
                bytes.append(hexDigit(byte & 0x0F))
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Encodes only what may not appear in a URL as it stands: controls, space, non-ASCII,
    /// `"<>\^`{|}`, a `%` not followed by two hex digits, and `[` `]` outside the authority
    /// (where an IPv6 literal needs them). Used for endpoints, so `/` and valid `%XX` are kept.
    /// The result is a valid RFC 3986 URL, so Foundation never re-encodes it (which would
    /// double-encode the query parameters appended after it).
    static func encodeForURL(_ string: String) -> String {
        let input = Array(string.utf8)
        // Where the authority ends (RFC 3986 section 3.2: at the first "/", "?" or "#" after
        // it), else 0: brackets are kept only inside it, for an IPv6 literal. There is an
        // authority only when the string starts with "scheme://" or, for a network-path
        // reference (a redirect's `Location: //host/x`), with "//"; a "://" later on, in a
        // query such as "/a?next=https://x/", starts none. An absolute URL without a path
        // ("http://h?q=[") has its query right after the authority.
        let pathStart = authority(input)?.upperBound ?? 0
        var bytes: [UInt8] = []
        bytes.reserveCapacity(input.count)
        for (index, byte) in input.enumerated() {
            let strayPercent =
                byte == UInt8(ascii: "%")
                && !(index + 2 < input.count && isHexDigit(input[index + 1]) && isHexDigit(input[index + 2]))
            let bracketInPath = index >= pathStart && (byte == UInt8(ascii: "[") || byte == UInt8(ascii: "]"))
            if needsEncodingInURL(byte) || strayPercent || bracketInPath {
                bytes.append(UInt8(ascii: "%"))
                bytes.append(hexDigit(byte >> 4))
                bytes.append(hexDigit(byte & 0x0F))
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Where the authority starts: after a leading `scheme://` (ALPHA *( ALPHA / DIGIT / "+" /
    /// "-" / "." ), RFC 3986 section 3.1) or a leading `//`; nil when the string has none.
    static func authorityStart<Bytes: Collection<UInt8>>(_ input: Bytes) -> Bytes.Index? {
        if input.starts(with: "//".utf8) { return input.index(input.startIndex, offsetBy: 2) }
        guard let first = input.first, isASCIILetter(first) else { return nil }
        let end = input.dropFirst().firstIndex { !isSchemeByte($0) } ?? input.endIndex
        return input[end...].starts(with: "://".utf8) ? input.index(end, offsetBy: 3) : nil
    }

    /// The authority (RFC 3986 section 3.2): from ``authorityStart(_:)`` to the first `/`, `?`
    /// or `#` after it; nil when the string has none.
    static func authority<Bytes: Collection<UInt8>>(_ input: Bytes) -> Range<Bytes.Index>? {
        guard let start = authorityStart(input) else { return nil }
        let end =
            input[start...].firstIndex {
                $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#")
            } ?? input.endIndex
        return start..<end
    }

    static func isASCIILetter(_ byte: UInt8) -> Bool {
        (byte >= 65 && byte <= 90) || (byte >= 97 && byte <= 122)
    }

    /// A byte that may follow a scheme's first letter: ALPHA / DIGIT / "+" / "-" / ".".
    static func isSchemeByte(_ byte: UInt8) -> Bool {
        isASCIILetter(byte) || (byte >= 48 && byte <= 57) || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-")
            || byte == UInt8(ascii: ".")
    }

    static func isHexDigit(_ byte: UInt8) -> Bool { hexValue(byte) != nil }

    /// The value of a hex digit (either case), or nil.
    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// Whether `encodeForURL` would change this byte.
    static func needsEncodingInURL(_ byte: UInt8) -> Bool {
        byte <= 0x20 || byte >= 0x7F || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "<")
            || byte == UInt8(ascii: ">") || byte == UInt8(ascii: "\\") || byte == UInt8(ascii: "^")
            || byte == UInt8(ascii: "`") || byte == UInt8(ascii: "{") || byte == UInt8(ascii: "|")
            || byte == UInt8(ascii: "}")
    }

    /// Whether `encodeForURL` may change this byte: one it always encodes
    /// (``needsEncodingInURL(_:)``), or `%`, `[` or `]`, which it encodes depending on where
    /// they are. Two bit masks instead of a chain of comparisons: every request's URL is
    /// scanned with it.
    @inline(__always)
    static func mayNeedEncodingInURL(_ byte: UInt8) -> Bool {
        if byte < 64 { return mayNeedEncodingBelow64 & (1 << UInt64(byte)) != 0 }
        if byte < 128 { return mayNeedEncodingFrom64 & (1 << UInt64(byte - 64)) != 0 }
        return true
    }

    /// Bytes 0 to 63: controls, space, `"`, `%`, `<`, `>`.
    private static let mayNeedEncodingBelow64: UInt64 =
        0x1_FFFF_FFFF | 1 << 0x22 | 1 << 0x25 | 1 << 0x3C | 1 << 0x3E
    /// Bytes 64 to 127: `[`, `\`, `]`, `^`, `` ` ``, `{`, `|`, `}`, DEL.
    private static let mayNeedEncodingFrom64: UInt64 =
        1 << (0x5B - 64) | 1 << (0x5C - 64) | 1 << (0x5D - 64) | 1 << (0x5E - 64) | 1 << (0x60 - 64)
        | 1 << (0x7B - 64) | 1 << (0x7C - 64) | 1 << (0x7D - 64) | 1 << (0x7F - 64)

    /// `name=value&...` with both sides encoded.
    static func query(_ pairs: [(String, String)]) -> String {
        pairs.map { "\(encodeUnreserved($0.0))=\(encodeUnreserved($0.1))" }.joined(separator: "&")
    }

    static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
            UInt8(ascii: "~"):
            true
        default: false
        }
    }

    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "A") + value - 10
    }
}
