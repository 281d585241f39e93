import Foundation
import Testing
import Wattle
import WattleDemoServer

/// Servers end kept-alive connections: after a number of requests (nginx's
/// `keepalive_requests`, 1,000 by default in 1.22), over HTTP/1.1 with `Connection: close` and
/// over HTTP/2 with `GOAWAY`; or when their keep-alive timeout runs out just as the next request
/// arrives. No request may fail because of it: libcurl retries a request that was sent on a
/// reused connection and got nothing back, on a new connection.
@Suite("Servers that end kept-alive connections: no request fails")
struct ConnectionLimitTests {
    @Test("HTTP/1.1 with Connection: close every 10 requests: sequential and 32 concurrent all succeed")
    func http1ConnectionClose() async throws {
        let server = try await DemoServer.start(maximumRequestsPerConnection: 10)
        let session = makeSession(server)
        for index in 0..<50 {
            let echo = try await session.get("echo", parameters: ["n": index]).decode(Echo.self)
            #expect(echo.query == "n=\(index)")
        }
        #expect(server.stats.connectionCount == 5)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<500 {
                if index >= 32 { try await group.next() }
                group.addTask {
                    let post = index.isMultiple(of: 2)
                    let request = Request(
                        "echo", method: post ? .post : .get, query: ["id": index],
                        body: post ? .json(["id": index]) : .none)
                    let echo = try await session.send(request).decode(Echo.self)
                    #expect(echo.query == "id=\(index)" && echo.method == (post ? "POST" : "GET"))
                    if post { #expect(echo.body == #"{"id":\#(index)}"#) }
                }
            }
            try await group.waitForAll()
        }
        #expect(server.stats.connectionCount >= 5 + 500 / 10)
        try await server.stop()
    }

    @Test("HTTP/2 with GOAWAY every 5 streams: every sequential request succeeds on a new connection after it")
    func http2GoAway() async throws {
        let server = try await DemoServer.start(
            tls: try TLSServers.identity.get(), http2: true, maximumRequestsPerConnection: 5)
        let session = tlsSession {
            $0.baseURL = server.baseURL
            $0.trust.selfSignedHosts = ["127.0.0.1"]
        }
        for index in 0..<30 {
            let response = try await session.get("echo", parameters: ["n": index])
            #expect(response.metrics.httpVersion == "2")
            #expect(response.metrics.reusedConnection == !index.isMultiple(of: 5))
            #expect(try response.decode(Echo.self).query == "n=\(index)")
        }
        #expect(server.stats.connectionCount == 6)
        try await server.stop()
    }

    /// Each unanswered request on a reused connection makes libcurl retry it, and libcurl counts
    /// retries per easy handle, resetting the count only in `curl_easy_reset` (7.88.1), and
    /// gives up after 5: a kept handle failed its sixth retry in its life ("Connection died,
    /// tried 5 times before giving up"). Sequential requests reuse one handle, so this fails
    /// without Wattle resetting a handle whose transfer was retried.
    @Test(
        "a server closing each reused connection as the next request arrives: 40 sequential requests, 39 of them retried, all succeed"
    )
    func retriedOnNewConnection() async throws {
        let server = try await DemoServer.start(closeUnansweredAfter: 1)
        let session = makeSession(server)
        for index in 0..<40 {
            let response = try await session.post("echo", parameters: ["n": index])
            #expect(try response.decode(Echo.self).body == #"{"n":\#(index)}"#)
        }
        // Each connection answers one request; every request after the first met a closing one
        // and was retried on a new one.
        #expect(server.stats.connectionCount == 40)
        try await server.stop()
    }
}
