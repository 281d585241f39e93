#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A server's deletions of cookies that libcurl misses, carried out on the jar.
///
/// A server deletes a cookie by setting it again with an expiry in the past. libcurl 7.88 reads
/// `Max-Age` as RFC 6265 does, but not every past `Expires`: `Thu, 01-Jan-70 00:00:01 GMT`
/// (a classic deletion) is 2070 to it, and a year before 1970 makes a session cookie. The
/// cookie stayed, and a keychain jar kept it across runs. So, for each `Set-Cookie` without
/// `Max-Age` whose `Expires` is such a date, the jar's cookie of that name, domain and path is
/// set to expire (which removes it), as libcurl would have: only a `Set-Cookie` libcurl would
/// have taken (its `Domain` the responding host's or a parent of it), not followed by another
/// of the same name in the response, and never a `Secure` cookie over `http`.
enum CookieDeletion {
    /// A cookie a `Set-Cookie` value deletes: its name, its `Domain` (lower case, no leading
    /// dot; nil for a host-only cookie) and its path (the `Path`, or the request path's folder).
    struct Deletion: Equatable {
        var name: String
        var domain: String?
        var path: String
    }

    /// The deletions among a response's `Set-Cookie` values (from `host`, to the URL path
    /// `path`) that libcurl missed: no `Max-Age`, an `Expires` in the past that libcurl misreads,
    /// and no later `Set-Cookie` of the same name (which sets it again).
    static func deletions(in setCookies: [String], host: String, requestPath path: String, now: Date) -> [Deletion] {
        let host = host.lowercased()
        var found: [Deletion] = []
        for (index, value) in setCookies.enumerated() {
            guard let deletion = deletion(in: value, host: host, requestPath: path, now: now) else { continue }
            let setAgain = setCookies[(index + 1)...].contains { later in
                later.prefix { $0 != "=" && $0 != ";" }.trimmingWhitespace() == deletion.name
            }
            if !setAgain { found.append(deletion) }
        }
        return found
    }

    /// The jar's lines (`jar`, libcurl's Netscape lines) that `deleted` names for a response
    /// from `host`, to add again with an expiry of 1. Not a `Secure` cookie when the response
    /// came over plain `http` (libcurl leaves those to `https`).
    static func expiring(_ deleted: [Deletion], host: String, isHTTPS: Bool, jar: [String], now: Date) -> [String] {
        let host = host.lowercased()
        var lines: [String] = []
        for line in jar {
            guard let cookie = Cookie(netscapeLine: line), cookie.expiresAt.map({ $0 > now }) ?? true,
                isHTTPS || !cookie.isSecure
            else { continue }
            let matched = deleted.contains { deletion in
                guard deletion.name == cookie.name, comparable(deletion.path) == comparable(cookie.path) else {
                    return false
                }
                let domain = cookie.domain.lowercased()
                if let shared = deletion.domain { return cookie.includesSubdomains && domain == shared }
                return !cookie.includesSubdomains && domain == host
            }
            guard matched else { continue }
            var fields = line.split(separator: "\t", maxSplits: 6, omittingEmptySubsequences: false)
            fields[4] = "1"
            lines.append(fields.joined(separator: "\t"))
        }
        return lines
    }

    private static func deletion(in value: String, host: String, requestPath: String, now: Date) -> Deletion? {
        var parts = value.split(separator: ";", omittingEmptySubsequences: false).makeIterator()
        guard let pair = parts.next(), let equals = pair.firstIndex(of: "=") else { return nil }
        let name = pair[..<equals].trimmingWhitespace()
        guard !name.isEmpty else { return nil }
        var expires: Date?
        var domain: String?
        var path: String?
        while let part = parts.next() {
            let equals = part.firstIndex(of: "=") ?? part.endIndex
            let attribute = part[..<equals].trimmingWhitespace().lowercased()
            let argument = equals < part.endIndex ? part[part.index(after: equals)...].trimmingWhitespace() : ""
            switch attribute {
            case "max-age": return nil  // libcurl reads it right, and it wins over Expires
            case "expires":
                // Only the dates libcurl 7.88 misreads: a two-digit 70 (2070 to it) and a year
                // before 1970 (no expiry). It reads the others as RFC 6265 does.
                expires = HTTPDate.cookieDate(argument).flatMap { parsed in
                    parsed.year < 1970 || (parsed.twoDigitYear && parsed.year == 1970) ? parsed.date : nil
                }
            case "domain":
                let bare = argument.hasPrefix(".") ? String(argument.dropFirst()) : argument
                domain = bare.isEmpty ? nil : bare.lowercased()
            case "path": path = argument.hasPrefix("/") ? argument : nil
            default: break
            }
        }
        guard let expires, expires <= now else { return nil }
        // A `Domain` libcurl refuses (not this host nor a parent of it) deletes nothing.
        if let domain, domain != host, !host.hasSuffix("." + domain) { return nil }
        return Deletion(name: name, domain: domain, path: path ?? folder(of: requestPath))
    }

    /// RFC 6265's default path: the request path up to its last `/` (`/` when that is the first).
    private static func folder(of path: String) -> String {
        guard path.hasPrefix("/"), let last = path.lastIndex(of: "/"), last != path.startIndex else { return "/" }
        return String(path[..<last])
    }

    /// A path as libcurl compares cookie paths: without one trailing `/`.
    private static func comparable(_ path: String) -> String {
        path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
    }
}
