import Crypto
import Foundation
import Synchronization
import TestProxies
import Testing
import Wattle
import WattleDemoServer
import WattleTesting

/// `MultipartPart.file(_:contentsOf:)`: multipart parts streamed from disk. What the server
/// receives is checked against the same form built in memory (`MultipartPart.file(…, data:)`)
/// with the same boundary, by the SHA-256 the server computes (`/digest`), and part by part.
@Suite("Multipart parts streamed from files arrive whole, on every attempt; a bad file fails unsent")
struct MultipartFileTests {
    typealias Files = FileBodyTests.Files
    typealias Digest = FileBodyTests.Digest

    /// The form with both files streamed, and the same form held in memory.
    static func forms(_ first: URL, _ second: URL, boundary: String) throws -> (
        streamed: RequestBody, inMemory: RequestBody
    ) {
        let streamed = RequestBody.multipart(
            [
                .field("title", "Holiday"),
                .file("photo", contentsOf: first, contentType: "image/jpeg"),
                .field("caption", "Koalas, \"up close\""),
                .file("video", contentsOf: second, filename: "clip.mp4", contentType: "video/mp4"),
            ], boundary: boundary)
        let inMemory = RequestBody.multipart(
            [
                .field("title", "Holiday"),
                .file(
                    "photo", filename: first.lastPathComponent, contentType: "image/jpeg",
                    data: try Data(contentsOf: first)),
                .field("caption", "Koalas, \"up close\""),
                .file("video", filename: "clip.mp4", contentType: "video/mp4", data: try Data(contentsOf: second)),
            ], boundary: boundary)
        return (streamed, inMemory)
    }

    @Test(
        "files from empty to 2 MB among fields, over HTTP/1.1 and HTTP/2 over TLS: the bytes of the same form built in memory"
    )
    func arrivesWhole() async throws {
        let files = try Files()
        let plain = makeSession(try await TestServer.shared())
        let h2Server = try await DemoServer.start(tls: try TLSServers.identity.get(), http2: true)
        let h2 = tlsSession {
            $0.baseURL = h2Server.baseURL
            $0.trust.selfSignedHosts = ["127.0.0.1"]
        }
        let small = try files.make("koala.jpg", size: 3)
        for size in [0, 1, 65_537, 2 * 1024 * 1024] {
            let (url, _) = try files.make("part-\(size).bin", size: size)
            let (streamed, inMemory) = try Self.forms(small.url, url, boundary: "b-\(size)")
            #expect(streamed.data.isEmpty && streamed.segments.count == 5)
            #expect(inMemory.segments.isEmpty)
            let expected = FileBodyTests.hex(SHA256.hash(data: inMemory.data))
            for (session, method) in [(plain, HTTPMethod.post), (plain, .put), (h2, .post), (h2, .patch)] {
                let response = try await session.send(Request("digest", method: method, body: streamed))
                let digest = try response.decode(Digest.self)
                #expect(digest.method == method.rawValue)
                #expect(digest.length == inMemory.data.count, "\(method) with a \(size)-byte file")
                #expect(digest.sha256 == expected, "\(method) with a \(size)-byte file")
                #expect(digest.contentType == "multipart/form-data; boundary=b-\(size)")
            }
        }
        try await h2Server.stop()
    }

    @Test("each part as the server reads it: its headers, the file name from the URL unless given, and its exact bytes")
    func partByPart() async throws {
        let files = try Files()
        let first = try files.make("koala.jpg", size: 1000)
        let second = try files.make("movie.bin", size: 70_000)
        let (streamed, _) = try Self.forms(first.url, second.url, boundary: "XyZ")
        let echo = try await makeSession(try await TestServer.shared()).send(
            Request("echo", method: .post, body: streamed)
        )
        .decode(Echo.self)
        let received = try #require(Data(base64Encoded: echo.bodyBase64))
        #expect(echo.header("Content-Length") == String(received.count))
        let parts = MultipartForm.parts(of: received, boundary: "XyZ")
        #expect(
            parts.map { $0.head } == [
                #"Content-Disposition: form-data; name="title""#,
                "Content-Disposition: form-data; name=\"photo\"; filename=\"koala.jpg\"\r\nContent-Type: image/jpeg",
                #"Content-Disposition: form-data; name="caption""#,
                "Content-Disposition: form-data; name=\"video\"; filename=\"clip.mp4\"\r\nContent-Type: video/mp4",
            ])
        #expect(parts.count == 4)
        guard parts.count == 4 else { return }
        #expect(parts[0].body == Data("Holiday".utf8))
        #expect(FileBodyTests.hex(SHA256.hash(data: parts[1].body)) == first.sha256)
        #expect(parts[2].body == Data("Koalas, \"up close\"".utf8))
        #expect(FileBodyTests.hex(SHA256.hash(data: parts[3].body)) == second.sha256)
        #expect(received.suffix(9) == Data("--XyZ--\r\n".utf8))
    }

    @Test("sent again from the start: after a 307 redirect and on a retry; a 303 drops it")
    func resentOnEveryAttempt() async throws {
        let files = try Files()
        let server = try await TestServer.shared()
        let first = try files.make("a.bin", size: 150_000)
        let second = try files.make("b.bin", size: 150_000)
        let (streamed, inMemory) = try Self.forms(first.url, second.url, boundary: "resent")
        let expected = FileBodyTests.hex(SHA256.hash(data: inMemory.data))
        let session = makeSession(server) { $0.retry = RetryPolicy(baseDelay: .milliseconds(10)) }

        let redirected = try await session.send(Request("redirect/307?to=/digest", method: .post, body: streamed))
        #expect(redirected.url.path == "/digest")
        let digest = try redirected.decode(Digest.self)
        #expect(digest.method == "POST" && digest.length == inMemory.data.count && digest.sha256 == expected)

        let seeOther = try await session.send(Request("redirect/303?to=/digest", method: .post, body: streamed))
        let dropped = try seeOther.decode(Digest.self)
        #expect(dropped.method == "GET" && dropped.length == 0 && dropped.contentType == "")

        struct Attempt: Decodable {
            var attempt: Int
            var bodyLength: Int
            var sha256: String
        }
        let retried = try await session.send(
            Request("flaky/multipart-\(UUID().uuidString)?failures=2&status=503", method: .put, body: streamed))
        let attempt = try retried.decode(Attempt.self)
        #expect(attempt.attempt == 3, "two 503s, then the third attempt")
        #expect(attempt.bodyLength == inMemory.data.count && attempt.sha256 == expected)
    }

    @Test(
        "libcurl's own retry on a new connection rewinds every piece: 10 uploads to a server that closes each reused connection"
    )
    func rewoundByLibcurl() async throws {
        let files = try Files()
        let first = try files.make("a.bin", size: 100_000)
        let second = try files.make("b.bin", size: 100_000)
        let (streamed, inMemory) = try Self.forms(first.url, second.url, boundary: "rewound")
        let expected = FileBodyTests.hex(SHA256.hash(data: inMemory.data))
        let server = try await DemoServer.start(closeUnansweredAfter: 1)
        let session = makeSession(server)
        for _ in 0..<10 {
            let digest = try await session.send(Request("digest", method: .post, body: streamed)).decode(Digest.self)
            #expect(digest.length == inMemory.data.count && digest.sha256 == expected)
        }
        #expect(server.stats.connectionCount == 10)
        try await server.stop()
    }

    @Test("upload progress counts the whole form, headers and files, up to its size")
    func uploadProgress() async throws {
        let files = try Files()
        let first = try files.make("a.bin", size: 1024 * 1024)
        let second = try files.make("b.bin", size: 2 * 1024 * 1024)
        let (streamed, inMemory) = try Self.forms(first.url, second.url, boundary: "progress")
        let total = Int64(inMemory.data.count)
        let reports = Mutex<[UploadProgress]>([])
        var request = Request("digest", method: .post, body: streamed)
        request.uploadProgress = { progress in reports.withLock { $0.append(progress) } }
        let digest = try await makeSession(try await TestServer.shared()).send(request).decode(Digest.self)
        #expect(Int64(digest.length) == total)
        let seen = reports.withLock { $0 }
        #expect(seen.count >= 2, "\(seen.count) reports")
        #expect(seen.allSatisfy { $0.totalBytes == total && $0.sentBytes <= total })
        #expect(seen.last == UploadProgress(sentBytes: total, totalBytes: total))
    }

    @Test("a missing file, a folder or a non-file URL in any part fails at once, before anything is sent")
    func unusableFiles() async throws {
        let files = try Files()
        let silent = try SilentServer()
        defer { withExtendedLifetime(silent) {} }  // its socket closes when it is released
        let session = makeSession(try await TestServer.shared()) {
            $0.baseURL = URL(string: "http://127.0.0.1:\(silent.port)/")
            $0.timeouts.total = .seconds(20)
        }
        let good = try files.make("good.bin", size: 10)
        let missing = files.folder.appendingPathComponent("missing.bin")
        let form = RequestBody.multipart([
            .file("a", contentsOf: good.url), .field("b", "x"), .file("c", contentsOf: missing),
        ])
        await expectWattleError({ _ = try await session.send(Request("up", method: .post, body: form)) }) {
            guard case .fileError(let path, let reason) = $0 else { return false }
            return path == missing.path && reason == "cannot open the body file: No such file or directory"
        }
        let folder = RequestBody.multipart([.file("a", contentsOf: files.folder)])
        await expectWattleError({ _ = try await session.send(Request("up", method: .put, body: folder)) }) {
            guard case .fileError(let path, let reason) = $0 else { return false }
            return path == files.folder.path && reason == "the body file is not a regular file"
        }
        let remote = RequestBody.multipart([
            .field("a", "x"), .file("photo", contentsOf: URL(string: "https://example.test/a.jpg?sig=s3cr3t")!),
        ])
        await expectWattleError({ _ = try await session.send(Request("up", method: .post, body: remote)) }) {
            guard case .invalidRequest(let reason) = $0 else { return false }
            return reason.contains("\"photo\" must be a file URL") && !reason.contains("s3cr3t")
        }
        await expectWattleError({ _ = try await session.send(Request("up", method: .head, body: form)) }) {
            guard case .invalidRequest(let reason) = $0 else { return false }
            return reason == "a HEAD request has no body"
        }
    }

    @Test("a file that shrinks while it is sent fails the request with fileError naming that file")
    func shrinkingFile() async throws {
        let files = try Files()
        let first = try files.make("first.bin", size: 1000)
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
        let form = RequestBody.multipart([.file("first", contentsOf: first.url), .file("second", contentsOf: url)])
        let upload = Task {
            try await session.send(Request("http://127.0.0.1:\(server.port)/up", method: .post, body: form))
        }
        try await server.waitForFirstBytes()
        try FileHandle(forWritingTo: url).truncate(atOffset: 1024 * 1024)
        server.drain()
        await expectWattleError({ _ = try await upload.value }) {
            guard case .fileError(let path, let reason) = $0 else { return false }
            return path == url.path && reason.contains("the body file ended at")
                && reason.hasSuffix("of the 33554432 it had when the request started")
        }
    }

    @Test("a boundary given is checked against in-memory parts, never replaced; files are not read for it")
    func boundaryChoice() throws {
        let files = try Files()
        let file = try files.make("a.bin", size: 10)
        let bare = RequestBody.multipart([.field("a", "has XyZ"), .file("f", contentsOf: file.url)], boundary: "XyZ")
        #expect(bare.contentType == "multipart/form-data; boundary=XyZ")
        #expect(bare.segments.count == 3)
        let clash = RequestBody.multipart(
            [.field("a", "has --XyZ"), .file("f", contentsOf: file.url)], boundary: "XyZ")
        #expect(clash.segments.isEmpty && clash.contentType == "multipart/form-data")
        let missing = files.folder.appendingPathComponent("not-yet.bin")
        let kept = RequestBody.multipart([.file("f", contentsOf: missing)], boundary: "XyZ")
        #expect(kept.contentType == "multipart/form-data; boundary=XyZ")
        #expect(
            kept.segments == [
                .data(
                    Data(
                        "--XyZ\r\nContent-Disposition: form-data; name=\"f\"; filename=\"not-yet.bin\"\r\nContent-Type: application/octet-stream\r\n\r\n"
                            .utf8)),
                .file(missing),
                .data(Data("\r\n--XyZ--\r\n".utf8)),
            ])
    }

    @Test("the stream libcurl reads: any piece sizes, across data and files, and from any point it is moved back to")
    func streamPieces() throws {
        let files = try Files()
        let first = try files.make("a.bin", size: 1000)
        let empty = try files.make("empty.bin", size: 0)
        let (streamed, inMemory) = try Self.forms(first.url, empty.url, boundary: "pieces")
        let expected = inMemory.data
        let stream = try UploadStream.opening(streamed.segments)
        #expect(stream.size == Int64(expected.count))
        for (pieceSize, start) in [
            (7, 0), (1, 0), (4096, 0), (13, 1), (64, 150), (5, expected.count - 3), (9, expected.count),
        ] {
            #expect(stream.seek(to: Int64(start)))
            var read = Data()
            var buffer = [UInt8](repeating: 0, count: pieceSize)
            while true {
                let count = try buffer.withUnsafeMutableBytes { try stream.read(into: $0) }
                if count == 0 { break }
                #expect(count <= pieceSize)
                read.append(contentsOf: buffer[..<count])
            }
            #expect(read == expected[(expected.startIndex + start)...], "pieces of \(pieceSize) from \(start)")
        }
        #expect(!stream.seek(to: Int64(expected.count + 1)) && !stream.seek(to: -1))
    }

    @Test("through StubTransport: sentBody() reads the form as it would be sent; an unreadable file fails unsent")
    func stubbed() async throws {
        let files = try Files()
        let first = try files.make("a.bin", size: 5000)
        let second = try files.make("b.bin", size: 0)
        let (streamed, inMemory) = try Self.forms(first.url, second.url, boundary: "stub")
        let stub = StubTransport()
        let seen = Mutex<Data?>(nil)
        stub.on(.post, "/photos") { request throws(WattleError) in
            let body = try request.sentBody()
            seen.withLock { $0 = body }
            return Response(statusCode: 201, url: request.url)
        }
        let session = Session(
            configuration: Configuration { $0.baseURL = URL(string: "https://api.test/") }, transport: stub)
        let told = Mutex<[UploadProgress]>([])
        var request = Request("photos", method: .post, body: streamed)
        request.uploadProgress = { progress in told.withLock { $0.append(progress) } }
        #expect(try await session.send(request).statusCode == 201)
        #expect(seen.withLock { $0 } == inMemory.data)
        let total = Int64(inMemory.data.count)
        #expect(told.withLock { $0 } == [UploadProgress(sentBytes: total, totalBytes: total)])
        #expect(stub.requests.first?.bodySegments == streamed.segments && stub.requests.first?.body == nil)

        let missing = RequestBody.multipart([.file("a", contentsOf: files.folder.appendingPathComponent("gone.bin"))])
        await expectWattleError({ _ = try await session.send(Request("photos", method: .post, body: missing)) }) {
            guard case .fileError(_, let reason) = $0 else { return false }
            return reason == "cannot open the body file: No such file or directory"
        }
        #expect(stub.requests.count == 2 && seen.withLock { $0 } == inMemory.data)
    }
}
