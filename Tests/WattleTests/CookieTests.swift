import Foundation
import Testing
import Wattle
import WattleDemoServer

@Suite("Cookies: kept per session when asked, sent back as RFC 6265 scopes them, values never shown")
struct CookieTests {
    /// A session with a cookie jar whose host names all reach the test server on 127.0.0.1.
    static func jar(_ server: DemoServer, names: [String] = [], _ configure: (inout Configuration) -> Void = { _ in })
        -> Session
    {
        makeSession(server) {
            $0.cookies = .inMemory
            $0.hostOverrides = names.map { .init(host: $0, port: server.port, address: "127.0.0.1") }
            configure(&$0)
        }
    }

    /// The cookies a request to `url` carried, as the server saw them: name to value.
    static func sent(_ session: Session, _ url: String) async throws -> [String: String] {
        let header = try await session.get(url).decode(Echo.self).headerValues("Cookie")
        var cookies: [String: String] = [:]
        for pair in header.flatMap({ $0.split(separator: ";") }) {
            let parts = pair.trimmingCharacters(in: .whitespaces).split(
                separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            cookies[String(parts[0])] = parts.count > 1 ? String(parts[1]) : ""
        }
        return cookies
    }

    /// An endpoint whose answer sets these cookies.
    static func setting(_ cookies: String...) -> String {
        "response-headers?"
            + cookies.map { "Set-Cookie=" + ($0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? $0) }
            .joined(separator: "&")
    }

    @Test("by default a session keeps no cookie: Set-Cookie is ignored and nothing goes back")
    func noneByDefault() async throws {
        let server = try await TestServer.shared()
        let session = makeSession(server)
        let redirected = try await session.get("cookies/set", parameters: ["session": "abc"]).decode(Echo.self)
        #expect(redirected.path == "/echo" && redirected.header("Cookie") == nil)
        #expect(try await Self.sent(session, "echo").isEmpty)
        #expect(try await session.cookies().isEmpty)
    }

    @Test("cookies a redirect sets go with the hop it leads to and every later request, in their session only")
    func keptAndSentBack() async throws {
        let server = try await TestServer.shared()
        let session = Self.jar(server)
        let redirected = try await session.get("cookies/set", parameters: ["session": "abc", "theme": "dark"]).decode(
            Echo.self)
        #expect(redirected.path == "/echo")
        #expect(redirected.headerValues("Cookie").count == 1)
        #expect(try await Self.sent(session, "echo") == ["session": "abc", "theme": "dark"])
        // Concurrent requests read the same jar.
        let all = try await withThrowingTaskGroup(of: [String: String].self) { group in
            for _ in 0..<8 { group.addTask { try await Self.sent(session, "echo") } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(all.count == 8 && all.allSatisfy { $0 == ["session": "abc", "theme": "dark"] })
        // A request's own Cookie header joins the jar's in the one Cookie field RFC 6265 allows,
        // for that request only.
        let own = try await session.get("echo", headers: ["Cookie": "mine=1"]).decode(Echo.self)
        #expect(own.headerValues("Cookie") == ["session=abc; theme=dark; mine=1"])
        #expect(try await Self.sent(session, "echo") == ["session": "abc", "theme": "dark"])
        // A new value replaces the old; another session has its own jar.
        _ = try await session.get("cookies/set", parameters: ["theme": "light"])
        #expect(try await Self.sent(session, "echo") == ["session": "abc", "theme": "light"])
        #expect(try await Self.sent(Self.jar(server), "echo").isEmpty)
    }

    @Test("scope: under its path only, to its host only (not another name for the server), Max-Age=0 removes it")
    func scope() async throws {
        let server = try await TestServer.shared()
        let session = Self.jar(server, names: ["api.test", "other.test"])
        let api = "http://api.test:\(server.port)/"
        _ = try await session.get(api + Self.setting("deep=1; Path=/echo/deep", "host=1; Path=/", "gone=1; Path=/"))
        #expect(try await Self.sent(session, api + "echo") == ["host": "1", "gone": "1"])
        #expect(try await Self.sent(session, api + "echo/deep/er") == ["deep": "1", "host": "1", "gone": "1"])
        #expect(try await Self.sent(session, "http://other.test:\(server.port)/echo").isEmpty)
        _ = try await session.get(api + Self.setting("gone=; Max-Age=0; Path=/"))
        #expect(try await Self.sent(session, api + "echo") == ["host": "1"])
    }

    @Test("a Domain cookie goes to the domain's hosts; one for another domain or a public suffix (co.uk) is refused")
    func domains() async throws {
        let server = try await TestServer.shared()
        let session = Self.jar(server, names: ["a.api.test", "b.api.test", "evil.test", "shop.co.uk", "other.co.uk"])
        let port = server.port
        _ = try await session.get(
            "http://a.api.test:\(port)/"
                + Self.setting("shared=1; Domain=api.test; Path=/", "stolen=1; Domain=evil.test; Path=/"))
        #expect(try await Self.sent(session, "http://b.api.test:\(port)/echo") == ["shared": "1"])
        #expect(try await Self.sent(session, "http://evil.test:\(port)/echo").isEmpty)
        _ = try await session.get("http://shop.co.uk:\(port)/" + Self.setting("suffix=1; Domain=co.uk; Path=/"))
        #expect(try await Self.sent(session, "http://other.co.uk:\(port)/echo").isEmpty)
        #expect(try await Self.sent(session, "http://shop.co.uk:\(port)/echo").isEmpty)
    }

    @Test("a Secure cookie is taken and sent over https only, ports aside")
    func secure() async throws {
        let plain = try await TestServer.shared()
        let tls = try await DemoServer.start(
            tls: try TLSIdentity.selfSigned(names: ["api.test"], addresses: ["127.0.0.1"]))
        let session = makeSession(plain) {
            $0.cookies = .inMemory
            $0.trust.selfSignedHosts = ["api.test"]
            $0.hostOverrides = [
                .init(host: "api.test", port: plain.port, address: "127.0.0.1"),
                .init(host: "api.test", port: tls.port, address: "127.0.0.1"),
            ]
        }
        let secure = "https://api.test:\(tls.port)/"
        let insecure = "http://api.test:\(plain.port)/"
        defer { Task { try? await tls.stop() } }
        _ = try await session.get(secure + Self.setting("token=s3cret; Secure; HttpOnly; Path=/", "plain=1; Path=/"))
        #expect(try await Self.sent(session, secure + "echo") == ["token": "s3cret", "plain": "1"])
        #expect(try await Self.sent(session, insecure + "echo") == ["plain": "1"])
        // Over plain http a server cannot set a Secure cookie.
        _ = try await session.get(insecure + Self.setting("forged=1; Secure; Path=/"))
        #expect(try await Self.sent(session, secure + "echo") == ["token": "s3cret", "plain": "1"])
    }

    @Test(
        "a request's own Host header scopes its cookies, and neither it nor they follow to the next request or another origin"
    )
    func customHost() async throws {
        let server = try await TestServer.shared()
        let session = Self.jar(server, names: ["api.test", "other.test"])
        let port = server.port
        // As libcurl does, cookies are stored for the name the Host header gives.
        _ = try await session.send(
            Request(
                "http://other.test:\(port)/" + Self.setting("bank=s3cret; Path=/"),
                headers: ["Host": "api.test:\(port)"]))
        #expect(try await Self.sent(session, "http://api.test:\(port)/echo") == ["bank": "s3cret"])
        // The next requests, on whatever handle, pick cookies by their own host.
        for _ in 0..<3 {
            #expect(try await Self.sent(session, "http://other.test:\(port)/echo").isEmpty)
        }
        // A redirect to another origin drops the Host header, and the cookies chosen by it.
        let hop = try await session.send(
            Request(
                "http://api.test:\(port)/redirect/302", query: ["to": "http://other.test:\(port)/echo"],
                headers: ["Host": "api.test:\(port)"])
        ).decode(Echo.self)
        #expect(hop.header("Host") == "other.test:\(port)" && hop.header("Cookie") == nil)
    }

    @Test("a request's own Cookie header is not carried to another origin by a redirect, nor kept in the jar")
    func ownCookieAcrossOrigins() async throws {
        let server = try await TestServer.shared()
        let session = Self.jar(server, names: ["api.test", "other.test"])
        let port = server.port
        let hop = try await session.send(
            Request(
                "http://api.test:\(port)/redirect/302", query: ["to": "http://other.test:\(port)/echo"],
                headers: ["Cookie": "mine=s3cret"])
        ).decode(Echo.self)
        #expect(hop.header("Cookie") == nil)
        #expect(try await session.cookies().isEmpty)
        // An empty Cookie header adds nothing, not an empty field.
        #expect(
            try await session.send(Request("http://api.test:\(port)/echo", headers: ["Cookie": ""])).decode(Echo.self)
                .header("Cookie") == nil)
    }

    @Test(
        "cookies() lists the jar with its attributes; no description or dump shows a value; removeAllCookies empties it"
    )
    func listAndRemove() async throws {
        let server = try await TestServer.shared()
        let session = Self.jar(server, names: ["api.test"])
        let api = "http://api.test:\(server.port)/"
        _ = try await session.get(
            api
                + Self.setting(
                    "sid=s3cret-value; HttpOnly; Path=/", "pref=x; Max-Age=3600; Domain=api.test; Path=/echo"))
        let cookies = try await session.cookies().sorted { $0.name < $1.name }
        #expect(cookies.map(\.name) == ["pref", "sid"])
        let (pref, sid) = (cookies[0], cookies[1])
        #expect(sid.value == "s3cret-value" && sid.domain == "api.test" && !sid.includesSubdomains && sid.path == "/")
        #expect(sid.isHTTPOnly && !sid.isSecure && sid.expiresAt == nil)
        #expect(pref.includesSubdomains && pref.path == "/echo" && !pref.isHTTPOnly)
        #expect(sid == Cookie(name: "sid", value: "s3cret-value", domain: "api.test", isHTTPOnly: true))
        let lifetime = (pref.expiresAt?.timeIntervalSinceNow ?? 0)
        #expect(lifetime > 3500 && lifetime <= 3600)
        var dumped = ""
        dump(cookies, to: &dumped)
        for text in [sid.description, sid.debugDescription, "\(cookies)", dumped] {
            #expect(!text.contains("s3cret"), "\(text)")
        }
        #expect(sid.description == "Cookie(sid=…, host api.test, path /, HttpOnly, expires with the session)")
        // An expiry past what an Int holds, or not a number, is described without a trap.
        let far = Cookie(name: "a", value: "b", domain: "h", expiresAt: Date(timeIntervalSince1970: 1e19))
        #expect(far.description.hasSuffix("expires in \(Int64.max) s)"))
        let past = Cookie(name: "a", value: "b", domain: "h", expiresAt: Date(timeIntervalSinceNow: -3600))
        #expect(past.description.contains("expires in -3600 s") || past.description.contains("expires in -3599 s"))
        #expect(
            Cookie(name: "a", value: "b", domain: "h", expiresAt: Date(timeIntervalSince1970: .nan)).description
                .hasSuffix("expires in 0 s)"))
        try await session.removeAllCookies()
        #expect(try await session.cookies().isEmpty)
        #expect(try await Self.sent(session, api + "echo").isEmpty)
    }

    @Test(
        "a server's deletion by a past Expires that libcurl misreads (01-Jan-70 as 2070, a year before 1970 as none) removes the cookie",
        arguments: [
            "Thu, 01-Jan-70 00:00:01 GMT", "Wed, 01 Jan 1969 00:00:01 GMT", "Thu, 01 Jan 1970 00:00:00 GMT",
        ])
    func deletionByPastExpires(expires: String) async throws {
        let server = try await TestServer.shared()
        let session = Self.jar(server, names: ["api.test", "www.api.test"])
        let api = "http://api.test:\(server.port)/"
        _ = try await session.get(
            api + Self.setting("sid=s3cret; Path=/", "pref=x; Domain=api.test; Path=/", "keep=1; Path=/"))
        // From a path of its own: a cookie without Path is in that folder's (/response-headers/sub).
        let deeper =
            api + Self.setting("local=1").replacingOccurrences(of: "response-headers?", with: "response-headers/sub/x?")
        _ = try await session.get(deeper)
        #expect(Set(try await session.cookies().map(\.name)) == ["sid", "pref", "keep", "local"])
        _ = try await session.get(
            api
                + Self.setting(
                    "sid=; Expires=\(expires); Path=/", "pref=; Domain=.api.test; Path=/; Expires=\(expires)",
                    // A later Expires, and Max-Age (libcurl's own reading) with it: kept.
                    "keep=2; Path=/; Expires=Fri, 01 Jan 2100 00:00:00 GMT"))
        _ = try await session.get(
            api
                + Self.setting("local=; Expires=\(expires)").replacingOccurrences(
                    of: "response-headers?", with: "response-headers/sub/y?"))
        #expect(try await session.cookies().map(\.name) == ["keep"], "\(expires)")
        #expect(try await Self.sent(session, api + "echo") == ["keep": "2"])
    }

    @Test(
        "a misread past Expires deletes only what libcurl would have: not with Max-Age, not set again after, not another site's, not a Secure cookie over http"
    )
    func deletionByPastExpiresLimits() async throws {
        let server = try await TestServer.shared()
        let session = Self.jar(server, names: ["api.test", "other.test"])
        let api = "http://api.test:\(server.port)/"
        let past = "Thu, 01-Jan-70 00:00:01 GMT"
        _ = try await session.get(api + Self.setting("aged=1; Path=/", "again=1; Path=/"))
        _ = try await session.get(
            "http://other.test:\(server.port)/" + Self.setting("theirs=1; Domain=other.test; Path=/"))
        try await session.addCookies([Cookie(name: "secure", value: "1", domain: "api.test", isSecure: true)])
        _ = try await session.get(
            api
                + Self.setting(
                    // Max-Age wins over Expires (libcurl's own reading): an hour.
                    "aged=2; Path=/; Expires=\(past); Max-Age=3600",
                    // Deleted, then set again in the same response: the later one stands.
                    "again=; Path=/; Expires=\(past)", "again=2; Path=/",
                    // Another site's domain, which libcurl refuses from this host.
                    "theirs=; Domain=other.test; Path=/; Expires=\(past)",
                    // Over http a Secure cookie is left alone.
                    "secure=; Path=/; Expires=\(past)"))
        let kept = Dictionary(uniqueKeysWithValues: try await session.cookies().map { ($0.name, $0.value) })
        #expect(kept == ["aged": "2", "again": "2", "theirs": "1", "secure": "1"])
    }
}
