import Foundation
import Testing
import WattleDemoServer

@testable import Wattle

@Suite("Request.omittedHeaders: a request goes without a default, the user agent or libcurl's own headers")
struct OmittedHeaderTests {
    @Test(
        "the user agent, a default header, Accept, Accept-Encoding and a body's Content-Type are left out; the rest stay"
    )
    func leftOut() async throws {
        let server = try await TestServer.shared()
        let session = makeSession(server) { $0.defaultHeaders = ["X-Client": "tests", "X-Kept": "yes"] }
        var request = Request("echo", method: .post, body: .json(["a": 1]))
        request.omittedHeaders = ["user-agent", "X-CLIENT", "Accept", "Accept-Encoding", "Content-Type"]
        let echo = try await session.send(request).decode(Echo.self)
        for name in ["User-Agent", "X-Client", "Accept", "Accept-Encoding", "Content-Type"] {
            #expect(echo.headerValues(name).isEmpty, "\(name) was sent: \(echo.headerValues(name))")
        }
        #expect(echo.header("X-Kept") == "yes")
        #expect(echo.bodyData == Data(#"{"a":1}"#.utf8))
        // The next request on the same connection and handle has them all again (the header
        // list is rebuilt when only the omitted names change).
        let again = try await session.send(Request("echo", method: .post, body: .json(["a": 1]))).decode(Echo.self)
        #expect(again.header("User-Agent")?.hasPrefix("Wattle/") == true)
        #expect(again.headerValues("Accept") == ["*/*"] && again.header("X-Client") == "tests")
        #expect(again.headerValues("Accept-Encoding").count == 1 && again.header("Content-Type") == "application/json")
    }

    @Test("omitting Authorization sends no stored token and no credentials from the URL")
    func noCredentials() async throws {
        let fixture = try await AuthFixture.make()
        var request = Request("echo")
        request.omittedHeaders = ["Authorization"]
        #expect(try await fixture.session.send(request).decode(Echo.self).header("Authorization") == nil)
        #expect(
            try await fixture.session.get("echo").decode(Echo.self).header("Authorization")
                == "Bearer \(fixture.tokens.access)")
        var parts = URLComponents(url: fixture.server.url("echo"), resolvingAgainstBaseURL: false)!
        parts.user = "bob"
        parts.password = "hunter2"
        var withUserInfo = Request(parts.url!.absoluteString)
        withUserInfo.omittedHeaders = ["authorization"]
        #expect(try await fixture.session.send(withUserInfo).decode(Echo.self).header("Authorization") == nil)
        try await fixture.server.stop()
    }

    @Test("a header willSend returns is sent even when omitted")
    func willSendDecides() async throws {
        let server = try await TestServer.shared()
        let session = makeSession(server) { $0.willSend = { _ in ["X-Signature": "s1"] } }
        var request = Request("echo")
        request.omittedHeaders = ["X-Signature", "User-Agent"]
        let echo = try await session.send(request).decode(Echo.self)
        #expect(echo.headerValues("X-Signature") == ["s1"] && echo.headerValues("User-Agent").isEmpty)
    }

    @Test(
        "Host, framing, Cookie, a name the request also sets and a name that is not a token are refused, unsent",
        arguments: [
            ("Host", "names the server"), ("content-length", "frames the body"),
            ("Transfer-Encoding", "frames the body"),
            ("Cookie", "cookie jar"), ("X-Own", "both set and omitted"), ("Bad Name", "not an HTTP token"),
            ("", "not an HTTP token"),
        ])
    func refused(name: String, reason: String) async throws {
        let server = try await TestServer.shared()
        let session = makeSession(server)
        let path = "echo/omitted-\(UUID().uuidString)"
        var request = Request(path, headers: ["X-Own": "1"])
        request.omittedHeaders = ["Accept", name]
        await expectWattleError({ _ = try await session.send(request) }) {
            guard case .invalidRequest(let why) = $0 else { return false }
            return why.contains(reason)
        }
        #expect(server.stats.hits("/" + path) == 0)
    }

    @Test("the transport gets each omitted name once, none of them among its headers")
    func transportRequest() throws {
        let session = Session(configuration: Configuration { $0.defaultHeaders = ["X-A": "1"] })
        var request = Request("https://example.test/x")
        request.omittedHeaders = ["x-a", "Accept", "X-A", "accept"]
        let prepared = try session.prepare(request, download: nil)
        #expect(prepared.omittedHeaders == ["x-a", "Accept"])
        #expect(!prepared.headers.contains("X-A") && prepared.headers.contains("User-Agent"))
        let lines = EasyHandle.headerLines(
            for: prepared.headers, hasBody: true, omitting: prepared.omittedHeaders)
        #expect(lines.contains("x-a:") && lines.contains("Accept:") && lines.contains("Expect:"))
        #expect(!lines.contains { $0.hasPrefix("X-A: ") })
    }
}
