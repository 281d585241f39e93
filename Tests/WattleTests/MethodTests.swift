import Foundation
import Testing
import Wattle
import WattleDemoServer

@Suite("Every HTTP method reaches the server as sent")
struct MethodTests {
    @Test(
        "GET, POST, PUT, PATCH, DELETE arrive with their method",
        arguments: [
            HTTPMethod.get, .post, .put, .patch, .delete,
        ])
    func methodArrives(_ method: HTTPMethod) async throws {
        let server = try await TestServer.shared()
        let session = makeSession(server)
        let response = try await session.send(Request("echo", method: method))
        let echo = try response.decode(Echo.self)
        #expect(response.statusCode == 200)
        #expect(echo.method == method.rawValue)
        #expect(echo.path == "/echo")
    }

    @Test("the convenience methods send their verb and parameters")
    func convenienceMethods() async throws {
        let server = try await TestServer.shared()
        let session = makeSession(server)
        #expect(try await session.get("echo", parameters: ["a": 1]).decode(Echo.self).query == "a=1")
        let post = try await session.post("echo", parameters: ["name": "Ada"]).decode(Echo.self)
        #expect(post.method == "POST" && post.body == #"{"name":"Ada"}"#)
        let put = try await session.put("echo", parameters: ["name": "Bob"]).decode(Echo.self)
        #expect(put.method == "PUT" && put.body == #"{"name":"Bob"}"#)
        let patch = try await session.patch("echo", parameters: ["admin": true]).decode(Echo.self)
        #expect(patch.method == "PATCH" && patch.body == #"{"admin":true}"#)
        let delete = try await session.delete("echo", parameters: ["force": true]).decode(Echo.self)
        #expect(delete.method == "DELETE" && delete.query == "force=true" && delete.bodyLength == 0)
    }

    @Test("POST, PUT and PATCH without parameters send no body; with [:] they send {}, as in Alamofire")
    func convenienceMethodsWithoutParameters() async throws {
        let server = try await TestServer.shared()
        let session = makeSession(server)
        let bare = [
            try await session.post("echo"), try await session.put("echo"), try await session.patch("echo"),
            try await session.post("echo", encoding: .form),
        ]
        for response in bare {
            let echo = try response.decode(Echo.self)
            #expect(echo.bodyLength == 0, "\(echo.method)")
            #expect(echo.header("Content-Length") == "0", "\(echo.method)")
            #expect(echo.header("Content-Type") == nil, "\(echo.method)")
        }
        let empty = [
            try await session.post("echo", parameters: [:]), try await session.put("echo", parameters: [:]),
            try await session.patch("echo", parameters: [:]),
        ]
        for response in empty {
            let echo = try response.decode(Echo.self)
            #expect(echo.body == "{}", "\(echo.method)")
            #expect(echo.header("Content-Type") == "application/json", "\(echo.method)")
        }
        // The completion form takes the same default.
        let completed = await withCheckedContinuation { continuation in
            session.post("echo") { continuation.resume(returning: $0) }
        }
        #expect(try completed.decode(Echo.self).bodyLength == 0)
    }

    @Test("HEAD returns headers without a body")
    func head() async throws {
        let server = try await TestServer.shared()
        let response = try await makeSession(server).send(Request("user", method: .head))
        #expect(response.statusCode == 200)
        #expect(response.data.isEmpty)
        #expect(response.headers["Content-Type"] == "application/json")
    }

    @Test("a custom method token is sent as is")
    func customMethod() async throws {
        let server = try await TestServer.shared()
        let echo = try await makeSession(server).send(Request("echo", method: "PURGE")).decode(Echo.self)
        #expect(echo.method == "PURGE")
    }

    @Test("a method with a space or CR/LF is refused before sending")
    func badMethodRefused() async throws {
        let server = try await TestServer.shared()
        let session = makeSession(server)
        let path = "echo/method-\(UUID().uuidString)"
        for method in ["GET /x HTTP/1.1\r\nX: y", "BAD METHOD", ""] {
            await expectWattleError({ _ = try await session.send(Request(path, method: HTTPMethod(rawValue: method))) })
            {
                if case .invalidRequest = $0 { return true }
                return false
            }
        }
        #expect(server.stats.hits("/" + path) == 0)
    }
}
