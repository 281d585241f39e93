import Foundation
import TestProxies
import Testing
import Wattle
import WattleDemoServer

@Suite("wattle -o FILE --continue resumes a download, even one whose process was killed")
struct CLIContinueTests {
    @Test("a killed download's bytes are kept; --continue asks for the rest and the file lands whole")
    func continueAfterKill() async throws {
        let server = try await Servers.plain.value
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("out.bin")
        let partial = folder.appendingPathComponent(".out.bin.wattle-partial")
        let length = 3_000_021
        let cut = 2_000_000
        // The first answer stops after `cut` bytes and keeps the connection open: the process
        // is killed (SIGKILL) while it waits, as a crash or a closed laptop would stop it. What
        // it had written is kept (pieces it gathered in memory to write together, under 512
        // KiB, are lost with it).
        let url = server.url("resource/\(length)?cut=\(cut)&stall=1").absoluteString
        // No stall timeout: under a sanitizer on a loaded machine, 30 s have passed between
        // seeing its bytes and the download below, and the CLI gave up (and let go) first.
        // posix_spawn, not Foundation's Process (see ChildProcess).
        let process = try ChildProcess(
            CLI.binary.path, ["--stall-timeout", "0", "--continue", "-o", file.path, url],
            output: .file("/dev/null"))
        defer { process.killIfRunning() }
        func partialSize() -> Int {
            ((try? FileManager.default.attributesOfItem(atPath: partial.path)[.size]) as? Int) ?? 0
        }
        // A wait, not a time bound: a sanitizer build on a loaded machine took over 20 s to get
        // here, and going on early let the download below take the partial first. The process
        // must still be running, stopped at the cut with its bytes written.
        let deadline = ContinuousClock.now + .seconds(240)
        while partialSize() < cut - 512 * 1024, process.isRunning, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        try #require(process.isRunning, "the CLI ended before it was killed (status \(process.waitForExit()))")
        try #require(partialSize() >= cut - 512 * 1024, "the CLI wrote \(partialSize()) bytes in 240 s")
        // While the process runs, its partial is locked: a download here to the same file is refused.
        var configuration = Configuration()
        configuration.proxy = .none
        do {
            _ = try await Session(configuration: configuration).download(
                Request(url), to: file, resumable: true)
            Issue.record("a second download to a locked partial succeeded")
        } catch {
            if case .fileError(_, let reason) = error {
                #expect(reason.contains("in progress"))
            } else {
                Issue.record("unexpected error: \(error)")
            }
        }
        kill(process.pid, SIGKILL)
        #expect(process.waitForExit() == SIGKILL && process.endedBySignal)
        let kept = partialSize()
        #expect(kept >= cut - 512 * 1024 && kept <= cut)
        #expect(!FileManager.default.fileExists(atPath: file.path))

        let resumed = try await CLI.run(["-v", "--continue", "-o", file.path, url])
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(resumed.stderr.contains("206"), "\(resumed.stderr)")
        #expect(
            resumed.stderr.lowercased().contains("content-range: bytes \(kept)-\(length - 1)/\(length)"),
            "\(resumed.stderr)")
        #expect(try Data(contentsOf: file) == Data(RangeResource.content(length: length, version: 1)))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["out.bin"])
    }

    @Test("a killed download's hidden temporary is removed by the next download into its folder, once a minute old")
    func killedTemporarySwept() async throws {
        let server = try await Servers.plain.value
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("out.bin")
        // Stops after 1 MB and keeps the connection open, silent: the process is killed there.
        let url = server.url("resource/3000022?cut=1000000&stall=1").absoluteString
        let process = try ChildProcess(
            CLI.binary.path, ["--stall-timeout", "0", "-o", file.path, url], output: .file("/dev/null"))
        defer { process.killIfRunning() }
        func temporaries() -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).filter { $0.hasSuffix(".part") }
        }
        func size(_ name: String) -> Int {
            let path = folder.appendingPathComponent(name).path
            return ((try? FileManager.default.attributesOfItem(atPath: path)[.size]) as? Int) ?? 0
        }
        let deadline = ContinuousClock.now + .seconds(240)
        // (Some of the 1 MB is written, the rest gathered in memory to be written together.)
        while temporaries().first.map(size) ?? 0 == 0, process.isRunning, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        try #require(process.isRunning, "the CLI ended before it was killed (status \(process.waitForExit()))")
        let left = try #require(temporaries().first)
        #expect(left.hasPrefix(".out.bin.wattle-"), "\(left)")
        // While it runs, another download into the folder leaves its temporary alone.
        let other = try await CLI.run([
            "-o", folder.appendingPathComponent("other.bin").path, server.url("bytes/10").absoluteString,
        ])
        #expect(other.status == 0, "\(other.stderr)")
        #expect(temporaries() == [left])
        kill(process.pid, SIGKILL)
        #expect(process.waitForExit() == SIGKILL && process.endedBySignal)
        #expect(temporaries() == [left], "a killed process cannot clean up")
        // A minute later (its last write set back), the next download into the folder removes it.
        let path = folder.appendingPathComponent(left).path
        var times = [timeval(tv_sec: time(nil) - 120, tv_usec: 0), timeval(tv_sec: time(nil) - 120, tv_usec: 0)]
        #expect(utimes(path, &times) == 0)
        let next = try await CLI.run(["-o", file.path, server.url("bytes/10").absoluteString])
        #expect(next.status == 0, "\(next.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == ["other.bin", "out.bin"])
    }

    @Test(
        "a download whose file cannot be written (the file-size limit) keeps no partial: exit 1, nothing left beside FILE"
    )
    func writeFailureKeepsNothing() async throws {
        let server = try await Servers.plain.value
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("out.bin")
        // RLIMIT_FSIZE at 1 MB: the partial's writes past it fail with EFBIG (SIGXFSZ ignored,
        // which the exec keeps). Bytes whose write failed are not kept to be continued.
        let limited = ["/bin/sh", "-c", "trap '' XFSZ; exec /usr/bin/prlimit --fsize=1000000 \"$@\"", "sh"]
        let url = server.url("resource/3000023").absoluteString
        let result = try await CLI.run(["--continue", "-o", file.path, url], wrapper: limited)
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("File too large"), "\(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
        // Without the limit, the next run downloads it whole.
        let again = try await CLI.run(["--continue", "-o", file.path, url])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try Data(contentsOf: file) == Data(RangeResource.content(length: 3_000_023, version: 1)))
    }

    @Test(
        "--stall-timeout: a silent transfer fails after it (exit 2), keeping its bytes; a negative one is a usage error"
    )
    func stallTimeoutOption() async throws {
        let server = try await Servers.plain.value
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("slow.bin")
        let url = server.url("resource/300025?cut=100000&stall=1").absoluteString
        // Long enough for a loaded machine to send the head and the first bytes (else the stall
        // comes before any byte, and nothing is kept); the silence after them never ends.
        let seconds = CLI.underSanitizer ? 30 : 10
        let result = try await CLI.run(["--stall-timeout", "\(seconds)", "--continue", "-o", file.path, url])
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("stall phase after \(seconds) s"), "\(result.stderr)")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == [
                ".slow.bin.wattle-partial", ".slow.bin.wattle-partial-state",
            ])
        let negative = try await CLI.run(["--stall-timeout", "-1", url])
        #expect(negative.status == 1 && negative.stderr.contains("--stall-timeout"), "\(negative.stderr)")
    }

    @Test("--continue without -o is a usage error (exit 1)")
    func continueNeedsOutput() async throws {
        let server = try await Servers.plain.value
        let result = try await CLI.run(["--continue", server.url("resource/10").absoluteString])
        #expect(result.status == 1)
        #expect(result.stderr.contains("--continue"), "\(result.stderr)")
    }
}

@Suite("wattle -o FILE interrupted: Ctrl-C or SIGTERM leaves no hidden temporary file behind")
struct CLIInterruptTests {
    @Test(
        "the first SIGINT or SIGTERM cancels the download: exit 128 + the signal, nothing said, the temporary file gone; --continue keeps the partial",
        arguments: [SIGINT, SIGTERM])
    func interruptedDownload(signal: Int32) async throws {
        let server = try await Servers.plain.value
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("out.bin")
        var environment = ProcessInfo.processInfo.environment
        for key in environment.keys where key.lowercased().hasSuffix("_proxy") { environment[key] = nil }
        for continues in [false, true] {
            // A length of its own, to count this run's requests; the answer stops after 1,000,000
            // bytes (more than the 512 KiB gathered before a write) and keeps the connection
            // open, so the download is under way, bytes on disk, when signalled.
            let length = 3_100_000 + Int(signal) * 10 + (continues ? 1 : 0)
            let path = "/resource/\(length)"
            let url = server.url("resource/\(length)?cut=1000000&stall=1").absoluteString
            let child = try ChildProcess(
                CLI.binary.path,
                // A stall timeout however long, so that a lost signal fails the test, not hangs it.
                ["--stall-timeout", "200"] + (continues ? ["--continue"] : []) + ["-o", file.path, url],
                environment: environment)
            var ended = false
            defer {
                if !ended {
                    kill(child.pid, SIGKILL)
                    child.waitForExit()
                }
            }
            // Under way: the server has the request and, for the plain download, the first bytes
            // have made its temporary file (created at the first byte of the body).
            func underWay() -> Bool {
                let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
                guard server.stats.hits(path) == 1 else { return false }
                guard continues else { return names.contains { $0.hasSuffix(".part") } }
                // Bytes in the partial: kept when interrupted (an empty one is not).
                let partial = folder.appendingPathComponent(".out.bin.wattle-partial").path
                return ((try? FileManager.default.attributesOfItem(atPath: partial)[.size]) as? Int ?? 0) > 0
            }
            let deadline = ContinuousClock.now + .seconds(240)
            while !underWay(), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
            try #require(underWay(), "the download did not start in 240 s")
            kill(child.pid, signal)
            let (_, errors, status) = await child.collect()
            ended = true
            #expect(status == 128 + signal, "\(String(decoding: errors, as: UTF8.self))")
            #expect(!String(decoding: errors, as: UTF8.self).contains("cancelled"))
            let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
            if continues {
                #expect(names == [".out.bin.wattle-partial", ".out.bin.wattle-partial-state"])
                for name in names { try FileManager.default.removeItem(at: folder.appendingPathComponent(name)) }
            } else {
                #expect(names.isEmpty, "left: \(names)")
            }
        }
    }
}
