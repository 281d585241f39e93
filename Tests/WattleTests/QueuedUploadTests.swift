import Foundation
import Testing
import WattleDemoServer

@testable import Wattle

/// A streamed body's files are opened once a connection is ready for the request, not while it
/// waits for one: uploads queued behind a busy connection hold no file descriptor.
@Suite struct QueuedUploadTests {
    typealias Files = FileBodyTests.Files

    /// How many of this process's descriptors are open on `path`.
    static func descriptors(on path: String) -> Int {
        let folder = "/proc/self/fd"
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return -1 }
        return names.filter { (try? FileManager.default.destinationOfSymbolicLink(atPath: "\(folder)/\($0)")) == path }
            .count
    }

    @Test("12 uploads queued on one connection hold at most the sending one's file open, and all arrive")
    func queuedUploadsHoldNoDescriptor() async throws {
        let files = try Files()
        let (url, _) = try files.make("queued.bin", size: 4096)
        let server = try await TestServer.shared()
        let session = makeSession(server) { $0.connectionsPerHost = 1 }
        let uploads = Task {
            try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<12 {
                    group.addTask {
                        // Each answer waits 250 ms: the others wait for the one connection.
                        try await session.send(Request("delay/250", method: .post, body: .file(url)))
                            .decode(Echo.self).bodyLength
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
        }
        // While they run (3 s in all), the file is open at most once: the upload being sent
        // (twice for a moment, as one transfer ends and the next is handed the connection).
        var most = 0
        let deadline = ContinuousClock.now + .seconds(2)
        while ContinuousClock.now < deadline {
            most = max(most, Self.descriptors(on: url.path))
            try await Task.sleep(for: .milliseconds(20))
        }
        let lengths = try await uploads.value
        #expect(lengths == Array(repeating: 4096, count: 12))
        #expect(most <= 2, "the file was open \(most) times at once")
        #expect(Self.descriptors(on: url.path) == 0)
    }

    @Test("a file replaced while its upload waits for a connection fails it unsent, naming the file")
    func replacedWhileQueued() async throws {
        let files = try Files()
        let (url, _) = try files.make("replaced.bin", size: 1000)
        let (other, _) = try files.make("other.bin", size: 1000)
        let server = try await TestServer.shared()
        let session = makeSession(server) { $0.connectionsPerHost = 1 }
        let path = "echo/replaced-\(UUID().uuidString)"
        // The one connection is busy for 3 s.
        let busy = Task { try await session.send(Request("delay/3000", method: .post, body: .file(other))) }
        let started = ContinuousClock.now + .seconds(20)
        while server.stats.hits("/delay/3000") == 0, ContinuousClock.now < started {
            try await Task.sleep(for: .milliseconds(10))
        }
        let queued = Task { try await session.send(Request(path, method: .post, body: .file(url))) }
        try await Task.sleep(for: .milliseconds(500))
        // Another file in its place (same size): its bytes are not the ones whose size was taken.
        #expect(rename(other.path, url.path) == 0)
        await expectWattleError({ _ = try await queued.value }) {
            guard case .fileError(let failed, let reason) = $0 else { return false }
            return failed == url.path && reason == "the body file was replaced by another after its size was taken"
        }
        #expect(server.stats.hits("/" + path) == 0)
        _ = try await busy.value
    }
}
