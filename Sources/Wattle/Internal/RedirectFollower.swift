#if canImport(FoundationEssentials)
package import FoundationEssentials
#else
package import Foundation
#endif

/// Wattle's own redirect handling: trust and credentials are decided again for every hop.
package enum RedirectFollower {
    /// Whether a status is a redirect Wattle follows. A `switch`, not a `Set<Int>`, whose first
    /// use in a process builds its generic metadata (with two more such first uses gone from
    /// the path, ~0.1 ms of a one-shot `wattle GET`).
    static func isRedirect(_ status: Int) -> Bool {
        switch status {
        case 301, 302, 303, 307, 308: true
        default: false
        }
    }

    /// Header names never carried to another origin.
    static let credentialHeaders: Set<String> = ["authorization", "cookie", "proxy-authorization"]

    /// The URL a `Location` value names, resolved against the URL that answered with it
    /// (trimmed, and percent-encoded as a request's URL is); nil when it is no URL.
    package static func target(of location: String, from url: URL) -> URL? {
        let encoded = PercentEncoding.encodeForURL(location.trimmingWhitespace())
        return URL(string: encoded, relativeTo: url)?.absoluteURL
    }

    /// The next hop's request, or nil when `response` is not a redirect to follow.
    static func nextRequest(
        after response: Response, for request: TransportRequest, configuration: Configuration, hops: Int,
        originalURL: URL
    ) throws(WattleError) -> TransportRequest? {
        guard isRedirect(response.statusCode), let location = response.headers["Location"],
            configuration.redirects.maximumHops > 0
        else { return nil }
        guard hops < configuration.redirects.maximumHops else {
            throw .tooManyRedirects(limit: configuration.redirects.maximumHops, url: originalURL)
        }
        guard let target = target(of: location, from: request.url) else {
            throw .invalidURL(Redaction.escaped(location), reason: "the redirect Location is not a valid URL")
        }
        guard let scheme = target.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = target.host, !host.isEmpty
        else {
            throw .invalidURL(
                Redaction.escaped(location), reason: "refusing to follow a redirect to a non-HTTP(S) URL")
        }
        var next = request
        next.url = target
        // 301/302 after POST and 303 after anything but HEAD become GET without a body, as
        // browsers do; 307 and 308 keep the method and body.
        let status = response.statusCode
        if (status == 303 && request.method != .head) || ((status == 301 || status == 302) && request.method == .post) {
            next.method = .get
            next.body = nil
            next.bodyFile = nil
            next.bodySegments = []
            // The fields that described the body go with it (RFC 9110, section 15.4): every
            // `Content-*` (`-Type`, `-Length`, `-Encoding`, `-Language`, `-Digest`, `-MD5`…),
            // `Digest`, `Repr-Digest`, `Transfer-Encoding` (a chunked GET would leave the server
            // waiting for a body) and `Last-Modified`.
            for field in next.headers where Self.describesContent(field.name) { next.headers.remove(field.name) }
        }
        if Origin(request.target) != Origin(next.target) {
            // Bytes to resend: not the empty body a bodiless PUT or PATCH carries for its
            // `Content-Length: 0`, which goes anywhere a bodiless GET would.
            let carriesBytes = next.body.map { !$0.isEmpty } ?? false || next.hasStreamedBody
            if carriesBytes, !configuration.redirects.resendsBodyToOtherOrigins {
                return nil  // a hop keeping the body (307/308, 301/302 after PUT…): the 3xx is the answer
            }
            for field in next.headers where isCredential(field.name, configuration) {
                next.headers.remove(field.name)
            }
            // A `Host` header names the origin it was written for; the next one gets its own
            // (as curl does; with a cookie jar, libcurl would also pick cookies by it).
            next.headers.remove("Host")
        }
        return next
    }

    /// Whether a header is not carried to another origin: the credential headers, the
    /// configuration's sensitive ones, and any whose name says it holds a credential
    /// (`PRIVATE-TOKEN`, `X-Goog-Api-Key`, `X-Vault-Token`, `X-Session-Id`…).
    static func isCredential(_ name: String, _ configuration: Configuration) -> Bool {
        credentialHeaders.contains(name.lowercased()) || configuration.isSensitiveHeader(name)
    }

    /// Whether a field describes a request's body (RFC 9110, section 15.4's content-specific
    /// fields), dropped when a redirect turns the request into a GET without it.
    static func describesContent(_ name: String) -> Bool {
        let lowered = name.lowercased()
        return lowered.hasPrefix("content-") || lowered == "digest" || lowered == "repr-digest"
            || lowered == "transfer-encoding" || lowered == "last-modified"
    }
}

/// Scheme, host and port: what two URLs must share to be the same origin (RFC 6454).
struct Origin: Hashable, Sendable, CustomStringConvertible {
    let scheme: String
    let host: String
    let port: Int

    init(_ url: URL) {
        scheme = url.scheme?.lowercased() ?? ""
        host = url.host?.lowercased() ?? ""
        port = url.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : 0)
    }

    /// The origin of a request's URL, from the parts it already holds.
    init(_ target: TransportRequest.Target) {
        scheme = target.isHTTPS ? "https" : "http"
        host = target.host.lowercased()
        port = target.port
    }

    var description: String { "\(scheme)://\(host):\(port)" }
}
