import Foundation
import Testing
import Wattle
import WattleDemoServer

@Suite("One session carries many requests at once")
struct ConcurrencyTests {
    @Test("200 concurrent requests each get their own response")
    func twoHundredConcurrent() async throws {
        let server = try await TestServer.shared()
        let session = makeSession(server)
        let results = try await withThrowingTaskGroup(of: (Int, Echo).self) { group in
            for index in 0..<200 {
                group.addTask {
                    let method: HTTPMethod = index.isMultiple(of: 2) ? .get : .post
                    let request = Request(
                        "echo", method: method, query: ["id": index],
                        body: method == .post ? .json(["id": index]) : .none)
                    return (index, try await session.send(request).decode(Echo.self))
                }
            }
            var collected: [(Int, Echo)] = []
            for try await result in group { collected.append(result) }
            return collected
        }
        #expect(results.count == 200)
        for (index, echo) in results {
            #expect(echo.query == "id=\(index)")
            if index.isMultiple(of: 2) {
                #expect(echo.method == "GET")
            } else {
                #expect(echo.method == "POST" && echo.body == #"{"id":\#(index)}"#)
            }
        }
    }

    @Test("sequential requests reuse one connection")
    func connectionReuse() async throws {
        let server = try await DemoServerFixture.fresh()
        let session = makeSession(server)
        let first = try await session.get("user")
        #expect(!first.metrics.reusedConnection)
        for _ in 0..<20 {
            let response = try await session.get("user")
            #expect(response.metrics.reusedConnection)
            #expect(response.metrics.httpVersion == "1.1")
        }
        #expect(server.stats.connectionCount == 1)
        try await server.stop()
    }

    @Test("metrics report timings, sizes and the peer")
    func metrics() async throws {
        let server = try await TestServer.shared()
        let response = try await makeSession(server).get("bytes/10000")
        let metrics = response.metrics
        #expect(metrics.bytesReceived == 10000)
        #expect(metrics.total > .zero)
        #expect(metrics.firstByte <= metrics.total)
        #expect(metrics.remoteAddress == "127.0.0.1")
        #expect(metrics.remotePort == server.port)
    }
}

/// A server of its own, for tests that count connections.
enum DemoServerFixture {
    static func fresh() async throws -> DemoServer { try await DemoServer.start() }
}
