import Foundation
import Testing
import WattleDemoServer

@testable import Wattle

#if canImport(Glibc)
import Glibc
#endif
#if canImport(CoreFoundation)
import CoreFoundation  // where `struct stat` is visible from, under MemberImportVisibility
#endif

@Suite("Downloads stream to a file with constant memory and never leave a partial file")
struct DownloadTests {
    @Test("an encoded body's progress has no total (its length counts encoded bytes), so never a fraction over 1")
    func encodedProgress() async throws {
        let server = try await TestServer.shared()
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appendingPathComponent("body.json")
        let reports = ProgressLog()
        _ = try await makeSession(server).download("gzip", to: destination) { reports.record($0) }
        let text = try String(contentsOf: destination, encoding: .utf8)
        #expect(text.contains("hello from gzip"))
        #expect(reports.count >= 1)
        #expect(reports.all.allSatisfy { $0.expectedBytes == nil && $0.fractionCompleted == nil })
        #expect(reports.last?.receivedBytes == Int64(text.utf8.count))
        // A total that is too small is clamped, never over 1.
        #expect(DownloadProgress(receivedBytes: 150, expectedBytes: 100).fractionCompleted == 1)
    }

    @Test("the completion form of download delivers the file's response, or one whose error is set")
    func downloadCompletion() async throws {
        let server = try await TestServer.shared()
        let session = makeSession(server)
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appendingPathComponent("body.bin")
        let done = await withCheckedContinuation { continuation in
            session.download(Request("bytes/5000"), to: destination, completion: { continuation.resume(returning: $0) })
        }
        #expect(done.error == nil && done.fileURL == destination)
        #expect(try Data(contentsOf: destination).count == 5000)
        let missing = folder.appendingPathComponent("missing.bin")
        let failed = await withCheckedContinuation { continuation in
            session.download(Request("status/404"), to: missing, completion: { continuation.resume(returning: $0) })
        }
        #expect(failed.statusCode == 404 && failed.error?.response?.statusCode == 404)
        #expect(!FileManager.default.fileExists(atPath: missing.path))
        // The endpoint form takes headers, as every other shortcut does.
        let echoed = folder.appendingPathComponent("echo.json")
        _ = try await session.download("echo", headers: ["X-Trace": "t-1"], to: echoed)
        #expect(try String(contentsOf: echoed, encoding: .utf8).contains("t-1"))
    }

    @Test(
        "a destination name of up to 255 bytes downloads, resumable or not: the hidden files beside it are cut to fit",
        arguments: [String(repeating: "d", count: 251) + ".bin", String(repeating: "é", count: 125) + ".bin"])
    func longDestinationName(name: String) async throws {
        let server = try await TestServer.shared()
        let session = makeSession(server)
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appendingPathComponent(name)
        for resumable in [false, true] {
            let response = try await session.download(
                resumable ? "resource/5000" : "bytes/5000", to: destination, resumable: resumable)
            #expect(response.fileURL == destination)
            #expect(try Data(contentsOf: destination).count == 5000, "resumable: \(resumable)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == [name])
        }
        // The names are at most 255 bytes, the same on every run, and apart for names alike.
        let partial = DownloadFileNames.hidden(for: destination, suffix: ".wattle-partial-state")
        #expect(partial.lastPathComponent.utf8.count <= 255)
        #expect(partial == DownloadFileNames.hidden(for: destination, suffix: ".wattle-partial-state"))
        let alike = folder.appendingPathComponent(name.replacingOccurrences(of: ".bin", with: ".iso"))
        #expect(partial != DownloadFileNames.hidden(for: alike, suffix: ".wattle-partial-state"))
        let short = folder.appendingPathComponent("body.bin")
        #expect(
            DownloadFileNames.hidden(for: short, suffix: ".wattle-partial").lastPathComponent
                == ".body.bin.wattle-partial")
    }

    @Test(
        "the first download into a folder removes the temporaries killed downloads left there: unlocked and unwritten for a minute, nothing else"
    )
    func staleTemporariesSwept() async throws {
        let session = makeSession(try await TestServer.shared())
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        func make(_ name: String, minutesOld: Int) throws -> String {
            let path = folder.appendingPathComponent(name).path
            try Data("bytes".utf8).write(to: URL(fileURLWithPath: path))
            let then = time(nil) - 60 * minutesOld
            var times = [timeval(tv_sec: then, tv_usec: 0), timeval(tv_sec: then, tv_usec: 0)]
            #expect(utimes(path, &times) == 0)
            return path
        }
        _ = try make(".a.bin.wattle-0123ABCD.part", minutesOld: 2)  // left by a killed download
        _ = try make(".b.bin.wattle-89ABCDEF.part", minutesOld: 0)  // just created, not locked yet
        let running = try make(".c.bin.wattle-00FF00FF.part", minutesOld: 2)  // a stalled download's, locked
        _ = try make(".d.bin.wattle-partial", minutesOld: 2)  // a resumable download's, kept on purpose
        _ = try make(".e.bin.wattle-0123ABCZ.part", minutesOld: 2)  // not a name Wattle makes
        _ = try make("f.wattle-0123ABCD.part", minutesOld: 2)  // not hidden: not Wattle's
        let holder = open(running, O_RDONLY | O_CLOEXEC)
        defer { close(holder) }
        #expect(flock(holder, LOCK_EX | LOCK_NB) == 0)

        _ = try await session.download("bytes/100", to: folder.appendingPathComponent("out.bin"))
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == [
                ".b.bin.wattle-89ABCDEF.part", ".c.bin.wattle-00FF00FF.part", ".d.bin.wattle-partial",
                ".e.bin.wattle-0123ABCZ.part", "f.wattle-0123ABCD.part", "out.bin",
            ])
        #expect(DownloadTemporary.isTemporaryName(".x.wattle-0123ABCD.part"))
        #expect(!DownloadTemporary.isTemporaryName(".wattle-0123ABCD.part"))
        #expect(!DownloadTemporary.isTemporaryName(".x.wattle-0123abcd.part"))
    }

    @Test(
        "a download to a symbolic link replaces the file it names and keeps the link; a pipe, a folder, a link to nothing are refused untouched"
    )
    func linksAndSpecialFiles() async throws {
        let session = makeSession(try await TestServer.shared())
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let target = folder.appendingPathComponent("real.bin")
        try Data("old".utf8).write(to: target)
        let link = folder.appendingPathComponent("link.bin")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: "real.bin")
        for resumable in [false, true] {
            let response = try await session.download(
                resumable ? "resource/5001" : "bytes/5001", to: link, resumable: resumable)
            #expect(response.fileURL == link)
            #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link.path) == "real.bin")
            #expect(try Data(contentsOf: target).count == 5001, "resumable: \(resumable)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == ["link.bin", "real.bin"])

        let pipe = folder.appendingPathComponent("pipe")
        #expect(mkfifo(pipe.path, 0o600) == 0)
        let toPipe = folder.appendingPathComponent("to-pipe")
        try FileManager.default.createSymbolicLink(atPath: toPipe.path, withDestinationPath: "pipe")
        let dangling = folder.appendingPathComponent("dangling")
        try FileManager.default.createSymbolicLink(atPath: dangling.path, withDestinationPath: "missing/file")
        let subfolder = folder.appendingPathComponent("sub")
        try FileManager.default.createDirectory(at: subfolder, withIntermediateDirectories: false)
        let loop = folder.appendingPathComponent("loop")
        try FileManager.default.createSymbolicLink(atPath: loop.path, withDestinationPath: "loop")
        // /dev/stdout's link: the file the shell redirected to, which a rename would replace.
        let stdout = folder.appendingPathComponent("stdout")
        try FileManager.default.createSymbolicLink(atPath: stdout.path, withDestinationPath: "/proc/self/fd/1")
        let cases: [(URL, String)] = [
            (pipe, "it is a named pipe;"), (toPipe, "it is a named pipe (\(pipe.path));"),
            (dangling, "it is a symbolic link to \(folder.path)/missing/file, which does not exist"),
            (subfolder, "it is a folder;"), (loop, "it is a loop of symbolic links"),
            (stdout, "it leads to /proc/self/fd/1, an open file of a process"),
        ]
        for (destination, reason) in cases {
            for resumable in [false, true] {
                await expectWattleError({
                    _ = try await session.download("bytes/10", to: destination, resumable: resumable)
                }) {
                    guard case .fileError(let path, let text) = $0 else { return false }
                    return path == destination.path && text.hasPrefix(reason)
                }
            }
        }
        var info = stat()
        #expect(lstat(pipe.path, &info) == 0 && info.st_mode & S_IFMT == S_IFIFO)
        #expect(lstat(toPipe.path, &info) == 0 && info.st_mode & S_IFMT == S_IFLNK)
        #expect(lstat(dangling.path, &info) == 0 && info.st_mode & S_IFMT == S_IFLNK)
        #expect(try FileManager.default.contentsOfDirectory(atPath: subfolder.path).isEmpty)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == [
                "dangling", "link.bin", "loop", "pipe", "real.bin", "stdout", "sub", "to-pipe",
            ])
    }

    @Test("/dev/fd/N and /proc/thread-self/fd/N are a process's open files: refused, the file they lead to untouched")
    func processDescriptorsRefused() async throws {
        let session = makeSession(try await TestServer.shared())
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("open.txt")
        try Data("kept".utf8).write(to: file)
        let descriptor = open(file.path, O_RDWR | O_CLOEXEC)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        // procfs's links read as the open file's own path, which the text of the path hides.
        for name in ["/dev/fd/\(descriptor)", "/dev//fd/\(descriptor)", "/proc/thread-self/fd/\(descriptor)"] {
            await expectWattleError({
                _ = try await session.download("bytes/10", to: URL(fileURLWithPath: name))
            }) {
                guard case .fileError(_, let reason) = $0 else { return false }
                return reason.contains("is an open file of a process")
            }
        }
        #expect(try String(contentsOf: file, encoding: .utf8) == "kept")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["open.txt"])
    }

    @Test(
        "a link another user planted in a shared sticky folder (/tmp) is not followed, as the kernel would not: the file it names stays"
    )
    func plantedLinkRefused() async throws {
        let session = makeSession(try await TestServer.shared())
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let shared = folder.appendingPathComponent("shared")
        try FileManager.default.createDirectory(at: shared, withIntermediateDirectories: false)
        #expect(chmod(shared.path, 0o1777) == 0)
        let victim = folder.appendingPathComponent("victim.rc")
        try Data("kept".utf8).write(to: victim)
        let planted = shared.appendingPathComponent("report.pdf")
        try FileManager.default.createSymbolicLink(atPath: planted.path, withDestinationPath: victim.path)
        // Another user's link (as root here: `nobody`'s); the kernel's protected_symlinks
        // refuses to follow it for anyone else.
        guard lchown(planted.path, 65_534, 65_534) == 0 else {
            Issue.record("cannot give the link to another user (not root?): \(String(cString: strerror(errno)))")
            return
        }
        for resumable in [false, true] {
            await expectWattleError({
                _ = try await session.download("bytes/10", to: planted, resumable: resumable)
            }) {
                guard case .fileError(let path, let reason) = $0 else { return false }
                return path == planted.path && reason.contains("that user 65534 made in \(shared.path)")
            }
        }
        #expect(try String(contentsOf: victim, encoding: .utf8) == "kept")
        // This user's own link in the same folder is followed.
        let own = shared.appendingPathComponent("mine.bin")
        try FileManager.default.createSymbolicLink(atPath: own.path, withDestinationPath: victim.path)
        _ = try await session.download("bytes/10", to: own)
        #expect(try Data(contentsOf: victim).count == 10)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: own.path) == victim.path)
    }

    @Test("a download that replaces a file keeps its permissions (a 0600 file stays 0600), resumable or not")
    func replacedFileKeepsPermissions() async throws {
        let session = makeSession(try await TestServer.shared())
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        func mode(_ url: URL) throws -> Int {
            (try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? Int) ?? -1
        }
        for resumable in [false, true] {
            let destination = folder.appendingPathComponent("secret-\(resumable).bin")
            try Data("previous".utf8).write(to: destination)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: destination.path)
            _ = try await session.download("resource/1000?try=\(resumable)", to: destination, resumable: resumable)
            #expect(try Data(contentsOf: destination).count == 1000)
            #expect(try mode(destination) == 0o600, "resumable: \(resumable)")
        }
        // A partial left by a failed resumable download is private: it may be a 0600 file's new contents.
        let cut = folder.appendingPathComponent("cut.bin")
        await expectWattleError({
            _ = try await session.download("resource/300000?cut=100000", to: cut, resumable: true)
        }) {
            if case .connectionLost = $0 { return true }
            return false
        }
        #expect(try mode(folder.appendingPathComponent(".cut.bin.wattle-partial")) == 0o600)
        // A new file gets the usual 0644 (less the umask).
        let fresh = folder.appendingPathComponent("fresh.bin")
        _ = try await session.download("resource/1000", to: fresh)
        // The umask read, not set and restored: other tests make files meanwhile.
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("Umask:") })
        let mask = try #require(Int(line.dropFirst("Umask:".count).trimmingCharacters(in: .whitespaces), radix: 8))
        #expect(try mode(fresh) == 0o644 & ~mask)
    }

    @Test("a failed download leaves no file and keeps an existing one")
    func failedDownloadKeepsExisting() async throws {
        let server = try await TestServer.shared()
        let session = makeSession(server)
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appendingPathComponent("keep.txt")
        try Data("previous".utf8).write(to: destination)
        await expectWattleError({ _ = try await session.download("drop", to: destination) }) {
            if case .connectionLost = $0 { return true }
            return false
        }
        await expectWattleError({ _ = try await session.download("status/404", to: destination) }) {
            if case .httpStatus(let response) = $0 { return response.string?.contains("404") == true }
            return false
        }
        #expect(try String(contentsOf: destination, encoding: .utf8) == "previous")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["keep.txt"])
    }

    @Test(
        "an unsynced download lands intact over HTTP and TLS, and a failed one still leaves no file",
        arguments: [false, true])
    func unsyncedDownload(overTLS: Bool) async throws {
        let session: Session
        if overTLS {
            let server = try await TLSServers.server()
            session = tlsSession {
                $0.baseURL = server.baseURL
                $0.trust.selfSignedHosts = ["127.0.0.1"]
            }
        } else {
            session = makeSession(try await TestServer.shared())
        }
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appendingPathComponent("cache.bin")
        // Several rounds of the 512 KiB gathering buffer and not a multiple of it, so the last
        // gathered pieces are written when the download finishes.
        let size = 9_000_011
        let reports = ProgressLog()
        let response = try await session.download(
            "bytes/\(size)", to: destination, durability: .unsynced
        ) { reports.record($0) }
        #expect(response.fileURL == destination)
        #expect(response.metrics.bytesReceived == Int64(size))
        try expectPattern(in: destination, count: size)
        #expect(reports.last?.receivedBytes == Int64(size))

        try Data("previous".utf8).write(to: destination)
        // The connection drops after part of the body was written to the temporary file.
        await expectWattleError({ _ = try await session.download("drop", to: destination, durability: .unsynced) }) {
            if case .connectionLost = $0 { return true }
            return false
        }
        #expect(try String(contentsOf: destination, encoding: .utf8) == "previous")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["cache.bin"])
    }

    @Test("a download follows redirects and saves only the final body")
    func redirectedDownload() async throws {
        let server = try await TestServer.shared()
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appendingPathComponent("r.bin")
        _ = try await makeSession(server).download("redirect/302", parameters: ["to": "/bytes/1000"], to: destination)
        #expect(try Data(contentsOf: destination) == Data(Pattern.bytes(1000)))
    }

    @Test(
        "a download over TLS arrives in pieces of at most 16 KiB; they are gathered before writing and all land in order"
    )
    func smallPiecesGathered() async throws {
        let server = try await TLSServers.server()
        let session = tlsSession {
            $0.baseURL = server.baseURL
            $0.trust.selfSignedHosts = ["127.0.0.1"]
        }
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        // Several 512 KiB rounds of gathered pieces, then a last partial one written at the end.
        for size in [3_000_017, 1, 0] {
            let destination = folder.appendingPathComponent("tls-\(size).bin")
            let response = try await session.download("bytes/\(size)", to: destination)
            #expect(response.metrics.bytesReceived == Int64(size))
            #expect((try FileManager.default.attributesOfItem(atPath: destination.path)[.size] as? Int) == size)
            try expectPattern(in: destination, count: size)
        }
    }

    @Test("a download into a missing folder is a clear file error")
    func missingFolder() async throws {
        let server = try await TestServer.shared()
        await expectWattleError({
            _ = try await makeSession(server).download(
                "bytes/10", to: URL(fileURLWithPath: "/nonexistent-wattle/x.bin"))
        }) {
            if case .fileError(let path, _) = $0 { return path.contains("nonexistent-wattle") }
            return false
        }
    }
}

/// Collects progress reports from the network thread.
final class ProgressLog: @unchecked Sendable {
    private let lock = NSLock()
    private var reports: [DownloadProgress] = []
    func record(_ progress: DownloadProgress) { lock.withLock { reports.append(progress) } }
    var count: Int { lock.withLock { reports.count } }
    var last: DownloadProgress? { lock.withLock { reports.last } }
    var all: [DownloadProgress] { lock.withLock { reports } }
}
