import Foundation
import Synchronization
import Testing
import Wattle
import WattleTesting

/// `Request.acceptedStatuses`: statuses outside 2xx that end a request as its response.
@Suite("Accepted statuses are returned as responses; everything that leads to them works as before")
struct AcceptedStatusTests {
    @Test("an accepted 404 is the response, body and all; the same request without it throws; 2xx is unchanged")
    func acceptedNotFound() async throws {
        let session = makeSession(try await TestServer.shared())
        var request = Request("status/404")
        request.acceptedStatuses = [404, 410]
        let response = try await session.send(request)
        #expect(response.statusCode == 404 && response.error == nil && !response.isSuccess)
        #expect(response.string?.contains("\"status\":404") == true)

        request.acceptedStatuses = [410]
        await expectWattleError({ _ = try await session.send(request) }) {
            if case .httpStatus(let response) = $0 { return response.statusCode == 404 }
            return false
        }
        var fine = Request("echo")
        fine.acceptedStatuses = [404]
        #expect(try await session.send(fine).statusCode == 200)

        // The completion-handler form: the response, with no error.
        let delivered = Mutex<Response?>(nil)
        request.acceptedStatuses = [404]
        await session.send(request) { response in delivered.withLock { $0 = response } }.value
        #expect(delivered.withLock { $0?.statusCode } == 404 && delivered.withLock { $0?.error } == nil)
    }

    @Test("a conditional GET: 200 with an ETag, then 304 with none of the body")
    func conditionalGet() async throws {
        let session = makeSession(try await TestServer.shared())
        let first = try await session.send(Request("etag/v7"))
        let etag = try #require(first.headers["ETag"])
        #expect(first.statusCode == 200 && first.string == "version v7")
        var again = Request("etag/v7", headers: ["If-None-Match": etag])
        again.acceptedStatuses = [304]
        let notModified = try await session.send(again)
        #expect(notModified.statusCode == 304 && notModified.data.isEmpty)
        // The connection is still good for the next request.
        #expect(try await session.send(Request("etag/v8")).string == "version v8")
    }

    @Test("a download answered 304 leaves the file in place, and one answered 200 replaces it")
    func conditionalDownload() async throws {
        let session = makeSession(try await TestServer.shared())
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appendingPathComponent("cached.txt")
        try Data("what we had".utf8).write(to: destination)

        var unchanged = Request("etag/v1", headers: ["If-None-Match": "\"v1\""])
        unchanged.acceptedStatuses = [304]
        let kept = try await session.download(unchanged, to: destination)
        #expect(kept.statusCode == 304 && kept.fileURL == nil)
        #expect(try Data(contentsOf: destination) == Data("what we had".utf8))
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["cached.txt"], "no partial file left")

        var changed = Request("etag/v2", headers: ["If-None-Match": "\"v1\""])
        changed.acceptedStatuses = [304]
        let replaced = try await session.download(changed, to: destination)
        #expect(replaced.statusCode == 200 && replaced.fileURL == destination)
        #expect(try Data(contentsOf: destination) == Data("version v2".utf8))
    }

    @Test("the retry policy still retries an accepted 503, and the last 503 is returned when retries run out")
    func retriesFirst() async throws {
        let session = makeSession(try await TestServer.shared()) {
            $0.retry = RetryPolicy(maximumAttempts: 3, baseDelay: .milliseconds(5))
        }
        var recovers = Request("flaky/accepted-\(UUID().uuidString)?failures=2&status=503")
        recovers.acceptedStatuses = [503]
        let recovered = try await session.send(recovers)
        #expect(recovered.statusCode == 200)
        #expect(try recovered.json()["attempt"]?.intValue == 3)

        var exhausted = Request("flaky/accepted-\(UUID().uuidString)?failures=5&status=503")
        exhausted.acceptedStatuses = [503]
        let last = try await session.send(exhausted)
        #expect(last.statusCode == 503 && last.string?.contains("try again") == true)
    }

    @Test("an accepted 401 still refreshes the token first; the 401 is returned only when the retry gets one too")
    func refreshesFirst() async throws {
        let stub = StubTransport()
        let refreshes = Mutex(0)
        stub.on(.get, "/me", status: 401, json: #"{"error":"expired"}"#, times: 1)
        stub.on(.get, "/me", status: 200, json: #"{"id":1}"#, times: 1)
        stub.on(.get, "/me", status: 401, json: #"{"error":"revoked"}"#)
        let session = Session(
            configuration: Configuration {
                $0.baseURL = URL(string: "https://api.test/")
                $0.authenticator = Authenticator(
                    store: InMemoryTokenStore(AuthToken(accessToken: "old", refreshToken: "r"))
                ) {
                    _, _ in
                    let count = refreshes.withLock {
                        $0 += 1; return $0
                    }
                    return AuthToken(accessToken: "new-\(count)", refreshToken: "r")
                }
            }, transport: stub)
        var request = Request("me")
        request.acceptedStatuses = [401]
        let refreshed = try await session.send(request)
        #expect(refreshed.statusCode == 200 && refreshes.withLock { $0 } == 1)
        let refused = try await session.send(request)
        #expect(refused.statusCode == 401 && refused.string?.contains("revoked") == true)
        #expect(refreshes.withLock { $0 } == 2)
    }
}
