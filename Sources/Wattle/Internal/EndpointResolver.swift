#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Turns an endpoint string and query parameters into an absolute URL.
package enum EndpointResolver {
    static func resolve(_ endpoint: String, query: Parameters, baseURL: URL?) throws(WattleError) -> URL {
        try resolveTarget(endpoint, query: query, baseURL: baseURL).url
    }

    /// The URL, and the parts of it every exchange reads (taken while checking it).
    static func resolveTarget(_ endpoint: String, query: Parameters, baseURL: URL?) throws(WattleError)
        -> (url: URL, target: TransportRequest.Target)
    {
        if let bad = endpoint.withUTF8Bytes({ $0.first(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }) }) {
            throw .invalidURL(Redaction.escaped(endpoint), reason: "it contains \(Redaction.describe(byte: bad))")
        }
        let trimmed = Self.trimmingSpaces(endpoint)
        var absolute: String
        if let scheme = Self.scheme(of: trimmed) {
            guard scheme == "http" || scheme == "https" else {
                // "speech:recognize" (Google's custom methods) reads as a URL of scheme "speech".
                let beforeQuery = String(trimmed.prefix { $0 != "?" })
                let hint: String
                if trimmed.dropFirst(scheme.utf8.count + 1).hasPrefix("/") {
                    hint = ""
                } else if UserInfo.endOfSchemelessCredentials(in: beforeQuery, hostFollows: true) != nil {
                    throw Self.credentialsWithoutScheme(trimmed)
                } else if UserInfo.endOfSchemelessCredentials(in: beforeQuery) != nil {
                    // `name:x@…` that reads as no host: not echoed, in case it holds a password.
                    hint = "; for a path holding a colon, begin it with a slash"
                } else {
                    hint =
                        "; for a path holding a colon, begin it with a slash (\"/\(Redaction.escaped(beforeQuery))\" extends the base URL)"
                }
                throw .invalidURL(
                    trimmed, reason: "the scheme \"\(scheme)\" is not supported; use http or https\(hint)")
            }
            absolute = trimmed
        } else {
            // `alice:1234@host/me`: a digit after the colon rules out a scheme, so it would be
            // a path under the base URL, sending the password to the base URL's server.
            if UserInfo.endOfSchemelessCredentials(in: trimmed, hostFollows: true) != nil {
                throw Self.credentialsWithoutScheme(trimmed)
            }
            // `https//alice:pw@host/me`, a mistyped scheme: the same, or the password would go
            // in the path to the base URL's server.
            // (Whatever follows the `@`: a mistyped scheme is sign enough, `:{{port}}` too.)
            if UserInfo.credentialsAfterMistypedScheme(in: trimmed) != nil {
                throw Self.credentialsWithoutScheme(trimmed)
            }
            guard let baseURL else {
                throw .invalidURL(
                    trimmed,
                    reason:
                        "it is relative and no base URL is configured; set Configuration.baseURL or use an absolute URL"
                )
            }
            var base = baseURL.absoluteString
            // Endpoints extend the base's path; its query goes first in theirs (an API version
            // or a key that every request carries), its fragment nowhere.
            var baseQuery: Substring = ""
            if let cut = base.utf8.firstIndex(where: { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }) {
                if base.utf8[cut] == UInt8(ascii: "?") {
                    baseQuery = base[base.index(after: cut)...].prefix { $0 != "#" }
                }
                base = String(base[..<cut])
            }
            if base.utf8.last != UInt8(ascii: "/") { base += "/" }
            var path = Substring(trimmed)
            while path.utf8.first == UInt8(ascii: "/") { path = path.dropFirst() }
            absolute = base + path
            if !baseQuery.isEmpty { absolute = Self.inserting(query: baseQuery, into: absolute) }
        }
        let (beforeFragment, needsEncoding) = absolute.withUTF8Bytes { bytes -> (String?, Bool) in
            // One pass up to the fragment, which is dropped ("#" is ASCII: what precedes it is
            // whole UTF-8).
            var needsEncoding = false
            for index in bytes.indices {
                let byte = bytes[index]
                if byte == UInt8(ascii: "#") {
                    let beforeFragment = UnsafeBufferPointer(rebasing: bytes[..<index])
                    return (String(decoding: beforeFragment, as: UTF8.self), needsEncoding)
                }
                if PercentEncoding.mayNeedEncodingInURL(byte) { needsEncoding = true }
            }
            return (nil, needsEncoding)
        }
        if let beforeFragment { absolute = beforeFragment }
        if needsEncoding { absolute = PercentEncoding.encodeForURL(absolute) }
        let pairs = try query.flattened()
        if !pairs.isEmpty {
            // Parameters join the endpoint's own query with "&", unless that query is empty or
            // already ends with "&" (a query may itself contain "?": "search?q?" gets "&a=b").
            if let mark = absolute.utf8.firstIndex(of: UInt8(ascii: "?")) {
                let queryIsEmpty = absolute.utf8.index(after: mark) == absolute.utf8.endIndex
                if !queryIsEmpty && absolute.utf8.last != UInt8(ascii: "&") { absolute += "&" }
            } else {
                absolute += "?"
            }
            absolute += PercentEncoding.query(pairs)
        }
        guard let url = URL(string: absolute), let host = url.host, !host.isEmpty else {
            throw .invalidURL(absolute, reason: "it is not a valid absolute URL with a host")
        }
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            throw .invalidURL(absolute, reason: "only http and https URLs are supported")
        }
        return (
            url,
            TransportRequest.Target(string: url.absoluteString, isHTTPS: scheme == "https", host: host, port: url.port)
        )
    }

    /// `url` with `query` first in its query: after its `?` (and before the rest with `&`), or
    /// as its query, before any fragment.
    private static func inserting(query: Substring, into url: String) -> String {
        let fragment = url.firstIndex(of: "#") ?? url.endIndex
        guard let mark = url[..<fragment].firstIndex(of: "?") else {
            return url[..<fragment] + "?" + query + url[fragment...]
        }
        let rest = url[url.index(after: mark)...]
        let joiner = rest.isEmpty || rest.first == "#" || rest.first == "&" ? "" : "&"
        return url[...mark] + query + joiner + rest
    }

    /// `user:password@host/path`: credentials before a host, the scheme left out. Neither the
    /// "scheme" nor the rest is named in the reason: they are the credentials (and the URL in the
    /// error's description is redacted).
    private static func credentialsWithoutScheme(_ endpoint: String) -> WattleError {
        .invalidURL(
            endpoint,
            reason:
                "it reads as credentials before a host with no scheme; write https:// (or http://) first, or for a path, begin it with a slash"
        )
    }

    /// The string without leading and trailing spaces and tabs (on bytes: Foundation's
    /// `trimmingCharacters` bridges through NSString on Linux and showed in profiles).
    static func trimmingSpaces(_ string: String) -> String {
        let bytes = string.utf8
        guard let first = bytes.first, let last = bytes.last,
            first == 0x20 || first == 0x09 || last == 0x20 || last == 0x09
        else { return string }
        var start = bytes.startIndex
        var end = bytes.endIndex
        while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 { start = bytes.index(after: start) }
        while end > start, bytes[bytes.index(before: end)] == 0x20 || bytes[bytes.index(before: end)] == 0x09 {
            end = bytes.index(before: end)
        }
        return String(string[start..<end])
    }

    /// The lowercased scheme if the string starts with `scheme:` (RFC 3986 section 3.1).
    package static func scheme(of string: String) -> String? {
        // Fast path for the common cases, on the contiguous bytes (in any case: the general
        // path below lowercases the scheme too).
        let common = string.withUTF8Bytes { bytes -> String? in
            guard bytes.count >= 7, bytes[0] | 0x20 == UInt8(ascii: "h"), bytes[1] | 0x20 == UInt8(ascii: "t"),
                bytes[2] | 0x20 == UInt8(ascii: "t"), bytes[3] | 0x20 == UInt8(ascii: "p")
            else { return nil }
            if bytes[4] == UInt8(ascii: ":"), bytes[5] == UInt8(ascii: "/"), bytes[6] == UInt8(ascii: "/") {
                return "http"
            }
            if bytes.count >= 8, bytes[4] | 0x20 == UInt8(ascii: "s"), bytes[5] == UInt8(ascii: ":"),
                bytes[6] == UInt8(ascii: "/"), bytes[7] == UInt8(ascii: "/")
            {
                return "https"
            }
            return nil
        }
        if let common { return common }
        // Otherwise: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) before the first colon.
        guard let colon = string.firstIndex(of: ":") else { return nil }
        let candidate = string.utf8[..<colon]
        guard let first = candidate.first, PercentEncoding.isASCIILetter(first),
            candidate.allSatisfy(PercentEncoding.isSchemeByte)
        else { return nil }
        // "localhost:8080/x" has no "//" after the colon: treat as relative, not a scheme.
        let scheme = String(decoding: candidate, as: UTF8.self).lowercased()
        let rest = string[string.index(after: colon)...]
        if !rest.hasPrefix("//"), scheme != "http", scheme != "https", rest.first?.isNumber == true {
            return nil
        }
        return scheme
    }
}
