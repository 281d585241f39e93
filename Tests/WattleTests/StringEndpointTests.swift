import Foundation
import Testing
import Wattle
import WattleDemoServer

@Suite("String endpoint helpers use Session.shared", .serialized)
struct StringEndpointTests {
    @Test("\"echo\".get/post/put/patch/delete reach the shared session's base URL, async and with completions")
    func helpers() async throws {
        let server = try await TestServer.shared()
        Session.configureShared {
            $0.baseURL = server.baseURL
            $0.proxy = .none
        }
        #expect(try await "echo".get(parameters: ["page": 2]).decode(Echo.self).query == "page=2")
        #expect(try await "echo".post(parameters: ["name": "Ada"]).decode(Echo.self).body == #"{"name":"Ada"}"#)
        #expect(try await "echo".put(parameters: ["a": 1]).decode(Echo.self).method == "PUT")
        #expect(try await "echo".patch(parameters: ["a": 1]).decode(Echo.self).method == "PATCH")
        #expect(try await "echo".delete().decode(Echo.self).method == "DELETE")
        // No parameters, no body (an empty JSON object is asked for with [:]).
        #expect(try await "echo".post().decode(Echo.self).bodyLength == 0)
        #expect(try await "echo".put(parameters: [:]).decode(Echo.self).body == "{}")

        let viaCompletion = await withCheckedContinuation { continuation in
            "echo".post(parameters: ["via": "completion"]) { continuation.resume(returning: $0) }
        }
        #expect(viaCompletion.error == nil)
        #expect(try viaCompletion.decode(Echo.self).body == #"{"via":"completion"}"#)

        let failed = await withCheckedContinuation { continuation in
            "status/500".get { continuation.resume(returning: $0) }
        }
        #expect(failed.statusCode == 500)
        #expect(failed.error?.response?.statusCode == 500)

        let refused = try refusedPort()
        let unreachable = await withCheckedContinuation { continuation in
            "http://127.0.0.1:\(refused)/x".delete { continuation.resume(returning: $0) }
        }
        #expect(unreachable.statusCode == 0)
        guard case .cannotConnect = unreachable.error else {
            Issue.record("expected cannotConnect, got \(String(describing: unreachable.error))")
            return
        }
    }
}
