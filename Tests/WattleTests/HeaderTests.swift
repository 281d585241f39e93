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

    @Test("an empty header value is sent as empty")
    func emptyValue() async throws {
        let server = try await TestServer.shared()
        let echo = try await makeSession(server).send(Request("echo", headers: ["X-Empty": ""])).decode(Echo.self)
        #expect(echo.header("X-Empty") == "")
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

    @Test("CR, LF or NUL in a header name or value is refused and nothing is sent", arguments: [
        ("X-Bad", "value\r\nInjected: yes"),
        ("X-Bad", "value\ninjected"),
        ("X-Bad", "nul\0byte"),
        ("X-Bad\r\nInjected", "yes"),
        ("Bad Name", "x"),
        ("Bad:Name", "x"),
    ])
    func injectionRefused(name: String, value: String) async throws {
        let server = try await TestServer.shared()
        let path = "echo/injection-\(UUID().uuidString)"
        await expectWattleError({
            _ = try await makeSession(server).send(Request(path, headers: HTTPHeaders([.init(name: name, value: value)])))
        }) { error in
            guard case .invalidHeader(_, let reason) = error else { return false }
            // The message says what is wrong and never repeats the value.
            return !error.description.contains("injected") && !error.description.contains("Injected: yes")
                && !reason.isEmpty
        }
        #expect(server.stats.hits("/" + path) == 0)
    }

    @Test("credential headers are redacted in descriptions")
    func redactedDescription() {
        let headers: HTTPHeaders = ["Authorization": "Bearer secret-token-123", "Accept": "*/*"]
        #expect(!headers.description.contains("secret-token-123"))
        #expect(headers.description.contains("Accept: */*"))
    }
}
