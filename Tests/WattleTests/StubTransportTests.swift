import Foundation
import Testing
import Wattle
import WattleDemoServer
import WattleTesting

@Suite("StubTransport scripts responses for users' tests, with no network")
struct StubTransportTests {
    struct User: Decodable, Equatable { var id: Int; var name: String }

    @Test("stubbed routes answer, requests are recorded, unmatched requests get a 404")
    func scripted() async throws {
        let stub = StubTransport()
        stub.on(.get, "/api/users/42", json: #"{"id":42,"name":"Ada"}"#)
        stub.on(.post, "/api/users", status: 201, json: #"{"id":43,"name":"Bob"}"#)
        let session = Session(
            configuration: Configuration { $0.baseURL = URL(string: "https://api.example.test/api/") }, transport: stub)

        #expect(try await session.get("users/42").decode(User.self) == User(id: 42, name: "Ada"))
        let created = try await session.post("users", parameters: ["name": "Bob"])
        #expect(created.statusCode == 201)
        await expectWattleError({ _ = try await session.get("nothing") }) {
            if case .httpStatus(let response) = $0 { return response.statusCode == 404 }
            return false
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
        let session = Session(configuration: Configuration { $0.baseURL = URL(string: "https://api.test/") }, transport: stub)
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
        let session = Session(configuration: Configuration { $0.baseURL = URL(string: "https://api.test/") }, transport: stub)
        let response = try await session.get("old")
        #expect(response.url.path == "/new")
        #expect(try response.decode(User.self).name == "Moved")
    }
}
