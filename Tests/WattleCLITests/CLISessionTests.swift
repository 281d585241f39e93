import Foundation
import Testing
import Wattle
import WattleDemoServer

@Suite("The wattle CLI: --session NAME keeps cookies between runs, sealed in the keychain", .serialized)
struct CLISessionTests {
    @Test(
        "a cookie a run is set comes back in the next run of the same session, only that one; show lists it without its value; clear forgets it"
    )
    func keptBetweenRuns() async throws {
        let server = try await Servers.plain.value
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let keychain = folder.appendingPathComponent("cli.keychain")
        let common = ["--keychain", keychain.path, "--base-url", server.baseURL.absoluteString]
        let set = try await CLI.run(["--session", "work", "cookies/set", "sid==s3cret-cookie"] + common)
        // The redirect is not followed without --follow: the cookie comes with the 302 itself.
        #expect(set.status == 3, "\(set.stderr)")
        let later = try await CLI.run(["--session", "work", "echo"] + common)
        #expect(later.status == 0, "\(later.stderr)")
        #expect(try JSONDecoder().decode(Echo.self, from: later.stdout).header("Cookie") == "sid=s3cret-cookie")
        // Another session name, or none, sends nothing.
        for arguments in [["--session", "other", "echo"], ["echo"]] {
            let other = try await CLI.run(arguments + common)
            #expect(try JSONDecoder().decode(Echo.self, from: other.stdout).header("Cookie") == nil)
        }
        let shown = try await CLI.run(["session", "show", "work"] + common)
        #expect(shown.status == 0, "\(shown.stderr)")
        #expect(shown.text.contains("Cookie(sid=…, host 127.0.0.1, path /"), "\(shown.text)")
        // (The first run's error line names its URL, whose query set the cookie.)
        for text in [set.text, later.stderr, shown.text, shown.stderr] {
            #expect(!text.contains("s3cret-cookie"))
        }
        for path in [keychain.path, keychain.path + "-wal"] where FileManager.default.fileExists(atPath: path) {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            #expect(bytes.range(of: Data("s3cret-cookie".utf8)) == nil)
        }
        let cleared = try await CLI.run(["session", "clear", "work"] + common)
        #expect(
            cleared.status == 0 && cleared.text.contains("Forgot the cookies of the session work"), "\(cleared.stderr)")
        let after = try await CLI.run(["--session", "work", "echo"] + common)
        #expect(try JSONDecoder().decode(Echo.self, from: after.stdout).header("Cookie") == nil)
        let none = try await CLI.run(["session", "show", "work"] + common)
        #expect(none.status == 1 && none.stderr.contains("no cookies kept for the session work"), "\(none.stderr)")
    }

    @Test("runs of one session at the same time, each its own process, keep every cookie each was set")
    func concurrentRunsKeepEachOthersCookies() async throws {
        let server = try await Servers.plain.value
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let keychain = folder.appendingPathComponent("cli.keychain")
        let common = ["--keychain", keychain.path, "--base-url", server.baseURL.absoluteString]
        // One run first makes the keychain and its key file.
        let first = try await CLI.run(["--session", "work", "cookies/set", "c0==0"] + common)
        #expect(first.status == 3, "\(first.stderr)")
        let statuses = try await withThrowingTaskGroup(of: Int32.self) { group in
            for index in 1...8 {
                group.addTask {
                    try await CLI.run(["--session", "work", "cookies/set", "c\(index)==\(index)"] + common).status
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(statuses == Array(repeating: 3, count: 8))
        let later = try await CLI.run(["--session", "work", "echo"] + common)
        #expect(later.status == 0, "\(later.stderr)")
        let header = try JSONDecoder().decode(Echo.self, from: later.stdout).header("Cookie") ?? ""
        let sent = Set(header.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) })
        #expect(sent == Set((0...8).map { "c\($0)=\($0)" }), "\(header)")
    }
}
