import Foundation
import TestProxies
import Testing
import Wattle
import WattleDemoServer

@Suite("Timeouts, refused connections, unknown hosts and dropped connections give the right error, promptly")
struct FailureTests {
    @Test("an error's localizedDescription is its description, with the context and without the credential")
    func localizedDescription() async throws {
        let server = try await TestServer.shared()
        let error = await #expect(throws: WattleError.self) {
            _ = try await makeSession(server).get("status/404", parameters: ["api_key": "s3cr3t-value"])
        }
        let text = try #require(error as (any Error)?).localizedDescription
        #expect(text == error?.description)
        #expect(text.contains("404") && text.contains("status/404"), "\(text)")
        #expect(!text.contains("s3cr3t-value"), "\(text)")
    }

    @Test("a timeout too long to count in milliseconds means no limit, not a crash")
    func hugeTimeouts() async throws {
        let session = makeSession(try await TestServer.shared()) {
            $0.timeouts = Timeouts(connect: .seconds(Int64.max), total: .seconds(Int64.max), stall: .seconds(Int64.max))
        }
        #expect(try await session.send(Request("echo", timeout: .seconds(Int64.max / 2))).statusCode == 200)
    }

    @Test("a timeout of zero or less is refused unsent, saying nil is none, not taken as 1 ms")
    func zeroTimeouts() async throws {
        let server = try await TestServer.shared()
        for (timeouts, name) in [
            (Timeouts(connect: .zero), "connect"), (Timeouts(total: .zero), "total"),
            (Timeouts(stall: .milliseconds(-5)), "stall"),
        ] {
            let session = makeSession(server) { $0.timeouts = timeouts }
            await expectWattleError({ _ = try await session.get("echo") }) {
                if case .invalidRequest(let reason) = $0 {
                    return reason.contains("the \(name) timeout must be longer")
                }
                return false
            }
        }
        await expectWattleError({ _ = try await makeSession(server).send(Request("echo", timeout: .zero)) }) {
            if case .invalidRequest(let reason) = $0 { return reason.contains("the request's timeout must be longer") }
            return false
        }
        // A download, which drops the configured total, is refused all the same.
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let zeroTotal = makeSession(server) { $0.timeouts = Timeouts(total: .zero) }
        await expectWattleError({ _ = try await zeroTotal.download("echo", to: folder.appendingPathComponent("x")) }) {
            if case .invalidRequest(let reason) = $0 { return reason.contains("the total timeout must be longer") }
            return false
        }
        let none = makeSession(server) { $0.timeouts = Timeouts(total: nil, stall: nil) }
        #expect(try await none.get("echo").statusCode == 200)
    }

    @Test("a total timeout shorter than the connect timeout, firing while connecting, is reported as the total")
    func totalShorterThanConnect() async throws {
        let silent = try SilentServer()  // accepts, never completes the TLS handshake
        defer { withExtendedLifetime(silent) {} }  // its socket closes when it is released
        let session = makeSession(try await TestServer.shared()) {
            $0.timeouts = Timeouts(connect: .seconds(10), total: .milliseconds(300))
        }
        await expectWattleError({ _ = try await session.get("https://127.0.0.1:\(silent.port)/x") }) {
            if case .timedOut(phase: .total, let after, _) = $0 { return after == .milliseconds(300) }
            return false
        }
    }

    @Test(
        "a request that waits for a connection (connectionsPerHost 1) fails at its total limit, with the total, not a connect timeout",
        // Under a sanitizer the second request once started only after the first had ended
        // (80 s, TSan), getting the connection: the ordering this test needs does not hold there.
        .disabled(if: underSanitizer)
    )
    func totalTimeoutWhileQueued() async throws {
        let server = try await TestServer.shared()
        let session = makeSession(server) {
            $0.connectionsPerHost = 1
            $0.timeouts = Timeouts(connect: .seconds(1), total: .seconds(2), stall: nil)
        }
        // The one connection is busy for 120 s (a path no other test uses: its arrival is
        // counted); the second request, sent once the first has arrived, waits for it, never
        // connecting. (Long: the second is sent after waits for a pool thread, 8 s at times.)
        let busy = Task {
            try await session.send(Request("delay/120017", timeout: .seconds(240)))
        }
        let deadline = ContinuousClock.now + .seconds(60)
        while server.stats.hits("/delay/120017") == 0, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        try #require(server.stats.hits("/delay/120017") == 1, "the first request did not arrive")
        let start = ContinuousClock.now
        await expectWattleError({ _ = try await session.get("echo") }) {
            if case .timedOut(phase: .total, let after, _) = $0 { return after == .seconds(2) }
            return false
        }
        // At its limit, not when the connection frees: libcurl 7.88 checks no limit while a
        // transfer waits for a connection, and failed it only after the first had ended.
        #expect(ContinuousClock.now - start < wellBefore(.seconds(120)))
        busy.cancel()
        await expectWattleError({ _ = try await busy.value }) {
            if case .cancelled = $0 { return true }
            return false
        }
    }

    @Test("the connect timeout fires during a TLS handshake that never completes")
    func connectTimeout() async throws {
        let silent = try SilentServer()
        defer { withExtendedLifetime(silent) {} }  // its socket closes when it is released
        let session = makeSession(try await TestServer.shared()) {
            $0.timeouts = Timeouts(connect: .milliseconds(300), total: .seconds(120))
        }
        let start = ContinuousClock.now
        await expectWattleError({ _ = try await session.get("https://127.0.0.1:\(silent.port)/") }) {
            if case .timedOut(let phase, let after, _) = $0 { return phase == .connect && after == .milliseconds(300) }
            return false
        }
        // Not the total timeout. (Loose bounds throughout: the suite runs in parallel on 2 cores,
        // and a resumed task can wait for a cooperative thread. The error's phase is the real check.)
        #expect(ContinuousClock.now - start < wellBefore(.seconds(120)))
    }

    @Test("the total timeout fires when the server is slower than allowed")
    func totalTimeout() async throws {
        let server = try await TestServer.shared()
        let session = makeSession(server)
        let start = ContinuousClock.now
        await expectWattleError({ _ = try await session.send(Request("delay/120000", timeout: .milliseconds(300))) }) {
            if case .timedOut(let phase, _, _) = $0 { return phase == .total }
            return false
        }
        #expect(ContinuousClock.now - start < wellBefore(.seconds(120)))
    }

    @Test("the total timeout covers the redirects followed, not each hop afresh")
    func totalCoversRedirects() async throws {
        let server = try await TestServer.shared()
        let session = makeSession(server)
        // Five hops of 300 ms each: every one within 1 s, all of them not.
        await expectWattleError({
            _ = try await session.send(Request("redirect-chain/5?delay=300", timeout: .seconds(1)))
        }) {
            if case .timedOut(phase: .total, let after, _) = $0 { return after == .seconds(1) }
            return false
        }
        // (No wall-time bound: the whole chain takes 1.5 s, so only the error tells a total
        // that covers the chain from one that each hop restarts.)
        // Within the limit, the chain is followed to its end. (Generous: under a sanitizer, with
        // the whole suite on 2 cores, two 100 ms hops once took over 5 s, and the time between
        // hops includes waits for a pool thread.)
        let followed = try await session.send(Request("redirect-chain/2?delay=100", timeout: .seconds(120)))
        #expect(followed.statusCode == 200 && followed.metrics.redirectCount == 2)
    }

    @Test("the stall timeout fires when the body stops arriving")
    func stallTimeout() async throws {
        let server = try await TestServer.shared()
        let session = makeSession(server) {
            $0.timeouts = Timeouts(connect: .seconds(5), total: .seconds(120), stall: .seconds(1))
        }
        let start = ContinuousClock.now
        await expectWattleError({ _ = try await session.get("stall") }) {
            if case .timedOut(let phase, _, _) = $0 { return phase == .stall }
            return false
        }
        #expect(ContinuousClock.now - start < wellBefore(.seconds(120)))
    }

    @Test("a refused connection is cannotConnect with host and port")
    func refused() async throws {
        let port = try refusedPort()
        let session = makeSession(try await TestServer.shared())
        await expectWattleError({ _ = try await session.get("http://127.0.0.1:\(port)/") }) {
            if case .cannotConnect(let host, let errorPort, let reason) = $0 {
                return host == "127.0.0.1" && errorPort == port && reason.contains("refused")
            }
            return false
        }
    }

    @Test("an unresolvable host is cannotResolveHost")
    func unresolvable() async throws {
        let session = makeSession(try await TestServer.shared())
        await expectWattleError({ _ = try await session.get("http://wattle-test-host.invalid/") }) {
            if case .cannotResolveHost(let host) = $0 { return host == "wattle-test-host.invalid" }
            return false
        }
    }

    @Test("a connection dropped mid-body is connectionLost, and the session keeps working")
    func droppedMidBody() async throws {
        let server = try await TestServer.shared()
        let session = makeSession(server)
        await expectWattleError({ _ = try await session.get("drop") }) {
            if case .connectionLost = $0 { return true }
            return false
        }
        await expectWattleError({ _ = try await session.get("close") }) {
            if case .connectionLost = $0 { return true }
            return false
        }
        #expect(try await session.get("user").statusCode == 200)
    }

    @Test("a body over the size limit is responseTooLarge, and nothing over the limit is kept")
    func tooLarge() async throws {
        let server = try await TestServer.shared()
        let session = makeSession(server) { $0.maximumResponseSize = 1_000_000 }
        await expectWattleError({ _ = try await session.get("bytes/5000000") }) {
            if case .responseTooLarge(let limit, _) = $0 { return limit == 1_000_000 }
            return false
        }
        #expect(try await session.get("bytes/1000000").data.count == 1_000_000)
    }
}

@Suite("Cancellation stops the transfer at once")
struct CancellationTests {
    @Test("cancelling a task mid-transfer throws cancelled without waiting for the server")
    func cancelMidTransfer() async throws {
        let server = try await TestServer.shared()
        // No stall timeout, and a total past the server's delay: only the cancel can end it (the
        // default 30 s stall could win a race with a resume that waits for a pool thread).
        let session = makeSession(server) { $0.timeouts = Timeouts(total: .seconds(240), stall: nil) }
        let task = Task { try await session.get("delay/120000") }
        try await Task.sleep(for: .milliseconds(200))
        let start = ContinuousClock.now
        task.cancel()
        let result = await task.result
        // Well before the 120 s the server would take: the suite runs in parallel on 2 cores
        // and the resumed task waits for a pool thread (5.4 s once while every suite was
        // starting, 6.4 s once under TSan).
        #expect(ContinuousClock.now - start < wellBefore(.seconds(120)))
        guard case .failure(let error) = result, case .cancelled = error as? WattleError else {
            Issue.record("expected cancelled, got \(result)")
            return
        }
        // The session is still usable.
        #expect(try await session.get("user").statusCode == 200)
    }

    @Test("cancelling a large streaming download stops it and leaves no file")
    func cancelDownload() async throws {
        let server = try await TestServer.shared()
        let session = makeSession(server)
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appendingPathComponent("big.bin")
        let task = Task { try await session.download("bytes/2000000000", to: destination) }
        try await Task.sleep(for: .milliseconds(300))
        task.cancel()
        let result = await task.result
        guard case .failure(let error) = result, case .cancelled = error as? WattleError else {
            Issue.record("expected cancelled, got \(result)")
            return
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
    }

    @Test("a task cancelled before sending throws cancelled and sends nothing")
    func cancelledBeforeStart() async throws {
        let server = try await TestServer.shared()
        let session = makeSession(server)
        let before = server.stats.hits("/delay/10")
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await session.get("delay/10")
        }
        let result = await task.result
        guard case .failure(let error) = result, case .cancelled = error as? WattleError else {
            Issue.record("expected cancelled, got \(result)")
            return
        }
        #expect(server.stats.hits("/delay/10") == before)
    }
}
