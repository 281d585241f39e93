import Foundation
import Testing
import WattleDemoServer

/// `wattle --stream`: the body printed as it arrives, against the test server's paced
/// server-sent events (`/events`).
@Suite("The wattle CLI: --stream prints a body as it arrives")
struct CLIStreamTests {
    @Test("-S prints each event as it comes: a process stopped before the last event has printed the first")
    func printsAsItArrives() async throws {
        let server = try await Servers.plain.value
        let url = server.url("events").absoluteString + "?count=2&interval=180000"
        // Killed after 30 s (wide: a loaded machine), while the server waits three minutes to
        // send the second event; the stream has no stall timeout to end it first. (KILL: a
        // child of the test runner's threads inherits their blocked SIGTERM.)
        let seconds = CLI.underSanitizer ? "60" : "30"
        let result = try await CLI.run(["-S", url], wrapper: ["/usr/bin/timeout", "-s", "KILL", seconds])
        #expect(result.status == SIGKILL, "killed by timeout(1), which passes the signal on: \(result.stderr)")
        #expect(result.text == "id: 0\ndata: {\"n\":0}\n\n")
    }

    @Test("-S into a pipe whose reader has gone ends at the next write, exit 1, though the stream would go on")
    func streamEndsWhenThePipeCloses() async throws {
        let server = try await Servers.plain.value
        // 100,000 events 50 ms apart: over an hour, unless the closed pipe ends it.
        let url = server.url("events").absoluteString + "?count=100000&interval=50"
        // Killed after 60 s if it does not end (137), so a hung run cannot outlive the test.
        let script =
            #"timeout -s KILL 60 "$0" -S "$1" | head -n 1; echo "status=${PIPESTATUS[0]}" >&2"#
        let result = try await CLI.run(
            ["-c", script, CLI.binary.path, url], binary: URL(fileURLWithPath: "/bin/bash"))
        #expect(result.text == "id: 0\n")
        #expect(result.stderr.contains("status=1\n"), "\(result.stderr)")
        #expect(result.stderr.contains("wattle: cannot write the output: Broken pipe"), "\(result.stderr)")
    }

    @Test("--timeout bounds a stream (which has no stall timeout) and a download to a file, as it does any request")
    func timeoutBoundsStreams() async throws {
        let server = try await Servers.plain.value
        let url = server.url("events").absoluteString + "?count=2&interval=180000"
        let start = ContinuousClock.now
        // 10 s (30 under a sanitizer): the first event must have been printed by then, on a
        // loaded machine too.
        let limit = CLI.underSanitizer ? "30" : "10"
        let streamed = try await CLI.run(["--timeout", limit, "-S", url])
        #expect(
            streamed.status == 2 && streamed.stderr.contains("Timed out in the total phase after \(limit) s"),
            "\(streamed.stderr)")
        #expect(streamed.stderr.contains("From the CLI: --timeout SECONDS."), "\(streamed.stderr)")
        #expect(streamed.text == "id: 0\ndata: {\"n\":0}\n\n")
        let files = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: files) }
        let downloaded = try await CLI.run([
            "--timeout", limit, "-o", files.appendingPathComponent("events.txt").path, url,
        ])
        #expect(
            downloaded.status == 2 && downloaded.stderr.contains("Timed out in the total phase after \(limit) s"),
            "\(downloaded.stderr)")
        #expect(ContinuousClock.now - start < .seconds(CLI.underSanitizer ? 170 : 90))
    }

    @Test("--stream to a pipe: the whole body, byte for byte; -v shows the head first; a 404 is exit 4 with its body")
    func wholeBody() async throws {
        let server = try await Servers.plain.value
        let events = try await CLI.run(["--stream", "-v", server.url("events").absoluteString + "?count=3&interval=5"])
        #expect(events.status == 0, "\(events.stderr)")
        #expect(events.text == (0..<3).map { "id: \($0)\ndata: {\"n\":\($0)}\n\n" }.joined())
        #expect(events.stderr.contains("HTTP/1.1 200") && events.stderr.contains("Content-Type: text/event-stream"))

        let bytes = try await CLI.run(["-S", server.url("bytes/300000").absoluteString])
        #expect(bytes.status == 0 && bytes.stdout == Data(Pattern.bytes(300_000)))

        let missing = try await CLI.run(["-S", server.url("status/404").absoluteString])
        #expect(missing.status == 4 && missing.text.contains("\"status\":404"))
    }

    @Test("a transfer that fails part-way leaves what arrived printed, then one error line, exit 2")
    func failsPartWay() async throws {
        let server = try await Servers.plain.value
        let result = try await CLI.run(["-S", server.url("drop").absoluteString])
        #expect(result.status == 2)
        #expect(result.stdout == Data(Pattern.bytes(1000)))
        #expect(
            result.stderr.split(separator: "\n").count == 1 && result.stderr.contains("connection"), "\(result.stderr)")
    }
}
