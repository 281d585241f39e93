import Foundation
import TestProxies
import Testing
import Wattle
import WattleDemoServer

@Suite("The wattle CLI: HTTP Basic credentials with -a, and kept in the keychain with auth set-basic", .serialized)
struct CLIBasicAuthTests {
    static let password = "pässwörd-£1"

    /// The test server's route that accepts exactly alice and ``password``.
    static func checked(_ server: DemoServer) -> String {
        server.baseURL.absoluteString + "basic-auth/alice/\(password)"
    }

    struct Checked: Decodable {
        var authenticated: Bool
        var user: String?
    }

    @Test("-a USER:PASSWORD passes the server's check; a wrong one exits 4 without the password in anything printed")
    func auth() async throws {
        let server = try await Servers.plain.value
        let accepted = try await CLI.run(["-a", "alice:\(Self.password)", Self.checked(server)])
        #expect(accepted.status == 0, "\(accepted.stderr)")
        #expect(try JSONDecoder().decode(Checked.self, from: accepted.stdout).user == "alice")
        let refused = try await CLI.run(["-v", "-a", "alice:s3cret-wrong", Self.checked(server)])
        #expect(refused.status == 4)
        #expect(refused.stderr.contains("WWW-Authenticate: Basic"), "\(refused.stderr)")
        // -v shows the header redacted: its value is the password in base64.
        #expect(refused.stderr.contains("Authorization: <redacted>"), "\(refused.stderr)")
        let encoded = Data("alice:s3cret-wrong".utf8).base64EncodedString()
        for text in [refused.stderr, refused.text] {
            #expect(!text.contains("s3cret") && !text.contains(encoded))
        }
        // -v's URL is redacted as the session's logs are: no user-info.
        let userInfo = try await CLI.run(["-v", "http://alice:s3cret-info@127.0.0.1:\(server.port)/echo"])
        #expect(userInfo.stderr.contains("GET http://127.0.0.1:\(server.port)/echo"), "\(userInfo.stderr)")
        #expect(!userInfo.stderr.contains("s3cret") && !userInfo.text.contains("s3cret"))
        // Everything after the first colon is the password; "alice:" is an empty one.
        let echoed = try await CLI.run(["-a", "ali:ce:x", server.url("echo").absoluteString])
        #expect(
            try JSONDecoder().decode(Echo.self, from: echoed.stdout).header("Authorization")
                == "Basic " + Data("ali:ce:x".utf8).base64EncodedString())
        let empty = try await CLI.run(["-a", "sk_test_key:", server.url("echo").absoluteString])
        #expect(
            try JSONDecoder().decode(Echo.self, from: empty.stdout).header("Authorization")
                == "Basic " + Data("sk_test_key:".utf8).base64EncodedString())
    }

    @Test(
        "while the request runs, the process list shows -a's password and a URL's (an operand's or --base-url=URL's) as *s; the server gets the real ones",
        arguments: ["url", "basic", "base"])
    func passwordsHiddenFromProcessList(form: String) async throws {
        let server = try await Servers.plain.value
        // A path of this test's own: the server counts it once the request has arrived, and
        // answers 3 s later (10 under a sanitizer), while the process is read.
        let delay = CLI.underSanitizer ? 10_000 : 3000
        let path = "/delay/\(delay + ["url": 11, "basic": 12, "base": 13][form]!)"
        let password = "s3cret-\(form)"
        let stars = String(repeating: "*", count: password.count)
        let arguments =
            switch form {
            case "url": ["http://bob:\(password)@127.0.0.1:\(server.port)\(path)"]
            case "basic": ["-a", "bob:\(password)", "http://127.0.0.1:\(server.port)\(path)"]
            default: ["--base-url=http://bob:\(password)@127.0.0.1:\(server.port)/", String(path.dropFirst())]
            }
        let before = server.stats.hits(path)
        // posix_spawn, not Foundation's Process (see ChildProcess).
        let process = try ChildProcess(CLI.binary.path, arguments)
        defer { process.killIfRunning() }
        let deadline = ContinuousClock.now + .seconds(120)
        let pid = process.pid
        // Polled on a thread of its own, and read as soon as the request has arrived: the pool's
        // wake-ups lag by seconds under a sanitizer on a loaded machine.
        let cmdline = await withCheckedContinuation { continuation in
            Thread {
                while server.stats.hits(path) == before, ContinuousClock.now < deadline { usleep(2000) }
                continuation.resume(returning: try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/cmdline")))
            }.start()
        }
        try #require(server.stats.hits(path) > before, "the request did not arrive")
        let shown = try #require(cmdline, "the CLI ended before its request was answered")
            .split(separator: 0, omittingEmptySubsequences: false).dropLast()
            .map { String(decoding: $0, as: UTF8.self) }
        #expect(
            Array(shown.dropFirst())
                == arguments.map { $0.replacingOccurrences(of: ":\(password)", with: ":\(stars)") })
        // Waited for without blocking a thread of the pool; the echo fits the pipe's buffer.
        while process.isRunning, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        try #require(!process.isRunning, "the CLI did not end")
        let body = process.readToEnd().output
        #expect(process.waitForExit() == 0)
        #expect(
            try JSONDecoder().decode(Echo.self, from: body).header("Authorization")
                == "Basic " + Data("bob:\(password)".utf8).base64EncodedString())
    }

    @Test("-a USER takes WATTLE_PASSWORD; without it, off a terminal, exit 1 saying how to give one")
    func passwordFromEnvironment() async throws {
        let server = try await Servers.plain.value
        let fromEnvironment = try await CLI.run(
            ["-a", "alice", Self.checked(server)], environment: ["WATTLE_PASSWORD": Self.password])
        #expect(fromEnvironment.status == 0, "\(fromEnvironment.stderr)")
        // Standard input is never read for it: it may be the body. (In a session of its own,
        // with no terminal to ask on even when the tests run on one.)
        let missing = try await CLI.run(
            ["-a", "alice", Self.checked(server)], input: .pipe(Data("\(Self.password)\n".utf8)),
            wrapper: ["/usr/bin/setsid", "-w"])
        #expect(missing.status == 1)
        #expect(
            missing.stderr.contains("no password for -a") && missing.stderr.contains("WATTLE_PASSWORD"),
            "\(missing.stderr)")
    }

    @Test("-a USER with the body on standard input asks for the password on the terminal, as curl does")
    func passwordAskedOnTheTerminalWhileStdinIsTheBody() async throws {
        let server = try await Servers.plain.value
        let files = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: files) }
        let body = files.appendingPathComponent("body.json")
        try Data(#"{"n":1}"#.utf8).write(to: body)
        // script(1) runs the command on a terminal of its own; what is written to script's
        // standard input is typed on it. The password is typed once the prompt is shown (the
        // prompt discards what was typed before it).
        let command = "'\(CLI.binary.path)' -a alice PUT '\(Self.checked(server))' < '\(body.path)'"
        // posix_spawn, not Foundation's Process (see ChildProcess).
        let process = try ChildProcess("/usr/bin/script", ["-qec", command, "/dev/null"], input: .pipe)
        defer { process.killIfRunning() }
        let (seen, status) = await ChildProcess.onOwnThread { () -> (String, Int32) in
            var text = ""
            while !text.contains("Password: ") {
                let chunk = process.availableOutput()
                if chunk.isEmpty { break }
                text += String(decoding: chunk, as: UTF8.self)
            }
            if text.contains("Password: ") { try? process.writeInput(Data("\(Self.password)\n".utf8)) }
            let (rest, errors) = process.readToEnd()
            process.closeInput()
            let status = process.waitForExit()
            return (text + String(decoding: rest + errors, as: UTF8.self), status)
        }
        #expect(status == 0, "\(seen)")
        // The body is printed for a terminal: pretty and coloured.
        #expect(seen.contains("Password: ") && seen.contains("authenticated"), "\(seen)")
        #expect(seen.contains("true") && !seen.contains("false") && seen.contains("alice"), "\(seen)")
        #expect(!seen.contains(Self.password), "not echoed")
    }

    @Test("bad credentials and a second Authorization are usage errors naming the problem, not the password")
    func refused() async throws {
        let server = try await Servers.plain.value
        let newline = try await CLI.run(["-a", "alice:s3cret-line\n", Self.checked(server)])
        #expect(newline.status == 1)
        #expect(newline.stderr.contains("U+000A") && newline.stderr.contains("newline"), "\(newline.stderr)")
        #expect(!newline.stderr.contains("s3cret"))
        let both = try await CLI.run(["-a", "alice:s3cret-two", Self.checked(server), "Authorization:Bearer x"])
        #expect(both.status == 1)
        #expect(both.stderr.contains("Authorization header"), "\(both.stderr)")
        // httpie's attached -aUSER:PASSWORD, which ArgumentParser reports as an unknown option.
        let attached = try await CLI.run(["-aalice:s3cret-attached", Self.checked(server)])
        #expect(attached.status == 1 && attached.stderr.contains("-aalice:***"), "\(attached.stderr)")
        #expect(!attached.stderr.contains("s3cret"))
    }

    @Test("with --follow, a redirect to another origin drops -a's credentials")
    func redirectDropsCredentials() async throws {
        let server = try await Servers.plain.value
        let second = try await DemoServer.start()
        defer { Task { try? await second.stop() } }
        let result = try await CLI.run([
            "--follow", "-a", "alice:\(Self.password)", server.url("redirect/302").absoluteString,
            "to==\(second.url("echo").absoluteString)",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let echo = try JSONDecoder().decode(Echo.self, from: result.stdout)
        #expect(echo.header("Authorization") == nil)
        #expect(echo.header("Host") == "127.0.0.1:\(second.port)")
    }

    @Test("auth set-basic keeps the credentials sealed; later requests to the origin send them; show redacts them")
    func setBasic() async throws {
        let server = try await Servers.plain.value
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let keychain = folder.appendingPathComponent("cli.keychain")
        let common = ["--keychain", keychain.path, "--base-url", server.baseURL.absoluteString]
        let kept = try await CLI.run(
            ["auth", "set-basic", "alice"] + common, input: .pipe(Data("\(Self.password)\n".utf8)))
        #expect(kept.status == 0, "\(kept.stderr)")
        #expect(kept.text.contains("Basic …:…"), "\(kept.text)")
        let request = try await CLI.run(["basic-auth/alice/\(Self.password)"] + common)
        #expect(request.status == 0, "\(request.stderr)")
        let shown = try await CLI.run(["auth", "show"] + common)
        #expect(shown.text.contains("token:   Basic …:…"), "\(shown.text)")
        let encoded = Data("alice:\(Self.password)".utf8).base64EncodedString()
        for text in [kept.text, kept.stderr, shown.text, request.stderr] {
            #expect(!text.contains(Self.password) && !text.contains(encoded))
        }
        // The file and its WAL, where a write sits until a checkpoint.
        for path in [keychain.path, keychain.path + "-wal"] where FileManager.default.fileExists(atPath: path) {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            #expect(bytes.range(of: Data(Self.password.utf8)) == nil && bytes.range(of: Data(encoded.utf8)) == nil)
        }
        let none = try await CLI.run(["auth", "set-basic", "alice"] + common)
        #expect(none.status == 1 && none.stderr.contains("no password"), "\(none.stderr)")
        // An API key as the username, with an empty line for no password.
        let key = try await CLI.run(["auth", "set-basic", "sk_test_key"] + common, input: .pipe(Data("\n".utf8)))
        #expect(key.status == 0, "\(key.stderr)")
        let echoed = try await CLI.run(["echo"] + common)
        #expect(
            try JSONDecoder().decode(Echo.self, from: echoed.stdout).header("Authorization")
                == "Basic " + Data("sk_test_key:".utf8).base64EncodedString())
    }
}
