import Foundation
import Testing
import Wattle
import WattleDemoServer

@Suite("Statuses outside 2xx are errors that keep the whole response; bodies decode with clear errors")
struct StatusAndDecodingTests {
    @Test("a 4xx or 5xx throws httpStatus with status, headers and body", arguments: [400, 401, 404, 418, 500, 503])
    func statusCarriesBody(status: Int) async throws {
        let server = try await TestServer.shared()
        do {
            _ = try await makeSession(server).get("status/\(status)")
            Issue.record("expected an error")
        } catch {
            guard case .httpStatus(let response) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(response.statusCode == status)
            #expect(response.headers["Content-Type"] == "application/json")
            #expect(response.string == #"{"path":"\/status\/\#(status)","status":\#(status)}"#)
            #expect(error.response?.statusCode == status)
            #expect(error.isTransient == [503].contains(status))
        }
    }

    @Test("the test server answers /status/ with a 1xx or a word as a 400 naming the range, and goes on serving")
    func statusRouteRefusesNonFinalCodes() async throws {
        let server = try await DemoServer.start()
        let session = makeSession(server)
        for code in ["100", "101", "199", "600", "abc"] {
            await expectWattleError({ _ = try await session.get("status/\(code)") }) {
                $0.response?.statusCode == 400 && $0.response?.string?.contains("200 to 599") == true
            }
        }
        #expect(try await session.get("status/204").statusCode == 204)
        try await server.stop()
    }

    @Test("the completion form delivers a response whose error is set")
    func completionCarriesError() async throws {
        let server = try await TestServer.shared()
        let session = makeSession(server)
        let response = await withCheckedContinuation { continuation in
            session.get("status/404") { continuation.resume(returning: $0) }
        }
        #expect(response.statusCode == 404)
        #expect(response.error?.response?.statusCode == 404)
        #expect(response.string?.contains("404") == true)
        let ok = await withCheckedContinuation { continuation in
            session.get("user") { continuation.resume(returning: $0) }
        }
        #expect(ok.error == nil && ok.isSuccess)
    }

    @Test("decode, json and string read the body")
    func decodeJSONString() async throws {
        struct User: Decodable { var id: Int; var name: String; var admin: Bool }
        let server = try await TestServer.shared()
        let response = try await makeSession(server).get("user")
        let user = try response.decode(User.self)
        #expect(user.id == 42 && user.name == "Ada Lovelace" && user.admin)
        let json = try response.json()
        #expect(json["email"]?.stringValue == "ada@example.test")
        #expect(json["id"] == .integer(42) && json["admin"]?.boolValue == true)
        #expect(response.string?.contains("Ada Lovelace") == true)
    }

    @Test(
        "string decodes the body in the charset Content-Type names; another charset is given only when the bytes are ASCII",
        arguments: [
            ("text/plain", [0x63, 0x61, 0x66, 0xC3, 0xA9], "café"),
            ("text/plain; charset=UTF-8", [0x63, 0x61, 0x66, 0xC3, 0xA9], "café"),
            ("text/plain", [0x63, 0x61, 0x66, 0xE9], nil),  // not UTF-8
            ("text/plain; charset=ISO-8859-1", [0x63, 0x61, 0x66, 0xE9], "café"),
            ("text/plain; charset=\"latin1\"", [0xE9], "é"),
            ("text/plain; charset=windows-1252", [0x63, 0x61, 0x66, 0xE9, 0x20, 0x80, 0x93, 0x94], "café €“”"),
            ("text/plain; charset=us-ascii", [0x68, 0x69], "hi"),
            ("text/plain; charset=us-ascii", [0xE9], nil),
            ("text/plain; charset=utf-16le", [0x68, 0x00, 0x69, 0x00], "hi"),
            ("text/plain; charset=utf-16be", [0x00, 0x68, 0x00, 0x69], "hi"),
            ("text/plain; charset=utf-16", [0xFF, 0xFE, 0x68, 0x00, 0x69, 0x00], "hi"),
            ("text/plain; charset=utf-32le", [0x68, 0x00, 0x00, 0x00], "h"),
            ("application/json; charset=shift_jis", [0x7B, 0x7D], "{}"),
            ("text/plain; charset=shift_jis", [0x83, 0x65], nil),  // テ: not decoded, never guessed as UTF-8
            ("text/plain; charset=iso-2022-jp", [0x1B, 0x24, 0x42, 0x25, 0x46, 0x1B, 0x28, 0x42], nil),
            // A byte-order mark is no part of the text, and names the encoding whatever the label.
            ("text/plain; charset=utf-8", [0xEF, 0xBB, 0xBF, 0x68, 0x69], "hi"),
            ("application/json", [0xEF, 0xBB, 0xBF, 0x7B, 0x7D], "{}"),
            ("text/plain", [0xFF, 0xFE, 0x68, 0x00, 0x69, 0x00], "hi"),
            ("text/plain; charset=utf-8", [0xFE, 0xFF, 0x00, 0x68, 0x00, 0x69], "hi"),
            ("text/plain; charset=utf-32le", [0xFF, 0xFE, 0x00, 0x00, 0x68, 0x00, 0x00, 0x00], "h"),
        ] as [(String, [UInt8], String?)])
    func charsets(contentType: String, bytes: [UInt8], expected: String?) throws {
        let url = try #require(URL(string: "http://127.0.0.1/text"))
        let response = Response(statusCode: 200, headers: ["Content-Type": contentType], data: Data(bytes), url: url)
        #expect(response.string == expected)
    }

    @Test("a decoding failure names the type, the reason and the start of the body")
    func decodingError() async throws {
        struct User: Decodable { var id: Int; var missing: String }
        let server = try await TestServer.shared()
        let session = makeSession(server)
        let response = try await session.get("user")
        #expect(throws: WattleError.self) { try response.decode(User.self) }
        do {
            _ = try response.decode(User.self)
        } catch {
            guard case .decoding(let type, let underlying, let prefix) = error else { return }
            #expect(type == "User")
            #expect(underlying.contains("missing"))
            #expect(prefix.contains("Ada Lovelace"))
        }
        let text = try await session.get("text")
        #expect(throws: WattleError.self) { try text.json() }
        // Bad JSON: one period ends the reason (the decoder's own ended with one, and the error added another).
        let bad = Response(statusCode: 200, data: Data(#"{"a":x}"#.utf8), url: URL(string: "https://x.test/")!)
        do {
            _ = try bad.json()
            Issue.record("bad JSON decoded")
        } catch {
            guard case .decoding(_, let underlying, _) = error else { return }
            #expect(underlying.contains("not valid JSON"), "\(underlying)")
            #expect(!error.description.contains(".."), "\(error)")
        }
    }

    @Test("credential-looking fields are redacted in a decoding error's body prefix")
    func decodingErrorRedacts() async throws {
        struct Token: Decodable { var expires: Int }
        let body = Data(#"{"access_token":"eyJhbGciOi.secret.sig","token_type":"bearer"}"#.utf8)
        let response = Response(statusCode: 200, data: body, url: URL(string: "https://x.test/")!)
        do {
            _ = try response.decode(Token.self)
        } catch {
            #expect(!error.description.contains("eyJhbGciOi"))
            #expect(error.description.contains("<redacted>"))
        }
    }

    @Test("a gzip-encoded body is decoded")
    func gzip() async throws {
        let server = try await TestServer.shared()
        let response = try await makeSession(server).get("gzip")
        #expect(response.string == #"{"compressed":true,"message":"hello from gzip"}"#)
    }
}
