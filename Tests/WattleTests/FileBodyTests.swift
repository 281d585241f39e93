import Crypto
import Foundation
import Synchronization
import TestProxies
import Testing
import Wattle
import WattleDemoServer
import WattleTesting

#if canImport(Glibc)
import Glibc
#endif

/// `RequestBody.file`: a body streamed from disk, checked by the SHA-256 the server computes
/// of what it received (`/digest`).
@Suite("A body streamed from a file arrives whole, on every attempt; a bad file fails unsent")
struct FileBodyTests {
    struct Digest: Decodable {
        var method: String
        var length: Int
        var sha256: String
        var contentType: String
    }

    /// A folder with files of pseudo-random bytes, and their SHA-256.
    final class Files: @unchecked Sendable {
        let folder: URL
        init() throws { folder = try temporaryFolder() }
        deinit { try? FileManager.default.removeItem(at: folder) }

        /// Written and hashed 64 KB at a time: other tests in this process measure its memory.
        func make(_ name: String, size: Int) throws -> (url: URL, sha256: String) {
            let url = folder.appendingPathComponent(name)
            _ = FileManager.default.createFile(atPath: url.path, contents: nil)
            let handle = try FileHandle(forWritingTo: url)
            defer { try? handle.close() }
            var hasher = SHA256()
            // Read from /dev/urandom a chunk at a time: SystemRandomNumberGenerator makes a
            // getrandom(2) call per 8 bytes (1.5 million for the ~12 MB these tests write).
            let random = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/dev/urandom"))
            defer { try? random.close() }
            var written = 0
            while written < size {
                let count = min(65_536, size - written)
                guard let chunk = try random.read(upToCount: count), chunk.count == count else {
                    throw POSIXError(.EIO)
                }
                hasher.update(data: chunk)
                try handle.write(contentsOf: chunk)
                written += chunk.count
            }
            return (url, FileBodyTests.hex(hasher.finalize()))
        }
    }

    static func hex(_ digest: SHA256.Digest) -> String {
        digest.map { byte in
            let digits = String(byte, radix: 16)
            return digits.count == 1 ? "0" + digits : digits
        }.joined()
    }

    @Test(
        "sizes from empty to 2 MB, POST, PUT and PATCH, over HTTP/1.1 and HTTP/2 over TLS: the server gets the file's bytes"
    )
    func arrivesWhole() async throws {
        let files = try Files()
        let plain = makeSession(try await TestServer.shared())
        let h2Server = try await DemoServer.start(tls: try TLSServers.identity.get(), http2: true)
        let h2 = tlsSession {
            $0.baseURL = h2Server.baseURL
            $0.trust.selfSignedHosts = ["127.0.0.1"]
        }
        for size in [0, 1, 65_537, 2 * 1024 * 1024] {
            let (url, sha256) = try files.make("body-\(size).bin", size: size)
            for (session, method) in [(plain, HTTPMethod.post), (plain, .put), (h2, .post), (h2, .patch)] {
                let response = try await session.send(
                    Request("digest", method: method, body: .file(url, contentType: "video/mp4")))
                let digest = try response.decode(Digest.self)
                #expect(digest.method == method.rawValue)
                #expect(digest.length == size, "\(method) of \(size) bytes")
                #expect(digest.sha256 == sha256, "\(method) of \(size) bytes")
                #expect(digest.contentType == "video/mp4")
                #expect(response.metrics.bytesSent >= Int64(size))
                #expect(response.metrics.httpVersion == (session === h2 ? "2" : "1.1"))
            }
        }
    }

    @Test("sent again from the start: after a 307 redirect, on a retry and after a token refresh; a 303 drops it")
    func resentOnEveryAttempt() async throws {
        let files = try Files()
        let server = try await TestServer.shared()
        let (url, sha256) = try files.make("resent.bin", size: 300_000)
        let session = makeSession(server) { $0.retry = RetryPolicy(baseDelay: .milliseconds(10)) }

        let redirected = try await session.send(Request("redirect/307?to=/digest", method: .post, body: .file(url)))
        #expect(redirected.url.path == "/digest")
        let digest = try redirected.decode(Digest.self)
        #expect(digest.method == "POST" && digest.length == 300_000 && digest.sha256 == sha256)

        let seeOther = try await session.send(Request("redirect/303?to=/digest", method: .post, body: .file(url)))
        let dropped = try seeOther.decode(Digest.self)
        #expect(dropped.method == "GET" && dropped.length == 0)

        struct Attempt: Decodable {
            var attempt: Int
            var bodyLength: Int
            var sha256: String
        }
        let retried = try await session.send(
            Request("flaky/file-\(UUID().uuidString)?failures=2&status=503", method: .put, body: .file(url)))
        let attempt = try retried.decode(Attempt.self)
        #expect(attempt.attempt == 3, "two 503s, then the third attempt")
        #expect(attempt.bodyLength == 300_000 && attempt.sha256 == sha256)

        // A 401, a token refresh, the request again with the new token: the whole file again.
        let refreshes = Mutex(0)
        let authenticated = makeSession(server) {
            $0.authenticator = Authenticator(
                store: InMemoryTokenStore(AuthToken(accessToken: "old-token-aaaa", refreshToken: "r"))
            ) {
                _, _ in
                refreshes.withLock { $0 += 1 }
                return AuthToken(accessToken: "new-token-bbbb", refreshToken: "r2")
            }
        }
        let afterRefresh = try await authenticated.send(
            Request("flaky/file-\(UUID().uuidString)?failures=1&status=401", method: .post, body: .file(url)))
        let refreshed = try afterRefresh.decode(Attempt.self)
        #expect(refreshes.withLock { $0 } == 1)
        #expect(refreshed.attempt == 2 && refreshed.bodyLength == 300_000 && refreshed.sha256 == sha256)
    }

    @Test(
        "a body from a file is not cut off by the configured total timeout, as a download is not; one from memory is, and a request's own timeout bounds either"
    )
    func fileBodyIgnoresTheTotalTimeout() async throws {
        let server = try await TestServer.shared()
        let files = try Files()
        let file = try files.make("slow.bin", size: 100_000)
        let session = makeSession(server) { $0.timeouts.total = .milliseconds(300) }
        // The server answers 1 s after the body arrived: three times the total timeout.
        let put = try await session.send(Request("delay/1000", method: .put, body: .file(file.url)))
        #expect(put.statusCode == 200)
        let multipart = RequestBody.multipart([.field("a", "b"), .file("f", contentsOf: file.url)])
        #expect(try await session.send(Request("delay/1000", method: .post, body: multipart)).statusCode == 200)
        await expectWattleError({
            _ = try await session.send(Request("delay/1000", method: .put, body: .data(Data(count: 100_000))))
        }) { if case .timedOut(.total, _, _) = $0 { true } else { false } }
        await expectWattleError({
            _ = try await session.send(
                Request("delay/1000", method: .put, body: .file(file.url), timeout: .milliseconds(300)))
        }) { if case .timedOut(.total, _, _) = $0 { true } else { false } }
    }

    @Test("upload progress climbs to the whole body, for a file and for data, and goes no further")
    func uploadProgress() async throws {
        let server = try await TestServer.shared()
        let session = makeSession(server)
        let files = try Files()
        let size = 3 * 1024 * 1024
        let file = try files.make("progress.bin", size: size)
        let data = try Data(contentsOf: file.url)
        for body in [RequestBody.file(file.url), RequestBody(data: data, contentType: "application/octet-stream")] {
            let reports = Mutex<[UploadProgress]>([])
            var request = Request("digest", method: .post, body: body)
            request.uploadProgress = { progress in reports.withLock { $0.append(progress) } }
            let digest = try await session.send(request).decode(Digest.self)
            #expect(digest.length == size && digest.sha256 == file.sha256)
            let seen = reports.withLock { $0 }
            #expect(seen.count >= 2, "\(seen.count) reports")
            #expect(seen.allSatisfy { $0.totalBytes == Int64(size) })
            // Climbing, except that libcurl may send the body again on a new connection (from 0).
            let lastRestart = seen.indices.dropFirst().last { seen[$0].sentBytes < seen[$0 - 1].sentBytes } ?? 0
            #expect(
                zip(seen[lastRestart...], seen[lastRestart...].dropFirst()).allSatisfy { $0.sentBytes < $1.sentBytes })
            #expect(seen.allSatisfy { $0.sentBytes <= Int64(size) })
            #expect(seen.last?.sentBytes == Int64(size) && seen.last?.fractionCompleted == 1)
        }
        // Through StubTransport: the whole body, told once.
        let stub = StubTransport()
        stub.on(.post, "/up", status: 201)
        let stubbed = Session(
            configuration: Configuration { $0.baseURL = URL(string: "https://api.test/") }, transport: stub)
        let told = Mutex<[UploadProgress]>([])
        var request = Request("up", method: .post, body: .file(file.url))
        request.uploadProgress = { progress in told.withLock { $0.append(progress) } }
        #expect(try await stubbed.send(request).statusCode == 201)
        #expect(told.withLock { $0 } == [UploadProgress(sentBytes: Int64(size), totalBytes: Int64(size))])
    }

    @Test("16 concurrent uploads of one file, multiplexed over HTTP/2 and pooled over HTTP/1.1, all arrive intact")
    func concurrent() async throws {
        let files = try Files()
        let (url, sha256) = try files.make("shared.bin", size: 256 * 1024)
        let server = try await DemoServer.start(tls: try TLSServers.identity.get(), http2: true)
        let h2 = tlsSession {
            $0.baseURL = server.baseURL
            $0.trust.selfSignedHosts = ["127.0.0.1"]
        }
        let pooled = makeSession(try await TestServer.shared()) { $0.connectionsPerHost = 8 }
        for session in [h2, pooled] {
            let digests = try await withThrowingTaskGroup(of: Digest.self) { group in
                for _ in 0..<16 {
                    group.addTask {
                        try await session.send(Request("digest", method: .put, body: .file(url))).decode(Digest.self)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(digests.count == 16)
            #expect(digests.allSatisfy { $0.length == 256 * 1024 && $0.sha256 == sha256 })
        }
    }

    @Test("a missing file, a folder or a non-file URL fails at once, before anything is sent")
    func unusableFiles() async throws {
        let files = try Files()
        // A server that never answers: a request that went out would wait for the timeout.
        let silent = try SilentServer()
        defer { withExtendedLifetime(silent) {} }  // its socket closes when it is released
        let session = makeSession(try await TestServer.shared()) {
            $0.baseURL = URL(string: "http://127.0.0.1:\(silent.port)/")
            $0.timeouts.total = .seconds(20)
        }
        let missing = files.folder.appendingPathComponent("missing.bin")
        await expectWattleError({ _ = try await session.send(Request("up", method: .post, body: .file(missing))) }) {
            guard case .fileError(let path, let reason) = $0 else { return false }
            return path == missing.path && reason == "cannot open the body file: No such file or directory"
        }
        await expectWattleError({ _ = try await session.send(Request("up", method: .put, body: .file(files.folder))) })
        {
            guard case .fileError(let path, let reason) = $0 else { return false }
            return path == files.folder.path && reason == "the body file is not a regular file"
        }
        await expectWattleError({
            _ = try await session.send(
                Request("up", method: .post, body: .file(URL(string: "https://example.test/a.bin")!)))
        }) {
            guard case .invalidRequest(let reason) = $0 else { return false }
            return reason.contains("must be a file URL")
        }
        // A FIFO with no writer: refused at once, not waited on (which would hold the session's
        // network thread).
        let fifo = files.folder.appendingPathComponent("fifo")
        #expect(mkfifo(fifo.path, 0o600) == 0)
        await expectWattleError({ _ = try await session.send(Request("up", method: .post, body: .file(fifo))) }) {
            guard case .fileError(let path, let reason) = $0 else { return false }
            return path == fifo.path && reason == "the body file is not a regular file"
        }
        let (url, _) = try files.make("head.bin", size: 10)
        await expectWattleError({ _ = try await session.send(Request("up", method: .head, body: .file(url))) }) {
            guard case .invalidRequest(let reason) = $0 else { return false }
            return reason == "a HEAD request has no body"
        }
    }

    @Test(
        "libcurl's own retry on a new connection rewinds the file: 10 uploads to a server that closes each reused connection"
    )
    func rewoundByLibcurl() async throws {
        let files = try Files()
        let (url, sha256) = try files.make("rewound.bin", size: 200_000)
        let server = try await DemoServer.start(closeUnansweredAfter: 1)
        let session = makeSession(server)
        for _ in 0..<10 {
            let digest = try await session.send(Request("digest", method: .post, body: .file(url))).decode(Digest.self)
            #expect(digest.length == 200_000 && digest.sha256 == sha256)
        }
        // Each connection answered one request: every later upload met a closing connection
        // and was sent again, from the file's start, on a new one.
        #expect(server.stats.connectionCount == 10)
        try await server.stop()
    }

    @Test(
        "the handle that sent a file sends the next requests as asked: GET, HEAD, POST with and without a body, PUT, DELETE"
    )
    func handleReusedAfterFile() async throws {
        let files = try Files()
        let (url, _) = try files.make("first.bin", size: 100_000)
        let session = makeSession(try await TestServer.shared())
        for _ in 0..<2 {
            _ = try await session.send(Request("digest", method: .put, body: .file(url)))
            let get = try await session.send(Request("echo")).decode(Echo.self)
            #expect(get.method == "GET" && get.bodyLength == 0 && get.header("Content-Length") == nil)
            _ = try await session.send(Request("digest", method: .post, body: .file(url)))
            let head = try await session.send(Request("echo", method: .head))
            #expect(head.statusCode == 200 && head.data.isEmpty)
            _ = try await session.send(Request("digest", method: .post, body: .file(url)))
            let posted = try await session.send(Request("echo", method: .post, body: .text("small"))).decode(Echo.self)
            #expect(posted.method == "POST" && posted.body == "small" && posted.header("Content-Length") == "5")
            _ = try await session.send(Request("digest", method: .patch, body: .file(url)))
            let empty = try await session.send(Request("echo", method: .post)).decode(Echo.self)
            #expect(empty.method == "POST" && empty.bodyLength == 0 && empty.header("Content-Length") == "0")
            _ = try await session.send(Request("digest", method: .put, body: .file(url)))
            let put = try await session.send(Request("echo", method: .put)).decode(Echo.self)
            #expect(put.method == "PUT" && put.bodyLength == 0)
            let delete = try await session.send(Request("echo", method: .delete)).decode(Echo.self)
            #expect(delete.method == "DELETE" && delete.bodyLength == 0)
        }
    }

    @Test("a file that shrinks while it is sent fails the request with fileError, saying where it ended")
    func shrinkingFile() async throws {
        let files = try Files()
        // Sparse: what it holds does not matter, only that it is far larger than socket buffers.
        let url = files.folder.appendingPathComponent("shrinks.bin")
        _ = FileManager.default.createFile(atPath: url.path, contents: nil)
        try FileHandle(forWritingTo: url).truncate(atOffset: 32 * 1024 * 1024)
        let server = try PausedReader()
        var configuration = testConfiguration()
        // Long, and no stall timeout, for the wait on a pool thread before the shrink (the server
        // reads nothing meanwhile); a shrink that goes unseen ends in the total timeout instead.
        configuration.timeouts.total = .seconds(120)
        configuration.timeouts.stall = nil
        let session = Session(configuration: configuration)
        let upload = Task {
            try await session.send(Request("http://127.0.0.1:\(server.port)/up", method: .post, body: .file(url)))
        }
        // The request has started: its head and the body's first bytes have arrived, and the
        // rest waits in socket buffers (a few MB at most) while the server pauses.
        try await server.waitForFirstBytes()
        try FileHandle(forWritingTo: url).truncate(atOffset: 1024 * 1024)
        server.drain()
        await expectWattleError({ _ = try await upload.value }) {
            guard case .fileError(let path, let reason) = $0 else { return false }
            return path == url.path && reason.contains("the body file ended at")
                && reason.hasSuffix("of the 33554432 it had when the request started")
        }
    }
}

/// A TCP server for one connection that reads the first 64 KB, then pauses until `drain()`,
/// then reads and discards everything, never answering.
final class PausedReader: @unchecked Sendable {
    let port: Int
    private let listener: Int32
    private final class Flag: Sendable {
        let value = Mutex(false)
    }
    private let firstBytes = Flag()
    private let resume = DispatchSemaphore(value: 0)

    init() throws {
        let server = try SilentServer()
        port = server.port
        listener = server.takeDescriptor()
        let listener = listener
        let firstBytes = firstBytes
        let resume = resume
        Thread {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { return }
            defer { close(connection) }
            var buffer = [UInt8](repeating: 0, count: 65_536)
            var received = 0
            while received < 65_536 {
                let count = read(connection, &buffer, 65_536 - received)
                if count <= 0 { break }
                received += count
            }
            firstBytes.value.withLock { $0 = true }
            resume.wait()
            while read(connection, &buffer, buffer.count) > 0 {}
        }.start()
    }

    deinit {
        // Wakes the thread if the test ended before `drain()` (it then reads until curl hangs up).
        resume.signal()
        close(listener)
    }

    /// Waits (without blocking a thread of the cooperative pool) until the first 64 KB arrived.
    func waitForFirstBytes() async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while !firstBytes.value.withLock({ $0 }) {
            guard ContinuousClock.now < deadline else { throw POSIXError(.ETIMEDOUT) }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    func drain() { resume.signal() }
}
