import Foundation
import Synchronization
import Testing
import Wattle
import WattleDemoServer
import WattleKeychain
import WattleTesting

@Suite("StubTransport scripts responses for users' tests, with no network")
struct StubTransportTests {
    struct User: Decodable, Equatable { var id: Int; var name: String }

    @Test("stubbed routes answer, requests are recorded, an unmatched request fails naming it and the routes")
    func scripted() async throws {
        let stub = StubTransport()
        stub.on(.get, "/api/users/42", json: #"{"id":42,"name":"Ada"}"#)
        stub.on(.post, "/api/users", status: 201, json: #"{"id":43,"name":"Bob"}"#)
        let session = Session(
            configuration: Configuration { $0.baseURL = URL(string: "https://api.example.test/api/") }, transport: stub)

        #expect(try await session.get("users/42").decode(User.self) == User(id: 42, name: "Ada"))
        let created = try await session.post("users", parameters: ["name": "Bob"])
        #expect(created.statusCode == 201)
        // Not a 404, which code under test could take for the server's "not found".
        await expectWattleError({ _ = try await session.get("nothing", parameters: ["token": "s3cr3t"]) }) {
            guard case .invalidRequest(let reason) = $0 else { return false }
            return reason.contains("GET /api/nothing?…") && reason.contains("GET /api/users/42, POST /api/users")
                && !reason.contains("s3cr3t") && !$0.isTransient
        }
        let requests = stub.requests
        #expect(requests.count == 3)
        #expect(requests[1].method == .post)
        #expect(requests[1].body == Data(#"{"name":"Bob"}"#.utf8))
        #expect(requests[1].headers["Content-Type"] == "application/json")
    }

    @Test("a stubbed error is thrown, and `times` lets a later route take over")
    func errorsAndTimes() async throws {
        let stub = StubTransport()
        stub.on(nil, "/flaky", error: .connectionLost(host: "api.test", reason: "reset"), times: 1)
        stub.on(.get, "/flaky", json: "{}")
        let session = Session(
            configuration: Configuration { $0.baseURL = URL(string: "https://api.test/") }, transport: stub)
        await expectWattleError({ _ = try await session.get("flaky") }) {
            if case .connectionLost = $0 { return true }
            return false
        }
        #expect(try await session.get("flaky").statusCode == 200)
    }

    @Test("redirects from a stub are followed by the session")
    func redirects() async throws {
        let stub = StubTransport()
        stub.on(.get, "/old", status: 301, headers: ["Location": "/new"])
        stub.on(.get, "/new", json: #"{"id":1,"name":"Moved"}"#)
        let session = Session(
            configuration: Configuration { $0.baseURL = URL(string: "https://api.test/") }, transport: stub)
        let response = try await session.get("old")
        #expect(response.url.path == "/new")
        #expect(try response.decode(User.self).name == "Moved")
    }

    @Test("paths match as sent: percent-encoded, trailing slash kept, a route's query matched exactly")
    func pathsAsSent() async throws {
        let stub = StubTransport()
        stub.on(.get, "/files/a%2Fb", json: #"{"which":"encoded"}"#)
        stub.on(.get, "/users/", json: #"{"which":"slash"}"#)
        stub.on(.get, "/search?q=wattle%20swift&page=2", json: #"{"which":"page 2"}"#)
        stub.on(.get, "/callback?code=s3cr3t", status: 204)
        stub.on(.get, "/search", json: #"{"which":"any query"}"#)
        stub.on(.get, "/", json: #"{"which":"root"}"#)
        let session = Session(
            configuration: Configuration { $0.baseURL = URL(string: "https://api.test/") }, transport: stub)
        func which(_ endpoint: String, _ parameters: Parameters = [:]) async throws -> String? {
            try await session.get(endpoint, parameters: parameters).json()["which"]?.stringValue
        }
        #expect(try await which("files/a%2Fb") == "encoded")
        #expect(try await which("users/") == "slash")
        #expect(try await which("search", ["q": "wattle swift", "page": "2"]) == "page 2")
        #expect(try await which("search", ["q": "wattle swift", "page": "3"]) == "any query")
        #expect(try await which("https://api.test") == "root")
        // `/users` is not `/users/`, and `/files/a/b` is not `/files/a%2Fb`.
        for endpoint in ["users", "files/a/b"] {
            await expectWattleError({ _ = try await session.get(endpoint) }) {
                // The routes are listed, a route's query as "?…".
                if case .invalidRequest(let reason) = $0 {
                    return reason.contains("GET /callback?…") && !reason.contains("s3cr3t")
                }
                return false
            }
        }
    }

    @Test("a download through the stub lands in its file with progress; an error body stays in the error")
    func downloads() async throws {
        let stub = StubTransport()
        let payload = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0) })
        stub.on(.get, "/file.bin", body: payload)
        stub.on(.get, "/missing.bin", status: 404, body: Data("no such file".utf8))
        let session = Session(
            configuration: Configuration { $0.baseURL = URL(string: "https://api.test/") }, transport: stub)
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appendingPathComponent("file.bin")
        let seen = Mutex<[DownloadProgress]>([])
        let response = try await session.download("file.bin", to: destination) { progress in
            seen.withLock { $0.append(progress) }
        }
        #expect(response.fileURL == destination && response.data.isEmpty)
        #expect(try Data(contentsOf: destination) == payload)
        #expect(seen.withLock { $0 } == [DownloadProgress(receivedBytes: 100_000, expectedBytes: 100_000)])
        await expectWattleError({
            _ = try await session.download("missing.bin", to: folder.appendingPathComponent("m"))
        }) {
            if case .httpStatus(let response) = $0 {
                return response.statusCode == 404 && response.string == "no such file"
            }
            return false
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["file.bin"])
    }

    @Test("below the session the stub acts as the libcurl transport: size limit, body file, cancellation")
    func transportRules() async throws {
        let stub = StubTransport()
        stub.on(.get, "/big", body: Data(count: 2_000))
        stub.on(.post, "/upload", status: 201)
        stub.on(.get, "/slow") { request in
            try? await Task.sleep(for: .seconds(120))
            return Response(statusCode: 200, headers: [:], data: Data(), url: request.url, method: request.method)
        }
        let session = Session(
            configuration: Configuration {
                $0.baseURL = URL(string: "https://api.test/")
                $0.maximumResponseSize = 1_000
            }, transport: stub)
        await expectWattleError({ _ = try await session.get("big") }) {
            if case .responseTooLarge(let limit, _) = $0 { return limit == 1_000 }
            return false
        }
        let missing = RequestBody.file(URL(fileURLWithPath: "/nonexistent/wattle-upload.bin"))
        await expectWattleError({ _ = try await session.send(Request("upload", method: .post, body: missing)) }) {
            if case .fileError(let path, let reason) = $0 {
                return path.hasSuffix("wattle-upload.bin") && reason.contains("cannot open")
            }
            return false
        }
        // It was never sent: the route's answer is still there.
        #expect(stub.unusedRoutes.contains("POST /upload"))
        let task = Task { try await session.get("slow") }
        try await Task.sleep(for: .milliseconds(100))
        task.cancel()
        let start = ContinuousClock.now
        guard case .failure(WattleError.cancelled) = await task.result else {
            Issue.record("expected cancelled")
            return
        }
        // Well before the handler's 120 s; loose, as the resumed task waits for a pool thread
        // (10.8 s once under TSan in CI, with every suite running).
        #expect(ContinuousClock.now - start < wellBefore(.seconds(120)))
    }

    @Test("unusedRoutes lists scripted answers never used; reset forgets routes and requests")
    func unusedAndReset() async throws {
        let stub = StubTransport()
        stub.on(.get, "/once", json: "{}", times: 2)
        stub.on(.post, "/never", status: 204)
        stub.on(nil, "/any", status: 204)
        let session = Session(
            configuration: Configuration { $0.baseURL = URL(string: "https://api.test/") }, transport: stub)
        #expect(stub.unusedRoutes == ["GET /once (2 left)", "POST /never", "* /any"])
        _ = try await session.get("once")
        _ = try await session.delete("any")
        #expect(stub.unusedRoutes == ["GET /once (1 left)", "POST /never"])
        _ = try await session.get("once")
        #expect(stub.unusedRoutes == ["POST /never"])
        stub.reset()
        #expect(stub.unusedRoutes.isEmpty && stub.requests.isEmpty)
    }

    @Test("the README's token test: kept in an in-memory keychain, refused once, refreshed once, saved")
    func tokenRefreshThroughTheStub() async throws {
        let api = URL(string: "https://api.example.com/v1/")!
        let tokens = KeychainTokenStore(origin: api, store: .inMemory())
        try await tokens.save(AuthToken(accessToken: "expired", refreshToken: "r1"))
        let stub = StubTransport()
        stub.on(.get, "/v1/me", status: 401, times: 1)
        stub.on(.post, "/v1/auth/refresh", json: #"{"access_token":"fresh","refresh_token":"r2","expires_in":3600}"#)
        stub.on(.get, "/v1/me", json: #"{"name":"Ada"}"#)
        let session = Session(
            configuration: Configuration {
                $0.baseURL = api
                $0.authenticator = Authenticator(
                    store: tokens, refresh: Authenticator.postRefreshToken(to: "auth/refresh"))
            },
            transport: stub)
        #expect(try await session.get("me").statusCode == 200)
        let requests = stub.requests
        #expect(requests.map(\.url.path) == ["/v1/me", "/v1/auth/refresh", "/v1/me"])
        #expect(requests[0].headers["Authorization"] == "Bearer expired")
        #expect(requests[1].headers["Authorization"] == nil)
        #expect(
            requests[1].body.flatMap { String(data: $0, encoding: .utf8) }?.contains(#""refresh_token":"r1""#) == true)
        #expect(requests[2].headers["Authorization"] == "Bearer fresh")
        #expect(try await tokens.load()?.refreshToken == "r2")
        #expect(stub.unusedRoutes.isEmpty)
    }
}
