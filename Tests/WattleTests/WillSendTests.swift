import Foundation
import Synchronization
import Testing
import Wattle
import WattleDemoServer

@Suite("Configuration.willSend: headers computed per attempt and per hop to the request's origin")
struct WillSendTests {
    /// Every request the hook saw: method and URL path.
    final class Seen: Sendable {
        let calls = Mutex<[String]>([])
        var list: [String] { calls.withLock { $0 } }
    }

    func session(_ server: DemoServer, _ seen: Seen, _ configure: (inout Configuration) -> Void = { _ in }) -> Session {
        makeSession(server) {
            $0.willSend = { request in
                let count = seen.calls.withLock { calls in
                    calls.append("\(request.method) \(request.url.path)")
                    return calls.count
                }
                // A stand-in for a signature over what is sent.
                return [
                    "X-Signature": "\(request.method) \(request.url.path) \(request.body?.count ?? 0)",
                    "X-Request-ID": "\(count)",
                ]
            }
            configure(&$0)
        }
    }

    @Test("the headers go out with the request, replacing same-named ones, signed over its method, path and body")
    func sentWithTheRequest() async throws {
        let server = try await TestServer.shared()
        let seen = Seen()
        let echo = try await session(server, seen).send(
            Request("echo", method: .post, headers: ["X-Request-ID": "mine"], body: .json(["a": 1]))
        ).decode(Echo.self)
        #expect(echo.header("X-Signature") == "POST /echo 7")
        #expect(echo.headerValues("X-Request-ID") == ["1"])
        #expect(seen.list == ["POST /echo"])
    }

    @Test("called again for a retry and for a redirect hop to the same origin, with that hop's URL")
    func perAttemptAndPerHop() async throws {
        let server = try await TestServer.shared()
        let seen = Seen()
        let retrying = session(server, seen) {
            $0.retry = RetryPolicy(maximumAttempts: 3, baseDelay: .milliseconds(10))
        }
        let id = UUID().uuidString
        #expect(try await retrying.get("flaky/\(id)", parameters: ["failures": 1, "status": 503]).statusCode == 200)
        #expect(seen.list == ["GET /flaky/\(id)", "GET /flaky/\(id)"])

        let hopped = try await session(server, seen).get("redirect/302", parameters: ["to": "/echo"]).decode(Echo.self)
        #expect(hopped.header("X-Signature") == "GET /echo 0")
        #expect(seen.list.suffix(2) == ["GET /redirect/302", "GET /echo"])
    }

    @Test("a hop or a request to another origin than the API's gets no call and none of the headers")
    func otherOriginGetsNothing() async throws {
        let server = try await TestServer.shared()
        let other = try await DemoServer.start()
        let seen = Seen()
        let session = session(server, seen)
        let hopped = try await session.get("redirect/302", parameters: ["to": other.url("echo").absoluteString])
            .decode(Echo.self)
        #expect(hopped.header("X-Signature") == nil && hopped.header("X-Request-ID") == nil)
        #expect(seen.list == ["GET /redirect/302"])
        // An absolute URL elsewhere (a presigned upload, say), and a redirect from there back
        // to the API, whose hop gets the headers.
        let direct = try await session.get(other.url("echo").absoluteString).decode(Echo.self)
        #expect(direct.header("X-Signature") == nil)
        let back = try await session.get(
            other.url("redirect/302").absoluteString, parameters: ["to": server.url("echo").absoluteString]
        ).decode(Echo.self)
        #expect(back.header("X-Signature") == "GET /echo 0")
        #expect(seen.list == ["GET /redirect/302", "GET /echo"])
        try await other.stop()
    }

    @Test("a hook that throws, or returns a header that cannot be sent, fails the request unsent")
    func failures() async throws {
        let server = try await TestServer.shared()
        let path = "echo/\(UUID().uuidString)"
        let refusing = makeSession(server) {
            $0.willSend = { _ throws(WattleError) in throw .invalidRequest(reason: "no signing key") }
        }
        await expectWattleError({ _ = try await refusing.get(path) }) {
            if case .invalidRequest(let reason) = $0 { return reason == "no signing key" }
            return false
        }
        let broken = makeSession(server) { $0.willSend = { _ in ["X-Signature": "a\r\nX-Injected: 1"] } }
        await expectWattleError({ _ = try await broken.get(path) }) {
            if case .invalidHeader(let name, _) = $0 { return name == "X-Signature" }
            return false
        }
        #expect(server.stats.hits("/\(path)") == 0)
    }

    @Test("the hook's time counts toward the total timeout: what is left goes to the transfer, none left fails unsent")
    func hookTimeCountsTowardTheTotal() async throws {
        let server = try await TestServer.shared()
        func session(hookTime: Duration) -> Session {
            makeSession(server) {
                $0.timeouts.total = .seconds(2)
                $0.willSend = { _ in
                    try? await Task.sleep(for: hookTime)
                    return ["X-Request-ID": "1"]
                }
            }
        }
        func isTotal(_ error: WattleError) -> Bool {
            if case .timedOut(.total, let after, _) = error { return after == .seconds(2) }
            return false
        }
        // 0.6 s in the hook leave 1.4 for a response that takes 1.6: the total fires. (The
        // transfer alone would have 2 s. On a loaded machine the hook's sleep may end late,
        // after the whole timeout: the request is then not sent, the same error.)
        await expectWattleError({ _ = try await session(hookTime: .milliseconds(600)).get("delay/1600") }) {
            isTotal($0)
        }
        // A hook that takes longer than the whole timeout: nothing is sent.
        let unsent = "echo/\(UUID().uuidString)"
        await expectWattleError({ _ = try await session(hookTime: .milliseconds(2100)).get(unsent) }) { isTotal($0) }
        #expect(server.stats.hits("/\(unsent)") == 0)
    }
}
