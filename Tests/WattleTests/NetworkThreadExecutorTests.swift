import Foundation
import Testing
import WattleDemoServer
import WattleTesting

@testable import Wattle

/// The name of the thread running the caller (Linux: `/proc/thread-self/comm`).
func currentThreadName() -> String {
    let name = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
    return name.trimmingCharacters(in: .whitespacesAndNewlines)
}

@Suite("withNetworkThreadExecutor: a task that runs on the network thread, without hand-offs")
struct NetworkThreadExecutorTests {
    @Test("inside, the task resumes on the network thread after each request; outside, it does not")
    func runsOnTheNetworkThread() async throws {
        let server = try await TestServer.shared()
        let session = makeSession(server)
        let (names, indices, unstructured) = try await session.withNetworkThreadExecutor {
            var names: Set<String> = []
            var indices: [String] = []
            for index in 0..<200 {
                let echo = try await session.get("echo", parameters: ["i": index]).decode(Echo.self)
                names.insert(currentThreadName())
                indices.append(echo.query)
            }
            // An unstructured task does not inherit the preference (documented).
            let unstructured = await Task {
                _ = try? await session.get("user"); return currentThreadName()
            }.value
            return (names, indices, unstructured)
        }
        // Right after the scope, before any other suspension, the task has left the thread.
        #expect(currentThreadName() != "wattle-curl")
        #expect(names == ["wattle-curl"])
        #expect(unstructured != "wattle-curl")
        #expect(indices == (0..<200).map { "i=\($0)" })
        _ = try await session.get("user")
        #expect(currentThreadName() != "wattle-curl")
    }

    @Test("child tasks inherit it: 16 workers × 25 requests on one thread, every response matched")
    func childTasksShareTheThread() async throws {
        let server = try await TestServer.shared()
        let session = makeSession(server) { $0.connectionsPerHost = 16 }
        let results = try await session.withNetworkThreadExecutor {
            try await withThrowingTaskGroup(of: (Bool, Set<String>).self) { group in
                for worker in 0..<16 {
                    group.addTask {
                        var matched = true
                        var names: Set<String> = []
                        for request in 0..<25 {
                            let echo = try await session.get("echo", parameters: ["w": worker, "r": request]).decode(
                                Echo.self)
                            matched = matched && echo.query == "w=\(worker)&r=\(request)"
                            names.insert(currentThreadName())
                        }
                        return (matched, names)
                    }
                }
                var all: [(Bool, Set<String>)] = []
                for try await result in group { all.append(result) }
                return all
            }
        }
        #expect(results.count == 16)
        #expect(results.allSatisfy { $0.0 })
        #expect(results.allSatisfy { $0.1 == ["wattle-curl"] })
    }

    @Test("cancelling a request inside it throws cancelled promptly; the session goes on working")
    func cancellation() async throws {
        let server = try await TestServer.shared()
        let session = makeSession(server)
        let result: Result<Response, WattleError> = await session.withNetworkThreadExecutor {
            await withTaskGroup(of: Result<Response, WattleError>.self) { group in
                group.addTask {
                    do throws(WattleError) { return .success(try await session.get("delay/30000")) } catch {
                        return .failure(error)
                    }
                }
                try? await Task.sleep(for: .milliseconds(200))
                group.cancelAll()
                return await group.next()!
            }
        }
        guard case .failure(.cancelled) = result else {
            Issue.record("expected cancelled, got \(result)")
            return
        }
        #expect(try await session.withNetworkThreadExecutor { try await session.get("user").statusCode } == 200)
    }

    @Test("errors pass through typed, and a session released right after the scope shuts down cleanly")
    func errorsAndRelease() async throws {
        let server = try await TestServer.shared()
        var session: Session? = makeSession(server)
        await #expect(throws: WattleError.self) {
            try await session!.withNetworkThreadExecutor { () async throws(WattleError) in
                _ = try await session!.get("status/404")
            }
        }
        let status = try await session!.withNetworkThreadExecutor { try await session!.get("user").statusCode }
        session = nil
        #expect(status == 200)
        // A new session afterwards works as usual (the engine thread of the old one has gone).
        #expect(try await makeSession(server).get("user").statusCode == 200)
    }

    @Test(
        "a download's file work (rename, folder fsync, the partial's lock) runs off the network thread; downloads there land"
    )
    func downloadFileWorkOffTheNetworkThread() async throws {
        let server = try await TestServer.shared()
        let session = makeSession(server)
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (here, there) = try await session.withNetworkThreadExecutor {
            (currentThreadName(), try await session.onGlobalExecutor { () throws(WattleError) in currentThreadName() })
        }
        #expect(here == "wattle-curl" && there != "wattle-curl")
        try await session.withNetworkThreadExecutor {
            for resumable in [false, true] {
                let file = folder.appendingPathComponent("file-\(resumable).bin")
                let response = try await session.download("resource/3000", to: file, resumable: resumable)
                #expect(response.fileURL == file && currentThreadName() == "wattle-curl")
                #expect(try Data(contentsOf: file).count == 3000)
            }
        }
    }

    @Test("with a transport other than the engine (StubTransport), the operation runs as usual")
    func otherTransport() async throws {
        let stub = StubTransport()
        stub.on(.get, "/ping", json: #"{"ok":true}"#)
        let session = Session(
            configuration: Configuration { $0.baseURL = URL(string: "https://api.test/") }, transport: stub)
        let (status, name) = try await session.withNetworkThreadExecutor {
            (try await session.get("ping").statusCode, currentThreadName())
        }
        #expect(status == 200 && name != "wattle-curl")
    }

    @Test("networkThreadExecutor: a detached task given it sends and resumes on the network thread; nil for a stub")
    func executorForUnstructuredTasks() async throws {
        let server = try await TestServer.shared()
        let session = makeSession(server)
        let executor = try #require(session.networkThreadExecutor)
        let (names, queries) = try await Task.detached(executorPreference: executor) {
            var names = [currentThreadName()]
            var queries: [String] = []
            for index in 0..<20 {
                queries.append(try await session.get("echo", parameters: ["i": index]).decode(Echo.self).query)
                names.append(currentThreadName())
            }
            return (names, queries)
        }.value
        #expect(queries == (0..<20).map { "i=\($0)" })
        #expect(names.count == 21 && names.allSatisfy { $0 == "wattle-curl" }, "\(names)")
        #expect(Session(transport: StubTransport()).networkThreadExecutor == nil)
    }
}
