import Foundation
import Testing
import Wattle
import WattleDemoServer

/// The engine keeps its curl handles between transfers and sets only what differs from one
/// transfer to the next (no `curl_easy_reset`). One request after another on a session runs
/// on the same handle, so each of these tests fails if any option of one request leaks into
/// the next.
@Suite("A reused curl handle carries nothing from one request to the next")
struct HandleReuseTests {
    @Test("method, body and headers are each request's own")
    func methodBodyAndHeaders() async throws {
        let server = try await TestServer.shared()
        let session = makeSession(server)

        let head = try await session.send(Request("echo", method: .head))
        #expect(head.statusCode == 200 && head.data.isEmpty)
        // After HEAD (CURLOPT_NOBODY): a GET has its body again.
        var echo = try await session.get("echo").decode(Echo.self)
        #expect(echo.method == "GET" && echo.bodyLength == 0)

        echo = try await session.send(Request("echo", method: .post, body: .data(Data("first".utf8)))).decode(Echo.self)
        #expect(echo.method == "POST" && echo.body == "first")
        // After a POST with a body: a GET sends none, and no Content-Length.
        echo = try await session.get("echo").decode(Echo.self)
        #expect(echo.method == "GET" && echo.bodyLength == 0 && echo.header("Content-Length") == nil)

        echo = try await session.send(Request("echo", method: .put, body: .data(Data("second".utf8)))).decode(Echo.self)
        #expect(echo.method == "PUT" && echo.body == "second")
        // After a custom method: DELETE without a body, then a plain GET.
        echo = try await session.delete("echo").decode(Echo.self)
        #expect(echo.method == "DELETE" && echo.bodyLength == 0)
        echo = try await session.get("echo").decode(Echo.self)
        #expect(echo.method == "GET")
        // A POST without a body after one with a body sends an empty one.
        echo = try await session.send(Request("echo", method: .post)).decode(Echo.self)
        #expect(echo.method == "POST" && echo.bodyLength == 0)

        // Headers: the same list twice, then another, then none of the first's.
        for _ in 0..<2 {
            echo = try await session.get("echo", headers: ["X-One": "1"]).decode(Echo.self)
            #expect(echo.header("X-One") == "1")
        }
        echo = try await session.get("echo", headers: ["X-Two": "2"]).decode(Echo.self)
        #expect(echo.header("X-Two") == "2" && echo.header("X-One") == nil)
        echo = try await session.get("echo").decode(Echo.self)
        #expect(echo.header("X-One") == nil && echo.header("X-Two") == nil)
    }

    @Test("a trusted certificate or a pin for one host does not carry over to the next request")
    func trustDoesNotCarryOver() async throws {
        let server = try await TLSServers.server()
        let pem = try TLSServers.identity.get().certificatePEM
        // The server's certificate names both localhost and 127.0.0.1; only localhost is trusted.
        let trusted = tlsSession { $0.trust.trust(certificatePEM: pem, for: "localhost") }
        for _ in 0..<2 {
            #expect(try await trusted.get(server.url("user", host: "localhost").absoluteString).statusCode == 200)
            await expectWattleError({ _ = try await trusted.get(server.url("user").absoluteString) }) {
                isUntrusted($0, host: "127.0.0.1")
            }
        }

        // A wrong pin on localhost fails; the next request, to an allowlisted host without a
        // pin, must not be checked against it.
        let wrong = try PublicKeyPin.pin(forCertificatePEM: try TLSServers.otherIdentity.get().certificatePEM)
        let pinned = tlsSession {
            $0.trust.selfSignedHosts = ["127.0.0.1"]
            $0.trust.pin("localhost", to: [wrong])
        }
        for _ in 0..<2 {
            await expectWattleError({ _ = try await pinned.get(server.url("user", host: "localhost").absoluteString) })
            {
                if case .pinMismatch = $0 { return true }
                return false
            }
            #expect(try await pinned.get(server.url("user").absoluteString).statusCode == 200)
        }
    }

    @Test("a timeout and a size limit apply to their own request only")
    func limitsDoNotCarryOver() async throws {
        let server = try await TestServer.shared()
        let session = makeSession(server) { $0.maximumResponseSize = 1_000 }

        await expectWattleError({ _ = try await session.send(Request("delay/2000", timeout: .milliseconds(200))) }) {
            if case .timedOut(phase: .total, _, _) = $0 { return true }
            return false
        }
        // The next request, without a timeout of its own, outlives the last one's 200 ms.
        #expect(try await session.get("delay/700").statusCode == 200)

        // A download has no in-memory limit; the request after it has the session's again.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("wattle-reuse-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("bytes")
        _ = try await session.download("bytes/5000", to: file)
        #expect(try Data(contentsOf: file).count == 5_000)
        await expectWattleError({ _ = try await session.get("bytes/5000") }) {
            if case .responseTooLarge(limit: 1_000, _) = $0 { return true }
            return false
        }
        _ = try await session.download("bytes/5000", to: file)
        #expect(try Data(contentsOf: file).count == 5_000)
    }
}
