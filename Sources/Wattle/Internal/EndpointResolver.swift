import Foundation

/// Turns an endpoint string and query parameters into an absolute URL.
enum EndpointResolver {
    static func resolve(_ endpoint: String, query: Parameters, baseURL: URL?) throws(WattleError) -> URL {
        if let bad = endpoint.utf8.first(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }) {
            throw .invalidURL(Redaction.escaped(endpoint), reason: "it contains \(Redaction.describe(byte: bad))")
        }
        let trimmed = endpoint.trimmingCharacters(in: .whitespaces)
        var absolute: String
        if let scheme = Self.scheme(of: trimmed) {
            guard scheme == "http" || scheme == "https" else {
                throw .invalidURL(trimmed, reason: "the scheme \"\(scheme)\" is not supported; use http or https")
            }
            absolute = trimmed
        } else {
            guard let baseURL else {
                throw .invalidURL(
                    trimmed, reason: "it is relative and no base URL is configured; set Configuration.baseURL or use an absolute URL")
            }
            var base = baseURL.absoluteString
            // Drop the base's own query and fragment; endpoints extend its path.
            if let cut = base.firstIndex(where: { $0 == "?" || $0 == "#" }) { base = String(base[..<cut]) }
            if !base.hasSuffix("/") { base += "/" }
            var path = Substring(trimmed)
            while path.hasPrefix("/") { path = path.dropFirst() }
            absolute = base + path
        }
        if let hash = absolute.firstIndex(of: "#") { absolute = String(absolute[..<hash]) }
        absolute = PercentEncoding.encodeForURL(absolute)
        let pairs = try query.flattened()
        if !pairs.isEmpty {
            absolute += (absolute.contains("?") ? (absolute.hasSuffix("?") || absolute.hasSuffix("&") ? "" : "&") : "?")
            absolute += PercentEncoding.query(pairs)
        }
        guard let url = URL(string: absolute), let host = url.host, !host.isEmpty else {
            throw .invalidURL(absolute, reason: "it is not a valid absolute URL with a host")
        }
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            throw .invalidURL(absolute, reason: "only http and https URLs are supported")
        }
        return url
    }

    /// The lowercased scheme if the string starts with `scheme:` (RFC 3986 section 3.1).
    static func scheme(of string: String) -> String? {
        guard let colon = string.firstIndex(of: ":") else { return nil }
        let candidate = string[..<colon]
        guard let first = candidate.first, first.isASCII, first.isLetter,
            candidate.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) })
        else { return nil }
        // "localhost:8080/x" has no "//" after the colon: treat as relative, not a scheme.
        let rest = string[string.index(after: colon)...]
        if !rest.hasPrefix("//"), candidate.lowercased() != "http", candidate.lowercased() != "https",
            rest.first?.isNumber == true
        {
            return nil
        }
        return candidate.lowercased()
    }
}
