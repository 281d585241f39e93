import Foundation
import TestProxies
import Testing
import Wattle
import WattleDemoServer
import WattleKeychain

/// Runs the built `wattle` binary.
enum CLI {
    /// Whether the tests run under a sanitizer (`make sanitize` sets WATTLE_TEST_SANITIZER),
    /// where the CLI and the servers run several times slower: time limits are wider there.
    static let underSanitizer = getenv("WATTLE_TEST_SANITIZER") != nil

    /// The arguments that make the TLS demo server's self-signed certificate acceptable, with
    /// a connect timeout wider than the default 10 s under a sanitizer, where the handshake
    /// with the in-process server can take seconds.
    static let tlsTrust = ["--allow-self-signed", "127.0.0.1"] + (underSanitizer ? ["--connect-timeout", "60"] : [])

    struct Result {
        var status: Int32
        var stdout: Data
        var stderr: String
        var text: String { String(decoding: stdout, as: UTF8.self) }
    }

    /// The `wattle` executable next to the test bundle (or `$WATTLE_CLI`).
    static let binary: URL = {
        if let path = ProcessInfo.processInfo.environment["WATTLE_CLI"] { return URL(fileURLWithPath: path) }
        var folder = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = folder.appendingPathComponent("wattle")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            folder = folder.deletingLastPathComponent()
        }
        return URL(fileURLWithPath: ".build/debug/wattle")
    }()

    /// The child's standard input.
    enum Input {
        /// `/dev/null`.
        case none
        /// A pipe holding these bytes (at most 64 KB, the pipe's buffer), then closed.
        case pipe(Data)
        /// A file, as a shell's `< file` gives it.
        case file(URL)
    }

    /// Runs the binary on a thread of its own (never blocking the cooperative pool).
    static func run(
        _ arguments: [String], environment: [String: String] = [:], input: Input = .none, wrapper: [String] = [],
        binary: URL = CLI.binary
    ) async throws -> Result {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(
                    with: Swift.Result {
                        try runBlocking(
                            arguments, environment: environment, input: input, wrapper: wrapper, binary: binary)
                    })
            }.start()
        }
    }

    static func runBlocking(
        _ arguments: [String], environment: [String: String], input: Input = .none, wrapper: [String], binary: URL
    ) throws -> Result {
        let executable: String
        let processArguments: [String]
        if wrapper.isEmpty {
            executable = binary.path
            processArguments = arguments
        } else {
            executable = wrapper[0]
            processArguments = Array(wrapper.dropFirst()) + [binary.path] + arguments
        }
        var env = ProcessInfo.processInfo.environment
        for key in [
            "http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "WATTLE_BASE_URL",
            "WATTLE_PASSWORD", "WATTLE_REFRESH_PATH", "WATTLE_CERT_PASSWORD", "WATTLE_TOKEN_PATH", "WATTLE_CLIENT_ID",
            "WATTLE_CLIENT_SECRET",
        ] {
            env[key] = nil
        }
        env.merge(environment) { $1 }
        let childInput: ChildProcess.Input
        switch input {
        case .none: childInput = .none
        case .pipe(let data): childInput = .data(data)
        case .file(let url): childInput = .file(url.path)
        }
        // posix_spawn, not Foundation's Process (see ChildProcess).
        let child = try ChildProcess(executable, processArguments, environment: env, input: childInput)
        let (outputData, errorData) = child.readToEnd()
        let status = child.waitForExit()
        return Result(status: status, stdout: outputData, stderr: String(decoding: errorData, as: UTF8.self))
    }

    /// Runs the binary on a terminal of its own (script(1)), standard output and standard error
    /// both on it; returns the exit status and what the terminal showed, its `\r\n` line ends
    /// as `\n` (a lone `\r`, a redraw, is kept).
    static func runOnTerminal(_ arguments: [String]) async throws -> (status: Int32, screen: String) {
        let quoted = ([binary.path] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        let result = try await run(
            ["-qec", quoted.joined(separator: " "), "/dev/null"], binary: URL(fileURLWithPath: "/usr/bin/script"))
        return (result.status, result.text.replacingOccurrences(of: "\r\n", with: "\n"))
    }
}

/// The JSON the `/echo` route answers with.
typealias Echo = EchoAnswer

func temporaryFolder() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("wattle-cli-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

enum Servers {
    static let plain = Task { try await DemoServer.start() }
    static let identity = Result { try TLSIdentity.selfSigned(names: ["localhost"], addresses: ["127.0.0.1"]) }
    static let tls = Task { try await DemoServer.start(tls: try identity.get()) }
}

@Suite("The wattle CLI, driven as a process against the demo server", .serialized)
struct CLITests {
    @Test("auth set-token - reads the token from standard input, so it is in no process list")
    func setTokenFromStandardInput() async throws {
        let server = try await DemoServer.start()
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let common = [
            "--keychain", folder.appendingPathComponent("cli.keychain").path, "--base-url",
            server.baseURL.absoluteString,
        ]
        let issued = server.api.issueTokens()
        let kept = try await CLI.run(
            ["auth", "set-token", "-"] + common, input: .pipe(Data("  \(issued.access)\n".utf8)))
        #expect(kept.status == 0, "\(kept.stderr)")
        #expect(!kept.text.contains(issued.access))
        #expect(try await CLI.run(["api/whoami"] + common).status == 0)
        let empty = try await CLI.run(["auth", "set-token", "-"] + common, input: .pipe(Data("\n".utf8)))
        #expect(empty.status == 1)
        #expect(empty.stderr.contains("no token on standard input"))
        // Both from standard input, a line each: the refresh token is in no process list
        // either, and works (the access token has expired, so the refresh is used).
        let renewed = server.api.issueTokens()
        let both = try await CLI.run(
            ["auth", "set-token", "-", "--refresh-token", "-", "--expires-in=-1"] + common,
            input: .pipe(Data("\(renewed.access)\n \(renewed.refresh) \n".utf8)))
        #expect(both.status == 0, "\(both.stderr)")
        #expect(!both.text.contains(renewed.refresh))
        let refreshed = try await CLI.run(["api/whoami", "--refresh-path", "api/refresh"] + common)
        #expect(refreshed.status == 0, "\(refreshed.stderr)")
        #expect(server.stats.hits("/api/refresh") == 1)
        let noRefresh = try await CLI.run(
            ["auth", "set-token", "-", "--refresh-token", "-"] + common, input: .pipe(Data("\(renewed.access)\n".utf8)))
        #expect(noRefresh.status == 1)
        #expect(noRefresh.stderr.contains("no refresh token on standard input"), "\(noRefresh.stderr)")
        try await server.stop()
    }

    @Test("auth set-token TOKEN: once parsed, the token shows as *s in the process list")
    func setTokenHiddenFromProcessList() async throws {
        let server = try await Servers.plain.value
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let token = "tok-\(UUID().uuidString)"
        // `--refresh-token -` keeps the process waiting on standard input while it is read.
        let arguments = [
            "auth", "set-token", token, "--refresh-token", "-", "--keychain",
            folder.appendingPathComponent("cli.keychain").path, "--base-url", server.baseURL.absoluteString,
        ]
        // posix_spawn, not Foundation's Process (see ChildProcess).
        let process = try ChildProcess(CLI.binary.path, arguments, input: .pipe, output: .file("/dev/null"))
        defer { process.killIfRunning() }
        let pid = process.pid
        let stars = String(repeating: "*", count: token.count)
        let expected = arguments.map { $0 == token ? stars : $0 }
        // Polled on a thread of its own until the token is hidden (or a minute has passed).
        let shown = await ChildProcess.onOwnThread { () -> [String] in
            let deadline = ContinuousClock.now + .seconds(60)
            var shown: [String] = []
            repeat {
                let raw = (try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/cmdline"))) ?? Data()
                shown = raw.split(separator: 0, omittingEmptySubsequences: false).dropLast().map {
                    String(decoding: $0, as: UTF8.self)
                }
                if Array(shown.dropFirst()) == expected { break }
                usleep(2000)
            } while ContinuousClock.now < deadline
            return Array(shown.dropFirst())
        }
        #expect(shown == expected)
        try process.writeInput(Data("refresh-\(token)\n".utf8))
        process.closeInput()
        let finished = await ChildProcess.onOwnThread { process.waitForExit() }
        #expect(finished == 0)
        let kept = try await CLI.run(["auth", "show"] + arguments.suffix(4))
        #expect(kept.status == 0, "\(kept.stderr)")
        #expect(kept.text.contains("refresh: ") && !kept.text.contains("refresh: none"), "\(kept.text)")
        #expect(!kept.text.contains(token), "shown redacted")
    }

    @Test("numbers beyond any timeout or expiry are usage errors or taken as very long, never a crash")
    func outOfRangeNumbers() async throws {
        let server = try await Servers.plain.value
        let url = server.url("echo").absoluteString
        for arguments in [
            ["--timeout", "inf"], ["--timeout", "nan"], ["--stall-timeout", "inf"], ["--connect-timeout", "inf"],
            ["--connect-timeout", "nan"], ["--connect-timeout=0"], ["--connect-timeout=-1"],
        ] {
            let refused = try await CLI.run(arguments + [url])
            #expect(refused.status == 1, "\(arguments): \(refused.stderr)")
            #expect(refused.stderr.split(separator: "\n").count == 1, "\(refused.stderr)")
            if arguments[0].hasPrefix("--connect-timeout") {
                #expect(refused.stderr == "wattle: --connect-timeout must be a positive number of seconds\n")
            }
        }
        let long = try await CLI.run([
            "--timeout", "1e16", "--stall-timeout", "1e300", "--connect-timeout", "1e16", url,
        ])
        #expect(long.status == 0, "\(long.stderr)")

        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let common = ["--keychain", folder.appendingPathComponent("cli.keychain").path, "--base-url", url]
        let infinite = try await CLI.run(["auth", "set-token", "t0k3n-abcdefghijkl", "--expires-in", "inf"] + common)
        #expect(infinite.status == 1)
        #expect(infinite.stderr.contains("--expires-in takes a number of seconds"), "\(infinite.stderr)")
        let never = try await CLI.run(["auth", "set-token", "t0k3n-abcdefghijkl", "--expires-in", "1e19"] + common)
        #expect(never.status == 0, "\(never.stderr)")
        #expect(never.text.contains("expires in 1000000000000000 s"), "\(never.text)")
        let shown = try await CLI.run(["auth", "show"] + common)
        #expect(shown.status == 0, "\(shown.stderr)")
        #expect(shown.text.contains("expires: in 1000000000000000 s"), "\(shown.text)")
    }

    @Test("a reader that goes away is a failed write: exit 1 and one line, not death by SIGPIPE")
    func closedPipe() async throws {
        let server = try await Servers.plain.value
        // 4 MB: more than the pipe holds, so writes go on after `head` has left.
        let script = #"set -o pipefail; "$0" "$1" | head -c 1 > /dev/null; echo "status=${PIPESTATUS[0]}" >&2"#
        let result = try await CLI.run(
            ["-c", script, CLI.binary.path, server.url("bytes/4194304").absoluteString],
            binary: URL(fileURLWithPath: "/bin/bash"))
        #expect(result.stderr.contains("status=1\n"), "\(result.stderr)")
        #expect(result.stderr.contains("wattle: cannot write the output: Broken pipe"), "\(result.stderr)")
    }

    @Test(
        "a standard error that cannot be written (-v 2>/dev/full) does not cut a streamed body short; the run exits 1")
    func fullStandardError() async throws {
        let server = try await Servers.plain.value
        let files = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: files) }
        let file = files.appendingPathComponent("body.bin")
        let script = #""$0" -v "$1" > "$2" 2> /dev/full; echo "status=$?" >&2"#
        let result = try await CLI.run(
            ["-c", script, CLI.binary.path, server.url("bytes/4194304").absoluteString, file.path],
            binary: URL(fileURLWithPath: "/bin/bash"))
        #expect(result.stderr == "status=1\n", "the -v lines were lost, so not 0")
        let written = try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int
        #expect(written == 4_194_304, "the whole body, though standard error failed first")
    }

    @Test(
        "a body larger than the in-memory limit (100 MiB) is written whole to a redirected standard output, as it arrives"
    )
    func largeBodyToARedirectedOutput() async throws {
        let server = try await Servers.plain.value
        let size = 100 * 1_048_576 + 65_536
        let files = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: files) }
        let file = files.appendingPathComponent("big.bin")
        let script = #""$0" "$1" > "$2"; echo "status=$?" >&2"#
        let result = try await CLI.run(
            ["-c", script, CLI.binary.path, server.url("bytes/\(size)").absoluteString, file.path],
            binary: URL(fileURLWithPath: "/bin/bash"))
        #expect(result.stderr == "status=0\n")
        let written = try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int
        #expect(written == size)
    }

    @Test("an error naming a library setting also says which option does it from the CLI")
    func errorsNameTheCLIOption() async throws {
        let relative = try await CLI.run(["users/42"])
        #expect(relative.status == 1)
        #expect(
            relative.stderr.contains("it is relative") && relative.stderr.contains("--base-url"), "\(relative.stderr)")
        #expect(relative.stderr.split(separator: "\n").count == 1, "\(relative.stderr)")

        // The auth, pin, session and cert commands report as a request does.
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let keychain = ["--keychain", folder.appendingPathComponent("cli.keychain").path]
        let untrusted = try await Servers.tls.value.url("api/login").absoluteString
        let login = try await CLI.run(
            ["auth", "login", untrusted, "--username", "demo", "--password", "wattle"] + keychain)
        #expect(login.status == 2, "\(login.stderr)")
        #expect(
            login.stderr.contains("--allow-self-signed 127.0.0.1") && login.stderr.contains("--cacert FILE"),
            "\(login.stderr)")
        #expect(login.stderr.split(separator: "\n").count == 1, "\(login.stderr)")
        for command in [["auth", "show"], ["auth", "logout"], ["session", "show", "s1"]] {
            let noURL = try await CLI.run(command + keychain)
            #expect(noURL.status == 1, "\(command): \(noURL.stderr)")
            #expect(
                noURL.stderr.contains("no URL") && noURL.stderr.contains("--base-url")
                    && !noURL.stderr.contains("Configuration.baseURL"), "\(command): \(noURL.stderr)")
        }
    }

    @Test("-o - is standard output, not a file named -")
    func outputDash() async throws {
        let server = try await Servers.plain.value
        let files = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: files) }
        let script = #"cd "$2" && "$0" -o - "$1"; echo "status=$?" >&2; ls -A"#
        let result = try await CLI.run(
            ["-c", script, CLI.binary.path, server.url("bytes/1000").absoluteString, files.path],
            binary: URL(fileURLWithPath: "/bin/bash"))
        #expect(result.stderr == "status=0\n")
        #expect(result.stdout.count == 1000, "nothing written to a file, so ls prints nothing")
    }

    @Test(
        "-o through a link to /dev/null, into a named pipe, or to /dev/stdout writes through, leaving each as it was; -c refuses them"
    )
    func outputToSpecialFiles() async throws {
        let server = try await Servers.plain.value
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = server.url("bytes/100000").absoluteString
        // (A link, not /dev/null itself: a regression as root must not replace the device.)
        let null = folder.appendingPathComponent("null")
        try FileManager.default.createSymbolicLink(atPath: null.path, withDestinationPath: "/dev/null")
        let discarded = try await CLI.run(["-o", null.path, url])
        #expect(discarded.status == 0, "\(discarded.stderr)")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: null.path) == "/dev/null")
        var info = stat()
        #expect(stat("/dev/null", &info) == 0 && info.st_mode & S_IFMT == S_IFCHR)

        let pipe = folder.appendingPathComponent("pipe")
        #expect(mkfifo(pipe.path, 0o600) == 0)
        // A reader on the pipe, as `wattle -o pipe URL & cat pipe` would have.
        let reader = Task.detached { () -> Int in
            let descriptor = open(pipe.path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { return -1 }
            defer { close(descriptor) }
            var total = 0
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = read(descriptor, &buffer, buffer.count)
                if count <= 0 { return total }
                total += count
            }
        }
        let piped = try await CLI.run(["-o", pipe.path, url])
        #expect(piped.status == 0, "\(piped.stderr)")
        #expect(await reader.value == 100_000)
        #expect(lstat(pipe.path, &info) == 0 && info.st_mode & S_IFMT == S_IFIFO)
        let resumed = try await CLI.run(["-c", "-o", pipe.path, url])
        #expect(resumed.status == 1 && resumed.stderr.contains("--continue needs a regular file"), "\(resumed.stderr)")

        // -o /dev/stdout (or /dev/fd/1) is standard output as it is: appended to the file the
        // shell opened with >>, which stays the same file (a rename replaced it).
        let log = folder.appendingPathComponent("log.txt")
        try Data("before\n".utf8).write(to: log)
        var before = stat()
        #expect(stat(log.path, &before) == 0)
        let names = ["/dev/stdout", "/dev/fd/1", "/dev//fd/1", "/proc/thread-self/fd/1"]
        for name in names {
            let script = #""$0" -o "$1" "$2" >> "$3"; echo "status=$?" >&2"#
            let appended = try await CLI.run(
                ["-c", script, CLI.binary.path, name, server.url("bytes/1000").absoluteString, log.path],
                binary: URL(fileURLWithPath: "/bin/bash"))
            #expect(appended.stderr == "status=0\n", "\(name): \(appended.stderr)")
        }
        var after = stat()
        #expect(stat(log.path, &after) == 0 && after.st_ino == before.st_ino)
        #expect(
            try Data(contentsOf: log)
                == Data("before\n".utf8) + Data(Array(repeating: Pattern.bytes(1000), count: names.count).joined()))
        // A descriptor given for reading only is refused before anything is sent.
        let readOnly = try await CLI.run(
            ["-c", #""$0" -o /dev/fd/3 "$1" 3<"$2""#, CLI.binary.path, url, log.path],
            binary: URL(fileURLWithPath: "/bin/bash"))
        #expect(readOnly.status == 1 && readOnly.stderr.contains("not given open for writing"), "\(readOnly.stderr)")
        #expect(try Data(contentsOf: log).count == 7 + 1000 * names.count)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == ["log.txt", "null", "pipe"])
    }

    @Test("a standard method in lower case is the method, as in httpie")
    func lowerCaseMethod() async throws {
        let server = try await Servers.plain.value
        let result = try await CLI.run(["put", server.url("echo").absoluteString, "name=Ada"])
        #expect(result.status == 0, "\(result.stderr)")
        let echo = try JSONDecoder().decode(Echo.self, from: result.stdout)
        #expect(echo.method == "PUT")
        #expect(echo.body == #"{"name":"Ada"}"#)
        let deleted = try await CLI.run(["delete", server.url("echo").absoluteString, "id==7"])
        #expect(try JSONDecoder().decode(Echo.self, from: deleted.stdout).method == "DELETE")
    }

    @Test("each item form lands where it should; METHOD defaults to POST with body items")
    func itemForms() async throws {
        let server = try await Servers.plain.value
        let result = try await CLI.run([
            server.url("echo").absoluteString, "name=Ada", "age:=36", #"tags:=["a","b"]"#, "q==x y&z", "X-Test:hello",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let echo = try JSONDecoder().decode(Echo.self, from: result.stdout)
        #expect(echo.method == "POST")
        #expect(echo.query == "q=x%20y%26z")
        #expect(echo.header("X-Test") == "hello")
        #expect(echo.body == #"{"name":"Ada","age":36,"tags":["a","b"]}"#)
        #expect(echo.header("Content-Type") == "application/json")
        // As httpie: a JSON body of items asks for JSON back, unless an item sets Accept.
        #expect(echo.header("Accept") == "application/json, */*;q=0.5")
        let own = try await CLI.run([server.url("echo").absoluteString, "a=1", "Accept:text/csv"])
        #expect(try JSONDecoder().decode(Echo.self, from: own.stdout).header("Accept") == "text/csv")
        let form = try await CLI.run(["-f", server.url("echo").absoluteString, "a=1"])
        #expect(try JSONDecoder().decode(Echo.self, from: form.stdout).header("Accept") == "*/*")

        let get = try await CLI.run([server.url("echo").absoluteString, "page==2"])
        #expect(try JSONDecoder().decode(Echo.self, from: get.stdout).method == "GET")
        let put = try await CLI.run(["PUT", server.url("echo").absoluteString, "a=1"])
        #expect(try JSONDecoder().decode(Echo.self, from: put.stdout).method == "PUT")
    }

    @Test("Header: leaves out a header the CLI or libcurl would send, Header; sends it empty, the last item wins")
    func headerRemoval() async throws {
        let server = try await Servers.plain.value
        let result = try await CLI.run([
            server.url("echo").absoluteString, "User-Agent:", "Accept:", "Accept-Encoding:", "X-Empty;", "X-Gone:1",
            "X-Gone:", "X-Back:", "X-Back:2",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let echo = try JSONDecoder().decode(Echo.self, from: result.stdout)
        for name in ["User-Agent", "Accept", "Accept-Encoding", "X-Gone"] {
            #expect(echo.headerValues(name).isEmpty, "\(name): \(echo.headerValues(name))")
        }
        #expect(echo.headerValues("X-Empty") == [""] && echo.headerValues("X-Back") == ["2"])
        // Cookie: drops the items' cookies; without --session no other cookie is sent.
        let cookie = try await CLI.run([server.url("echo").absoluteString, "Cookie:a=1", "Cookie:"])
        #expect(cookie.status == 0, "\(cookie.stderr)")
        #expect(try JSONDecoder().decode(Echo.self, from: cookie.stdout).headerValues("Cookie").isEmpty)
        let host = try await CLI.run([server.url("echo").absoluteString, "Host:"])
        #expect(host.status == 1 && host.stderr.contains("Host cannot be omitted"))
        let both = try await CLI.run(["-a", "bob:pw", server.url("echo").absoluteString, "Authorization:"])
        #expect(both.status == 1 && both.stderr.contains("-a and an Authorization"))
    }

    @Test("httpie's :PORT/path and a host without a scheme reach the server over http")
    func urlShorthands() async throws {
        let server = try await Servers.plain.value
        for word in [":\(server.port)/echo?via=colon", "127.0.0.1:\(server.port)/echo?via=host"] {
            let result = try await CLI.run([word])
            #expect(result.status == 0, "\(word): \(result.stderr)")
            let echo = try JSONDecoder().decode(Echo.self, from: result.stdout)
            #expect(echo.path == "/echo" && echo.query.hasPrefix("via="), "\(word)")
        }
    }

    @Test(
        "HEAD prints the answer's head on stdout (its only answer), once, also with -v (on stderr then), and for a 404")
    func headPrintsTheHead() async throws {
        let server = try await Servers.plain.value
        let head = try await CLI.run(["HEAD", server.url("user").absoluteString])
        #expect(head.status == 0, "\(head.stderr)")
        #expect(
            head.text.hasPrefix("HTTP/1.1 200\n") && head.text.lowercased().contains("content-type: application/json"))
        let verbose = try await CLI.run(["-v", "HEAD", server.url("user").absoluteString])
        #expect(verbose.status == 0 && verbose.text.isEmpty && verbose.stderr.contains("HTTP/1.1 200"))
        // Whatever the status: the head on stdout, the error line on stderr, its exit code.
        let missing = try await CLI.run(["HEAD", server.url("status/404").absoluteString])
        #expect(missing.status == 4 && missing.text.hasPrefix("HTTP/1.1 404\n"), "\(missing.text)")
        #expect(missing.stderr.split(separator: "\n").count == 1, "\(missing.stderr)")
    }

    @Test("the body goes raw to a pipe, byte for byte")
    func rawWhenPiped() async throws {
        let server = try await Servers.plain.value
        let result = try await CLI.run([server.url("user").absoluteString])
        #expect(result.status == 0)
        #expect(result.text == #"{"admin":true,"email":"ada@example.test","id":42,"name":"Ada Lovelace"}"#)
    }

    @Test(
        "--max-redirects N: --follow follows N redirects and fails at one more (exit 2, one line); 10 by default; without --follow, or below 1, a usage error"
    )
    func maxRedirects() async throws {
        let server = try await Servers.plain.value
        let three = server.url("redirect-chain/3").absoluteString
        let followed = try await CLI.run(["--follow", "--max-redirects", "3", three])
        #expect(followed.status == 0, "\(followed.stderr)")
        #expect(try JSONDecoder().decode(Echo.self, from: followed.stdout).path == "/echo")
        let refused = try await CLI.run(["--follow", "--max-redirects", "2", three])
        #expect(refused.status == 2 && refused.stderr.contains("Too many redirects (more than 2)"), "\(refused.stderr)")
        #expect(refused.stderr.split(separator: "\n").count == 1)
        #expect(try await CLI.run(["--follow", "--max-redirects", "1", three]).status == 2)
        #expect(try await CLI.run(["--follow", server.url("redirect-chain/10").absoluteString]).status == 0)
        #expect(try await CLI.run(["--follow", server.url("redirect-chain/11").absoluteString]).status == 2)
        for (arguments, message) in [
            (["--max-redirects", "3", three], "give --follow too"),
            (["--follow", "--max-redirects=0", three], "1 or more"),
        ] {
            let usage = try await CLI.run(arguments)
            #expect(usage.status == 1 && usage.stderr.contains(message), "\(arguments): \(usage.stderr)")
        }
    }

    @Test("exit codes: 0, 3, 4, 5, 2 and 1, each error with one line on stderr")
    func exitCodes() async throws {
        let server = try await Servers.plain.value
        let tls = try await Servers.tls.value
        let refused = try { () -> Int in
            let socket = try DemoServerPort.free()
            return socket
        }()
        let cases: [([String], Int32)] = [
            ([server.url("user").absoluteString], 0),
            ([server.url("redirect/302").absoluteString], 3),
            (["--follow", server.url("redirect/302").absoluteString], 0),
            ([server.url("status/404").absoluteString], 4),
            ([server.url("status/503").absoluteString], 5),
            (["http://127.0.0.1:\(refused)/"], 2),
            ([tls.url("user").absoluteString], 2),
            (["--timeout", "0.3", server.url("delay/3000").absoluteString], 2),
            ([server.url("echo").absoluteString, "not-an-item"], 1),
            (["users"], 1),
            // ArgumentParser's own usage errors: 1 and one line too (not its 64 and usage text).
            (["--timeout", "abc", server.url("user").absoluteString], 1),
            (["--no-such-option", server.url("user").absoluteString], 1),
            (["auth", "login", server.url("api/login").absoluteString], 1),
            // Options that contradict each other: a usage error each, nothing sent.
            (["-c", "-o", "-", server.url("user").absoluteString], 1),
            (["-S", "-o", "/tmp/wattle-never-written", server.url("user").absoluteString], 1),
        ]
        let version = try await CLI.run(["--version"])
        #expect(version.status == 0 && version.text == "wattle \(Wattle.version)\n", "\(version.text)")
        let help = try await CLI.run(["--help"])
        #expect(help.status == 0 && help.text.contains("USAGE"), "\(help.stderr)")
        for (arguments, expected) in cases {
            let result = try await CLI.run(arguments)
            #expect(result.status == expected, "\(arguments): \(result.stderr)")
            if expected != 0 {
                let lines = result.stderr.split(separator: "\n")
                #expect(lines.count == 1, "\(arguments): stderr was \(result.stderr)")
                #expect(lines.first?.hasPrefix("wattle: ") == true)
            } else {
                #expect(result.stderr.isEmpty)
            }
        }
        // An unfollowed redirect names its target (resolved, credential-looking parts redacted).
        let redirect = try await CLI.run([
            server.url("redirect/302").absoluteString + "?to=%2Fecho%3Faccess_token%3Ds3cret"
        ])
        #expect(redirect.status == 3)
        #expect(
            redirect.stderr.contains("It redirects to http://127.0.0.1:\(server.port)/echo?access_token=")
                && redirect.stderr.hasSuffix("access_token=REDACTED (--follow follows redirects).\n"),
            "\(redirect.stderr)")
        // With --follow, one left unfollowed (a 307 that would resend a body to another origin)
        // does not advise --follow.
        let elsewhere = "http://localhost:\(server.port)/echo"
        let kept = try await CLI.run([
            "--follow", "POST",
            server.url("redirect/307").absoluteString + "?to=" + elsewhere.addingPercentEncoding(
                withAllowedCharacters: .alphanumerics)!,
            "a=1",
        ])
        #expect(kept.status == 3)
        #expect(
            kept.stderr.hasSuffix("(not followed: it would send the request's body to another origin).\n")
                && !kept.stderr.contains("--follow"), "\(kept.stderr)")
    }

    @Test("--allow-self-signed and --pin make a TLS host work; the pin command prints the server's pin")
    func tlsOptions() async throws {
        let tls = try await Servers.tls.value
        let allowed = try await CLI.run(CLI.tlsTrust + [tls.url("user").absoluteString])
        #expect(allowed.status == 0, "\(allowed.stderr)")
        let pin = try await CLI.run(["pin", "127.0.0.1:\(tls.port)"])
        #expect(pin.status == 0)
        let expected = try PublicKeyPin.pin(forCertificatePEM: try Servers.identity.get().certificatePEM)
        #expect(pin.text.trimmingCharacters(in: .whitespacesAndNewlines) == expected)
        // An https:// URL names the server too (as a request's URL is written).
        let fromURL = try await CLI.run(["pin", tls.url("user").absoluteString])
        #expect(fromURL.status == 0, "\(fromURL.stderr)")
        #expect(fromURL.text.trimmingCharacters(in: .whitespacesAndNewlines) == expected)
        for bad in ["http://127.0.0.1:\(tls.port)/", "127.0.0.1:99999", "127.0.0.1:abc", "https://"] {
            let refused = try await CLI.run(["pin", bad])
            #expect(refused.status == 1, "\(bad): \(refused.stderr)")
            #expect(refused.stderr.contains("wattle pin takes HOST, HOST:PORT or an https:// URL"), "\(refused.stderr)")
        }
        let pinned = try await CLI.run(["--pin", "127.0.0.1=\(expected)", tls.url("user").absoluteString])
        #expect(pinned.status == 0, "\(pinned.stderr)")
        let wrong = try await CLI.run([
            "--pin", "127.0.0.1=sha256//AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", tls.url("user").absoluteString,
        ])
        #expect(wrong.status == 2)
        #expect(wrong.stderr.contains("does not match its configured pin"))
        // No advice to allowlist: a pin holds on an allowlisted host, so it could not help.
        #expect(!wrong.stderr.contains("--allow-self-signed"), "\(wrong.stderr)")
        #expect(wrong.stderr.contains("wattle pin 127.0.0.1"), "\(wrong.stderr)")
    }

    @Test(
        "--cacert FILE (or httpie's --verify FILE) verifies the host against that certificate; another, no or a bad file fails"
    )
    func caCertificate() async throws {
        let tls = try await Servers.tls.value
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("wattle-cacert-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let own = folder.appendingPathComponent("server.pem")
        try Servers.identity.get().certificatePEM.write(to: own, atomically: true, encoding: .utf8)
        let other = folder.appendingPathComponent("other.pem")
        try TLSIdentity.selfSigned(names: ["localhost"], addresses: ["127.0.0.1"]).certificatePEM
            .write(to: other, atomically: true, encoding: .utf8)
        let text = folder.appendingPathComponent("text.pem")
        try "not a certificate".write(to: text, atomically: true, encoding: .utf8)
        let url = tls.url("user").absoluteString
        for option in ["--cacert", "--verify"] {
            let trusted = try await CLI.run([option, own.path, url])
            #expect(trusted.status == 0, "\(option): \(trusted.stderr)")
        }
        let wrong = try await CLI.run(["--cacert", other.path, url])
        #expect(wrong.status == 2 && wrong.stderr.contains("certificate"), "\(wrong.stderr)")
        let off = try await CLI.run(["--verify", "no", url])
        #expect(off.status == 1 && off.stderr.contains("never turned off"), "\(off.stderr)")
        for bad in [text.path, folder.appendingPathComponent("missing.pem").path] {
            let refused = try await CLI.run(["--cacert", bad, url])
            #expect(refused.status == 1 && refused.stderr.contains("--cacert"), "\(refused.stderr)")
        }
    }

    @Test("-v prints the request and the response head on stderr, the body alone on stdout")
    func verbose() async throws {
        let server = try await Servers.plain.value
        let result = try await CLI.run(["-v", server.url("user").absoluteString, "X-Trace:abc"])
        #expect(result.status == 0)
        #expect(result.stderr.contains("GET \(server.url("user").absoluteString)"))
        #expect(result.stderr.contains("X-Trace: abc"))
        #expect(result.stderr.contains("User-Agent: Wattle/"), "the request as sent: \(result.stderr)")
        #expect(result.stderr.contains("HTTP/1.1 200"))
        #expect(result.stderr.contains("Content-Type: application/json"))
        #expect(result.text.hasPrefix("{"))
    }

    @Test("-v shows the kept token's Authorization line, redacted, and the body's content type")
    func verboseShowsWhatTheSessionAdds() async throws {
        let server = try await DemoServer.start()
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let common = [
            "--keychain", folder.appendingPathComponent("cli.keychain").path, "--base-url",
            server.baseURL.absoluteString,
        ]
        let issued = server.api.issueTokens()
        #expect(try await CLI.run(["auth", "set-token", issued.access] + common).status == 0)
        let result = try await CLI.run(["-v", "api/whoami"] + common)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("GET \(server.url("api/whoami").absoluteString)"), "\(result.stderr)")
        #expect(result.stderr.contains("Authorization: <redacted>"), "\(result.stderr)")
        #expect(!result.stderr.contains(issued.access))
        let posted = try await CLI.run(["-v", "--form", "POST", "echo", "a=b"] + common)
        #expect(posted.status == 0, "\(posted.stderr)")
        #expect(posted.stderr.contains("Content-Type: application/x-www-form-urlencoded"), "\(posted.stderr)")
        // A URL on another origin than --base-url's is printed too (as built, without a token).
        let other = try await Servers.plain.value.url("echo").absoluteString
        let elsewhere = try await CLI.run(["-v", other, "X-Trace:abc"] + common)
        #expect(elsewhere.status == 0, "\(elsewhere.stderr)")
        #expect(elsewhere.stderr.contains("GET \(other)\nX-Trace: abc"), "\(elsewhere.stderr)")
        #expect(!elsewhere.stderr.contains("Authorization"), "\(elsewhere.stderr)")
        try await server.stop()
    }

    @Test("a proxy URL from the environment that libcurl cannot read: exit 1, one clear line, no password")
    func unreadableEnvironmentProxy() async throws {
        let server = try await Servers.plain.value
        for proxy in [
            "wattle:s3cr et@proxy.example:3128", "ftp://wattle:s3cr3t@proxy.example:21",
            "http://wattle:s3cr3t@pro,xy.example:3128",
        ] {
            // no_proxy emptied: an inherited one listing 127.0.0.1 would bypass the proxy.
            let result = try await CLI.run(
                ["-v", server.url("echo").absoluteString],
                environment: ["http_proxy": proxy, "no_proxy": "", "NO_PROXY": ""])
            #expect(result.status == 1, "\(proxy): \(result.stderr)")
            #expect(result.stderr.contains("not a usable proxy URL"), "\(proxy): \(result.stderr)")
            #expect(result.stderr.contains("http_proxy/https_proxy/all_proxy"), "\(result.stderr)")
            #expect(!result.stderr.contains("s3cr") && !result.stderr.contains("wattle:s"), "\(result.stderr)")
        }
    }

    @Test("a proxy from the environment that is not there: exit 2, the error names the proxy, not the server")
    func unreachableEnvironmentProxy() async throws {
        let plain = try await Servers.plain.value
        let tls = try await Servers.tls.value
        let port = try DemoServerPort.free()
        for (url, variable, options) in [
            (plain.url("echo").absoluteString, "http_proxy", [String]()),
            (tls.url("echo").absoluteString, "https_proxy", CLI.tlsTrust),
            (tls.url("echo").absoluteString, "ALL_PROXY", CLI.tlsTrust),
        ] {
            let result = try await CLI.run(
                options + [url],
                environment: [variable: "http://wattle:s3cr3t@127.0.0.1:\(port)", "no_proxy": "", "NO_PROXY": ""])
            #expect(result.status == 2, "\(variable): \(result.stderr)")
            #expect(
                result.stderr.contains("proxy http://127.0.0.1:\(port) (from the environment) failed"),
                "\(result.stderr)")
            #expect(!result.stderr.contains("s3cr3t"), "\(result.stderr)")
        }
        // Without a proxy variable, a server that is not there is still the server's failure.
        let direct = try await CLI.run(
            ["http://127.0.0.1:\(port)/echo"], environment: ["no_proxy": "", "NO_PROXY": ""])
        #expect(
            direct.status == 2 && direct.stderr.contains("127.0.0.1:\(port)") && !direct.stderr.contains("proxy"),
            "\(direct.stderr)")
    }

    @Test(
        "an https proxy from the environment whose certificate is untrusted, for a plain http URL: the proxy's failure, not the server's"
    )
    func untrustedEnvironmentProxyForPlainHTTP() async throws {
        let plain = try await Servers.plain.value
        let tls = try await Servers.tls.value
        // The TLS demo server as the proxy: its certificate is self-signed, and a proxy's
        // certificate must chain to the system's CAs (--allow-self-signed is for servers).
        let result = try await CLI.run(
            CLI.tlsTrust + [plain.url("echo").absoluteString],
            environment: ["http_proxy": "https://127.0.0.1:\(tls.port)", "no_proxy": "", "NO_PROXY": ""])
        #expect(result.status == 2, "\(result.stderr)")
        #expect(
            result.stderr.contains("proxy https://127.0.0.1:\(tls.port) (from the environment) failed")
                && result.stderr.contains("not trusted"), "\(result.stderr)")
        // Not the server's certificate, which a plain http URL does not have, nor the advice to allowlist it.
        #expect(!result.stderr.contains("selfSignedHosts") && !result.stderr.contains("--allow-self-signed"))
    }

    @Test("with SSLKEYLOGFILE set, libcurl writes TLS secrets to it, and the session warns that it does")
    func keyLogFileWarned() async throws {
        let tls = try await Servers.tls.value
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let keys = folder.appendingPathComponent("keys.log")
        let result = try await CLI.run(
            CLI.tlsTrust + [tls.url("user").absoluteString],
            environment: ["SSLKEYLOGFILE": keys.path, "WATTLE_LOG_LEVEL": "warning"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("SSLKEYLOGFILE is set") && result.stderr.contains(keys.path), "\(result.stderr)")
        // What the warning is about: the connection's secrets are in the file.
        let written = (try? String(contentsOf: keys, encoding: .utf8)) ?? ""
        #expect(written.contains("TRAFFIC_SECRET"), "\(written.prefix(200))")
        let without = try await CLI.run(
            CLI.tlsTrust + [tls.url("user").absoluteString], environment: ["WATTLE_LOG_LEVEL": "warning"])
        #expect(without.status == 0 && !without.stderr.contains("SSLKEYLOGFILE"), "\(without.stderr)")
    }

    @Test("-o streams a 200 MB body to a file identical to the source, in a process that stays under 50 MB")
    func downloadToFile() async throws {
        let server = try await Servers.plain.value
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("out.bin")
        let size = 200 * 1024 * 1024
        let result = try await CLI.run(
            ["-o", file.path, server.url("bytes/\(size)").absoluteString],
            wrapper: ["/usr/bin/time", "-f", "maxrss=%M"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.isEmpty)
        let handle = try FileHandle(forReadingFrom: file)
        defer { try? handle.close() }
        var offset = 0
        let chunk = Data(Pattern.chunk)
        while let data = try handle.read(upToCount: chunk.count), !data.isEmpty {
            #expect(data == chunk.prefix(data.count))
            offset += data.count
        }
        #expect(offset == size)
        let peakKilobytes = result.stderr.split(separator: "\n").compactMap { line in
            line.hasPrefix("maxrss=") ? Int(line.dropFirst(7)) : nil
        }.first
        #expect(peakKilobytes != nil)
        #expect((peakKilobytes ?? .max) < 50 * 1024, "peak RSS of the whole wattle process: \(peakKilobytes ?? -1) KB")
    }

    @Test("a keychain file others may read stops a request with one line saying what to do, not a usage hint")
    func unusableKeychain() async throws {
        let server = try await Servers.plain.value
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let keychain = folder.appendingPathComponent("cli.keychain").path
        let common = ["--keychain", keychain, "--base-url", server.baseURL.absoluteString]
        #expect(try await CLI.run(["auth", "set-token", "t0k3n-abcdefghijkl"] + common).status == 0)
        #expect(chmod(keychain, 0o644) == 0)
        let refused = try await CLI.run(["api/whoami"] + common)
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("chmod 600"), "\(refused.stderr)")
        #expect(!refused.stderr.contains("--help"), "\(refused.stderr)")
        #expect(refused.stderr.split(separator: "\n").count == 1, "\(refused.stderr)")
    }

    @Test("auth login at another origin than --base-url keeps the token for the base URL's origin, the API's")
    func loginElsewhere() async throws {
        let api = try await Servers.plain.value
        let login = try await DemoServer.start()
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let common = [
            "--keychain", folder.appendingPathComponent("cli.keychain").path, "--base-url", api.baseURL.absoluteString,
        ]
        let signedIn = try await CLI.run(
            ["auth", "login", login.url("api/login").absoluteString, "--username", "demo", "--password", "wattle"]
                + common)
        #expect(signedIn.status == 0, "\(signedIn.stderr)")
        #expect(signedIn.text.contains("Signed in to \(api.baseURL.absoluteString)"), "\(signedIn.text)")
        #expect(login.stats.hits("/api/login") == 1)
        let shown = try await CLI.run(["auth", "show"] + common)
        #expect(shown.status == 0, "\(shown.stderr)")
        #expect(shown.text.contains("origin:  \(api.baseURL.absoluteString)"), "\(shown.text)")
        try await login.stop()
    }

    @Test(
        "--token-path obtains a token with the client's credentials (secret from WATTLE_CLIENT_SECRET), keeps it for the next process; a wrong secret is one clear line"
    )
    func clientCredentials() async throws {
        let server = try await Servers.plain.value
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let keychain = folder.appendingPathComponent("cli.keychain").path
        let common = ["--keychain", keychain, "--base-url", server.baseURL.absoluteString]
        let client = ["--token-path", "api/token", "--client-id", "demo-client"]
        let secret = ["WATTLE_CLIENT_SECRET": "demo-client-secret"]
        let before = server.stats.hits("/api/token")

        // No keychain yet: one is made for the token.
        let first = try await CLI.run(["api/whoami", "--scope", "reports:read"] + client + common, environment: secret)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.text.contains("client:demo-client") && first.text.contains("reports:read"), "\(first.text)")
        #expect(server.stats.hits("/api/token") == before + 1)
        // The next process sends the kept token: with the same client options, or with none.
        let second = try await CLI.run(
            ["api/whoami", "--scope", "reports:read"] + client + common, environment: secret)
        #expect(second.status == 0, "\(second.stderr)")
        let third = try await CLI.run(["api/whoami"] + common)
        #expect(third.status == 0, "\(third.stderr)")
        #expect(third.text.contains("client:demo-client"))
        #expect(server.stats.hits("/api/token") == before + 1)
        // Another scope: the kept token was obtained for reports:read, so one is obtained for it.
        let rescoped = try await CLI.run(
            ["api/whoami", "--scope", "reports:write"] + client + common, environment: secret)
        #expect(rescoped.status == 0, "\(rescoped.stderr)")
        #expect(rescoped.text.contains("reports:write"), "\(rescoped.text)")
        #expect(server.stats.hits("/api/token") == before + 2)
        let store = KeychainTokenStore(
            origin: server.baseURL,
            store: try KeychainStore(
                fileURL: URL(fileURLWithPath: keychain), credential: .keyFile(URL(fileURLWithPath: keychain + ".key"))))
        let kept = try #require(try await store.load())
        #expect(kept.refreshToken == nil)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: keychain))
        #expect(bytes.range(of: Data(kept.accessToken.utf8)) == nil)

        // Without the secret: a usage error, nothing sent.
        let noSecret = try await CLI.run(["api/whoami"] + client + common)
        #expect(noSecret.status == 1)
        #expect(noSecret.stderr.contains("WATTLE_CLIENT_SECRET"), "\(noSecret.stderr)")
        // A wrong secret, with no token kept: one line naming the OAuth error, never the secret.
        let wrong = try await CLI.run(
            ["api/whoami", "--profile", "other"] + client + common,
            environment: ["WATTLE_CLIENT_SECRET": "wrong-secret-0123456789"])
        // The token endpoint refused the client (a 4xx): exit 4, as that call's failure.
        #expect(wrong.status == 4, "\(wrong.stderr)")
        #expect(wrong.stderr.contains("invalid_client"), "\(wrong.stderr)")
        #expect(!wrong.stderr.contains("wrong-secret-0123456789") && !wrong.text.contains("wrong-secret-0123456789"))
        #expect(server.stats.hits("/api/token") == before + 3)
    }

    @Test("auth login, show, a later process using the kept token, refresh, logout; no plaintext token on disk")
    func authCommands() async throws {
        let server = try await Servers.plain.value
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let keychain = folder.appendingPathComponent("cli.keychain").path
        let base = server.baseURL.absoluteString
        let common = ["--keychain", keychain, "--base-url", base]

        let login = try await CLI.run(
            ["auth", "login", server.url("api/login").absoluteString, "--username", "demo", "--password", "wattle"]
                + common)
        #expect(login.status == 0, "\(login.stderr)")
        let store = KeychainTokenStore(
            origin: server.baseURL,
            store: try KeychainStore(
                fileURL: URL(fileURLWithPath: keychain), credential: .keyFile(URL(fileURLWithPath: keychain + ".key"))))
        let token = try #require(try await store.load())
        #expect(!login.text.contains(token.accessToken))

        let show = try await CLI.run(["auth", "show"] + common)
        #expect(show.status == 0)
        #expect(show.text.contains(token.redactedAccessToken))
        #expect(!show.text.contains(token.accessToken))
        #expect(!show.text.contains(token.refreshToken ?? "-"))

        // A new process finds the token in the keychain file and sends it.
        let whoami = try await CLI.run(["api/whoami"] + common)
        #expect(whoami.status == 0, "\(whoami.stderr)")
        #expect(whoami.text.contains("demo"))

        // Expired on the server: the next process refreshes through --refresh-path and saves the new token.
        server.api.expireAccessTokens()
        let before = server.stats.hits("/api/refresh")
        let refreshed = try await CLI.run(["api/whoami", "--refresh-path", "api/refresh"] + common)
        #expect(refreshed.status == 0, "\(refreshed.stderr)")
        #expect(server.stats.hits("/api/refresh") == before + 1)
        let renewed = try #require(try await store.load())
        #expect(renewed.accessToken != token.accessToken)

        let bytes = try Data(contentsOf: URL(fileURLWithPath: keychain))
        for secret in [token.accessToken, token.refreshToken ?? "", renewed.accessToken, renewed.refreshToken ?? ""] {
            #expect(bytes.range(of: Data(secret.utf8)) == nil, "a token is in the keychain file in plaintext")
        }

        let logout = try await CLI.run(["auth", "logout"] + common)
        #expect(logout.status == 0)
        #expect(try await CLI.run(["api/whoami"] + common).status == 4)

        let issued = server.api.issueTokens()
        #expect(try await CLI.run(["auth", "set-token", issued.access] + common).status == 0)
        #expect(try await CLI.run(["api/whoami"] + common).status == 0)
    }

    @Test("auth show and auth logout on a keychain that does not exist say so and create nothing")
    func authShowAndLogoutCreateNothing() async throws {
        let server = try await Servers.plain.value
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let missing = folder.appendingPathComponent("typo/cli.keychain").path
        let common = ["--keychain", missing, "--base-url", server.baseURL.absoluteString]
        let show = try await CLI.run(["auth", "show"] + common)
        #expect(show.status == 1, "\(show.stderr)")
        #expect(
            show.stderr.contains("no token kept") && show.stderr.contains("no keychain at \(missing)"), "\(show.stderr)"
        )
        let logout = try await CLI.run(["auth", "logout"] + common)
        #expect(logout.status == 0, "\(logout.stderr)")
        #expect(logout.text.contains("no keychain at \(missing)"), "\(logout.text)")
        let made = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        #expect(made.isEmpty, "made \(made)")
    }

    @Test("credentials in the URL are sent instead of the kept token, as with -a")
    func urlCredentialsWinOverTheKeptToken() async throws {
        let server = try await Servers.plain.value
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let common = [
            "--keychain", folder.appendingPathComponent("cli.keychain").path, "--base-url",
            server.baseURL.absoluteString,
        ]
        let issued = server.api.issueTokens()
        let kept = try await CLI.run(["auth", "set-token", issued.access] + common)
        #expect(kept.status == 0, "\(kept.stderr)")
        var parts = URLComponents(url: server.url("basic-auth/bob/hunter2"), resolvingAgainstBaseURL: false)!
        parts.user = "bob"
        parts.password = "hunter2"
        let result = try await CLI.run([parts.url!.absoluteString] + common)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.text.contains("\"authenticated\""), "\(result.text)")
        // Without them, the kept token goes.
        let echo = try await CLI.run([server.url("echo").absoluteString] + common)
        #expect(
            try JSONDecoder().decode(Echo.self, from: echo.stdout).header("Authorization") == "Bearer \(issued.access)")
    }

    @Test(
        "-o on a terminal: the bar ends at 100% on its own line, and an error goes on the next line, not onto the bar")
    func progressBarEnds() async throws {
        let server = try await Servers.plain.value
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("out").path
        let done = try await CLI.runOnTerminal(["-o", file, server.url("bytes/3000000").absoluteString])
        #expect(done.status == 0, "\(done.screen)")
        let frames = done.screen.split(separator: "\r").filter { $0.contains("%") }
        #expect(
            frames.last?.contains("100%") == true && frames.last?.hasSuffix("\n") == true,
            "\(done.screen.debugDescription)")
        #expect((try FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) == 3_000_000)

        let dropped = try await CLI.runOnTerminal(["-o", file, server.url("drop").absoluteString])
        #expect(dropped.status == 2, "\(dropped.screen)")
        let lines = dropped.screen.split(separator: "\n")
        #expect(lines.contains { $0.contains("%") }, "a bar was drawn: \(dropped.screen.debugDescription)")
        #expect(
            lines.filter { $0.contains("wattle:") }.count == 1 && lines.contains { $0.hasPrefix("wattle: ") },
            "\(dropped.screen.debugDescription)")
    }

    @Test("auth login sends no kept token; a wrong password exits 4; a refused token with no refresh path exits 4")
    func loginIgnoresTheKeptToken() async throws {
        let server = try await DemoServer.start()
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let common = [
            "--keychain", folder.appendingPathComponent("cli.keychain").path, "--base-url",
            server.baseURL.absoluteString,
        ]
        let login = ["auth", "login", server.url("api/login").absoluteString, "--username", "demo"]
        #expect(try await CLI.run(login + ["--password", "wattle"] + common).status == 0)

        // A wrong password, while a valid token is kept: the server's 401, exit 4, one line.
        let wrong = try await CLI.run(login + ["--password", "nope"] + common)
        #expect(wrong.status == 4, "\(wrong.stderr)")
        #expect(wrong.stderr.split(separator: "\n").count == 1)

        // The kept token stops working and no refresh is set up: the server's answer, exit 4.
        server.api.expireAccessTokens()
        let refused = try await CLI.run(["api/whoami"] + common)
        #expect(refused.status == 4, "\(refused.stderr)")
        #expect(refused.text.contains("invalid_token"), "the body is printed: \(refused.text)")

        // A kept token about to expire whose refresh token is revoked: signing in again works.
        server.api.configure { $0.accessTokenLifetime = .seconds(5) }
        #expect(try await CLI.run(login + ["--password", "wattle"] + common).status == 0)
        server.api.configure { $0.rejectRefresh = true }
        let again = try await CLI.run(login + ["--password", "wattle", "--refresh-path", "api/refresh"] + common)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(server.stats.hits("/api/refresh") == 0)
        try await server.stop()
    }

    @Test(
        "a refresh that fails in TLS exits 2 with one line naming the cause and keeps the token; a refused refresh token exits 4"
    )
    func failedRefreshExitCodes() async throws {
        let server = try await DemoServer.start()
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let common = [
            "--keychain", folder.appendingPathComponent("cli.keychain").path, "--base-url",
            server.baseURL.absoluteString,
        ]
        let issued = server.api.issueTokens()
        let kept = try await CLI.run(
            ["auth", "set-token", issued.access, "--refresh-token", issued.refresh, "--expires-in", "0"] + common)
        #expect(kept.status == 0, "\(kept.stderr)")
        // The refresh goes to a self-signed host that is not allowlisted: TLS refuses it, a
        // network failure (2), as the same request's own would be.
        let untrusted = try await Servers.tls.value.url("api/refresh").absoluteString
        let failed = try await CLI.run(["api/whoami", "--refresh-path", untrusted] + common)
        #expect(failed.status == 2, "\(failed.stderr)")
        #expect(
            failed.stderr.contains("the token refresh failed: The certificate of 127.0.0.1 is not trusted"),
            "\(failed.stderr)")
        #expect(failed.stderr.split(separator: "\n").count == 1)
        #expect(!failed.stderr.contains(issued.refresh))
        let refreshed = try await CLI.run(["api/whoami", "--refresh-path", "api/refresh"] + common)
        #expect(refreshed.status == 0, "\(refreshed.stderr)")
        #expect(server.stats.hits("/api/refresh") == 1)
        // The server refuses the next refresh token (its 401): sign in again, a 4xx (4).
        server.api.expireAccessTokens()
        server.api.configure { $0.rejectRefresh = true }
        let refused = try await CLI.run(["api/whoami", "--refresh-path", "api/refresh"] + common)
        #expect(refused.status == 4, "\(refused.stderr)")
        #expect(refused.stderr.contains("the server rejected the refresh token; sign in again"), "\(refused.stderr)")
        #expect(refused.stderr.split(separator: "\n").count == 1)
        #expect(server.stats.hits("/api/refresh") == 2)
        try await server.stop()
    }

    @Test(
        "on a terminal a binary body is a note and control characters in headers are escaped; piped, bytes are as sent")
    func terminalSafety() async throws {
        let server = try await Servers.plain.value
        /// Runs wattle with a terminal for its output (`script` gives it one; `script` merges
        /// stdout and stderr into its own stdout).
        func onTerminal(_ arguments: [String]) async throws -> CLI.Result {
            let command = ([CLI.binary.path] + arguments).map { "'\($0)'" }.joined(separator: " ")
            return try await CLI.run(["-qec", command, "/dev/null"], binary: URL(fileURLWithPath: "/usr/bin/script"))
        }
        let escape = UInt8(0x1B)
        let binary = try await onTerminal([server.url("bytes/300").absoluteString])
        #expect(binary.status == 0, "\(binary.stderr)")
        #expect(binary.text.contains("[binary body: 300 bytes, not shown on a terminal"), "\(binary.text)")
        #expect(!binary.stdout.contains(escape))
        let piped = try await CLI.run([server.url("bytes/300").absoluteString])
        #expect(Array(piped.stdout) == Pattern.bytes(300))
        // Text in the charset its Content-Type names is shown, in UTF-8; piped, its bytes as sent.
        let latin1 = try await onTerminal([server.url("latin1").absoluteString])
        #expect(latin1.status == 0 && latin1.text.contains("caf\u{E9} cr\u{E8}me"), "\(latin1.text)")
        #expect(!latin1.text.contains("[binary body"))
        let latin1Piped = try await CLI.run([server.url("latin1").absoluteString])
        #expect(Array(latin1Piped.stdout) == [0x63, 0x61, 0x66, 0xE9, 0x20, 0x63, 0x72, 0xE8, 0x6D, 0x65, 0x0A])

        // A text body and a header holding a terminal's set-title sequence.
        let faults = try await FaultServer.start()
        let escapes = "http://127.0.0.1:\(faults.port)/terminal-escapes"
        let verbose = try await onTerminal(["-v", escapes])
        #expect(verbose.status == 0, "\(verbose.text)")
        #expect(verbose.text.contains(#"X-Title: \u{1B}]0;pwned\u{7}"#), "\(verbose.text)")
        #expect(verbose.text.contains("[binary body: 18 bytes"), "\(verbose.text)")
        #expect(!verbose.stdout.contains(escape))
        let json = try await onTerminal([escapes + "?json"])
        #expect(json.text.contains("[binary body:"), "\(json.text)")
        #expect(!json.stdout.contains(Data("\u{9B}".utf8)))
        let pipedEscapes = try await CLI.run([escapes])
        #expect(pipedEscapes.text == "title: \u{1B}]0;pwned\u{07}\n")
        try await faults.stop()
    }

    @Test("WATTLE_BASE_URL, WATTLE_PASSWORD, WATTLE_REFRESH_PATH and WATTLE_LOG_LEVEL stand in for options")
    func environmentVariables() async throws {
        let server = try await Servers.plain.value
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        // The default keychain, in a throw-away data folder; every request below is a plain one
        // (no option), which skips ArgumentParser.
        let environment = ["WATTLE_BASE_URL": server.baseURL.absoluteString, "XDG_DATA_HOME": folder.path]

        let echo = try await CLI.run(["echo", "q==1"], environment: environment)
        #expect(echo.status == 0, "\(echo.stderr)")
        #expect(try JSONDecoder().decode(Echo.self, from: echo.stdout).query == "q=1")
        #expect(echo.stderr.isEmpty)

        let withPassword = environment.merging(["WATTLE_PASSWORD": "wattle"]) { $1 }
        let login = try await CLI.run(["auth", "login", "api/login", "--username", "demo"], environment: withPassword)
        #expect(login.status == 0, "\(login.stderr)")
        let whoami = try await CLI.run(["api/whoami"], environment: environment)
        #expect(whoami.status == 0, "\(whoami.stderr)")
        #expect(whoami.text.contains("demo"))

        server.api.expireAccessTokens()
        let before = server.stats.hits("/api/refresh")
        let refreshAndLog = ["WATTLE_REFRESH_PATH": "api/refresh", "WATTLE_LOG_LEVEL": "debug"]
        let withRefresh = environment.merging(refreshAndLog) { $1 }
        let refreshed = try await CLI.run(["api/whoami"], environment: withRefresh)
        #expect(refreshed.status == 0, "\(refreshed.stderr)")
        #expect(server.stats.hits("/api/refresh") == before + 1)
        #expect(refreshed.stderr.contains("token refreshed"), "\(refreshed.stderr)")
        let logLine = "GET \(server.url("api/whoami").absoluteString) -> 200"
        #expect(refreshed.stderr.contains(logLine), "\(refreshed.stderr)")
    }

    @Test("wattle demo runs the whole story and reports every step ok")
    func demo() async throws {
        let result = try await CLI.run(["demo", "--token-lifetime", "1"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.text.contains("automatic refresh after expiry: ok"))
        #expect(result.text.contains("unlisted self-signed host refused: ok"))
        #expect(result.text.contains("dropped download resumed where it stopped: ok"))
        #expect(result.text.contains("a service's own token by client credentials: ok"))
        #expect(!result.text.contains("FAILED"))
    }

    @Test("demo and serve run in wattle-demo beside wattle (options pass through); without it, a clear error")
    func demoLauncher() async throws {
        let help = try await CLI.run(["serve", "--help"])
        #expect(help.status == 0, "\(help.stderr)")
        #expect(help.text.contains("wattle-demo serve") && help.text.contains("--token-lifetime"))
        // A bad option is one line and exit 1, as for any other command (not ArgumentParser's 64).
        for bad in [["serve", "--port", "x"], ["demo", "--bogus"]] {
            let refused = try await CLI.run(bad)
            #expect(refused.status == 1, "\(bad): \(refused.stderr)")
            #expect(refused.stderr.hasPrefix("wattle: ") && refused.stderr.split(separator: "\n").count == 1)
        }
        // A wattle copied alone into a folder has no wattle-demo beside it.
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let lonely = folder.appendingPathComponent("wattle")
        try FileManager.default.copyItem(at: CLI.binary, to: lonely)
        let result = try await CLI.run(["demo"], binary: lonely)
        #expect(result.status == 1)
        #expect(
            result.stderr.contains("wattle-demo was not found beside wattle (\(folder.path)/wattle-demo)"),
            "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1)
    }

    @Test("the demo runs offline whatever the proxy variables say (a proxy that is not there, no no_proxy)")
    func demoIgnoresProxyVariables() async throws {
        let dead = "http://127.0.0.1:\(try DemoServerPort.free())"
        let result = try await CLI.run(
            ["demo"],
            environment: [
                "http_proxy": dead, "https_proxy": dead, "HTTPS_PROXY": dead, "all_proxy": dead, "no_proxy": "",
                "NO_PROXY": "",
            ])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.text.contains("API calls"), "\(result.text.suffix(300))")
    }
}

/// A free port on 127.0.0.1 (bound, then released): nothing listens there.
enum DemoServerPort {
    static func free() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
