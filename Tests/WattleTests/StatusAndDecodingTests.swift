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
