import Foundation
import Testing
import Wattle
import WattleDemoServer

@Suite("Headers are merged, sent, read case-insensitively and checked for injection")
struct HeaderTests {
    @Test("default headers are sent and a request's own replace them by name, case-insensitively")
    func merging() async throws {
        let server = try await TestServer.shared()
        let session = makeSession(server) {
            $0.defaultHeaders = ["X-Client": "wattle-tests", "Accept": "application/json"]
        }
        let echo = try await session.send(Request("echo", headers: ["accept": "text/plain", "X-Extra": "1"]))
            .decode(Echo.self)
        #expect(echo.header("X-Client") == "wattle-tests")
        #expect(echo.headerValues("Accept") == ["text/plain"])
        #expect(echo.header("X-Extra") == "1")
        #expect(echo.header("User-Agent")?.hasPrefix("Wattle/") == true)
    }

    @Test("Accept is */* once unless given, and a request without a body sends no Expect")
    func acceptAndExpect() async throws {
        let server = try await TestServer.shared()
        let session = makeSession(server)
        let plain = try await session.get("echo").decode(Echo.self)
        #expect(plain.headerValues("Accept") == ["*/*"])
        #expect(plain.headerValues("Expect").isEmpty)
        let own = try await session.send(Request("echo", headers: ["Accept": "application/json"])).decode(Echo.self)
        #expect(own.headerValues("Accept") == ["application/json"])
        let empty = try await session.send(Request("echo", method: .post)).decode(Echo.self)
        #expect(empty.headerValues("Accept") == ["*/*"] && empty.headerValues("Expect").isEmpty)
        // A large body is where libcurl would ask for 100-continue; the list turns it off.
        let large = try await session.send(Request("echo", method: .put, body: .data(Data(count: 2 << 20))))
            .decode(Echo.self)
        #expect(large.bodyLength == 2 << 20 && large.headerValues("Expect").isEmpty)
        #expect(large.headerValues("Accept") == ["*/*"])
    }

    @Test("Accept-Encoding names the codings libcurl decodes, once, unless a request names its own")
    func acceptEncoding() async throws {
        let server = try await TestServer.shared()
        let session = makeSession(server)
        let sent = try await session.get("echo").decode(Echo.self).headerValues("Accept-Encoding")
        #expect(sent.count == 1)
        let codings = sent.first?.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } ?? []
        #expect(codings.contains("gzip") && codings.contains("deflate"))
        let own = try await session.send(Request("echo", headers: ["accept-encoding": "identity"])).decode(Echo.self)
        #expect(own.headerValues("Accept-Encoding") == ["identity"])
        // With the request's own Accept-Encoding, a gzip body is still decoded.
        let gzip = try await session.send(Request("gzip", headers: ["Accept-Encoding": "gzip"]))
        #expect(gzip.string == #"{"compressed":true,"message":"hello from gzip"}"#)
    }

    @Test("a header value that differs from the last request's only in Unicode normalisation is sent as given")
    func headerBytesNotNormalised() async throws {
        let server = try await TestServer.shared()
        let session = makeSession(server)
        let composed = "caf\u{E9}"  // é as one scalar
        let decomposed = "cafe\u{301}"  // e and a combining accent: == composed for String
        #expect(composed == decomposed)
        for value in [composed, decomposed, composed] {
            let echo = try await session.send(Request("echo", headers: ["X-Name": value])).decode(Echo.self)
            #expect(Array(echo.header("X-Name")?.utf8 ?? "".utf8) == Array(value.utf8))
        }
    }

    @Test("an empty header value is sent as empty")
    func emptyValue() async throws {
        let server = try await TestServer.shared()
        let echo = try await makeSession(server).send(Request("echo", headers: ["X-Empty": ""])).decode(Echo.self)
        #expect(echo.header("X-Empty") == "")
    }

    @Test("a value of only spaces and tabs is sent as empty (libcurl skipped the line as blank), Accept too")
    func blankValue() async throws {
        let server = try await TestServer.shared()
        let echo = try await makeSession(server).send(Request("echo", headers: ["X-Blank": " ", "X-Tabs": "\t \t"]))
            .decode(Echo.self)
        #expect(echo.header("X-Blank") == "" && echo.header("X-Tabs") == "")
        // For a header libcurl adds itself, the blank line had also kept its own out.
        let accept = try await makeSession(server).send(Request("echo", headers: ["Accept": "  "])).decode(Echo.self)
        #expect(accept.headerValues("Accept") == [""])
    }

    @Test("a header written whole as its name is refused without its value in the error")
    func headerLineAsName() async throws {
        let server = try await TestServer.shared()
        let path = "echo/line-as-name-\(UUID().uuidString)"
        await expectWattleError({
            _ = try await makeSession(server).send(Request(path, headers: ["Authorization: Bearer eyJs3cret": ""]))
        }) { error in
            guard case .invalidHeader(let name, let reason) = error else { return false }
            return name == "Authorization" && reason.contains("colon") && !"\(error)".contains("eyJ")
                && !error.description.contains("s3cret")
        }
        #expect(server.stats.hits("/" + path) == 0)
        // A name that is itself a credential is not shown at all.
        for secret in ["dXNlcjpzM2NyZXQ=", "sk-proj-s3cret/def"] {
            await expectWattleError({ _ = try await makeSession(server).send(Request(path, headers: [secret: "x"])) }) {
                guard case .invalidHeader(let name, let reason) = $0 else { return false }
                return name.isEmpty && reason.contains("not shown") && !"\($0)".contains("s3cret")
                    && !"\($0)".contains("dXNlcjpzM2NyZXQ")
            }
        }
    }

    @Test("response headers are case-insensitive and repeated fields are kept")
    func responseHeaders() async throws {
        let server = try await TestServer.shared()
        let response = try await makeSession(server).get(
            "response-headers", parameters: ["X-Thing": "one", "Set-Cookie": "a=1", "set-cookie": "b=2"])
        #expect(response.headers["x-thing"] == "one")
        #expect(response.headers["X-THING"] == "one")
        #expect(response.headers.values(for: "Set-Cookie") == ["a=1", "b=2"])
    }

    @Test(
        "a control character (CR, LF, NUL, ESC, VT, DEL) in a header value, or a bad name, is refused and nothing is sent",
        arguments: [
            ("X-Bad", "value\r\nInjected: yes"),
            ("X-Bad", "value\ninjected"),
            ("X-Bad", "nul\0byte"),
            // Other control characters: strict servers (llhttp) answer 400 to them.
            ("X-Bad", "escape\u{1B}[31m"),
            ("X-Bad", "tab\u{0B}vertical"),
            ("X-Bad", "delete\u{7F}"),
            ("X-Bad\r\nInjected", "yes"),
            ("Bad Name", "x"),
            ("Bad:Name", "x"),
        ])
    func injectionRefused(name: String, value: String) async throws {
        let server = try await TestServer.shared()
        let path = "echo/injection-\(UUID().uuidString)"
        await expectWattleError({
            _ = try await makeSession(server).send(
                Request(path, headers: HTTPHeaders([.init(name: name, value: value)])))
        }) { error in
            guard case .invalidHeader(_, let reason) = error else { return false }
            // The message says what is wrong and never repeats the value.
            return !error.description.contains("injected") && !error.description.contains("Injected: yes")
                && !reason.isEmpty
        }
        #expect(server.stats.hits("/" + path) == 0)
    }

    @Test("a value with a tab and UTF-8 is sent as it is")
    func tabAndUTF8Allowed() async throws {
        let server = try await TestServer.shared()
        let echo = try await makeSession(server).send(Request("echo", headers: ["X-Note": "a\tb koala 🐨"]))
            .decode(Echo.self)
        #expect(echo.header("X-Note") == "a\tb koala 🐨")
    }

    @Test(
        "a bad default header or user agent fails each request that does not replace it, and is never sent",
        arguments: [
            ("X-Default", true), ("User-Agent", false),
        ])
    func badConfigurationHeader(name: String, isDefaultHeader: Bool) async throws {
        let server = try await TestServer.shared()
        let session = makeSession(server) {
            if isDefaultHeader {
                $0.defaultHeaders = [name: "a\r\nInjected: yes"]
            } else {
                $0.userAgent = "a\r\nInjected: yes"
            }
        }
        let path = "echo/bad-configuration-\(UUID().uuidString)"
        for _ in 0..<2 {
            await expectWattleError({ _ = try await session.send(Request(path)) }) {
                guard case .invalidHeader(let refused, _) = $0 else { return false }
                return refused == name
            }
        }
        #expect(server.stats.hits("/" + path) == 0)
        // A request that sets the field itself replaces the bad one and is sent.
        let echo = try await session.send(Request("echo", headers: [name.lowercased(): "fine"])).decode(Echo.self)
        #expect(echo.headerValues(name) == ["fine"])
    }

    @Test("a body's bad content type is refused, unless the request sets Content-Type itself")
    func badBodyContentType() async throws {
        let server = try await TestServer.shared()
        let session = makeSession(server)
        let body = RequestBody.data(Data([1, 2, 3]), contentType: "text/plain\r\nInjected: yes")
        let path = "echo/bad-content-type-\(UUID().uuidString)"
        await expectWattleError({ _ = try await session.send(Request(path, method: .post, body: body)) }) {
            guard case .invalidHeader(let name, _) = $0 else { return false }
            return name == "Content-Type"
        }
        #expect(server.stats.hits("/" + path) == 0)
        let echo = try await session.send(
            Request("echo", method: .post, headers: ["Content-Type": "application/x-own"], body: body)
        )
        .decode(Echo.self)
        #expect(echo.headerValues("Content-Type") == ["application/x-own"])
    }

    @Test("credential headers are redacted in descriptions")
    func redactedDescription() {
        let headers: HTTPHeaders = ["Authorization": "Bearer secret-token-123", "Accept": "*/*"]
        #expect(!headers.description.contains("secret-token-123"))
        #expect(headers.description.contains("Accept: */*"))
    }

    @Test("the URLs of Link and Refresh fields are redacted as a Location's, their other text kept")
    func urlBearingFields() {
        let headers: HTTPHeaders = [
            "Link":
                #"<https://api.test/x?page=2&access_token=S3CRET1>; rel="next", <https://u:S3CRET2@api.test/y>; rel="last""#,
            "Refresh": "0; URL=https://api.test/z?token=S3CRET3",
        ]
        let text = headers.description
        #expect(!text.contains("S3CRET"), "\(text)")
        #expect(text.contains("page=2") && text.contains(#"rel="next""#) && text.contains(#"rel="last""#), "\(text)")
        #expect(text.contains("Refresh: 0; URL=https://api.test/z?token="), "\(text)")
    }
}
