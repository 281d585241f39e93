import Foundation
import TestProxies
import Testing
import WattleDemoServer

/// `wattle --print WHAT` (`-p`) and `--offline`, as httpie's: which parts of the exchange go to
/// standard output, and a request printed without being sent.
@Suite("The wattle CLI: --print chooses what is printed, --offline sends nothing")
struct CLIPrintTests {
    @Test("--offline prints the request as the session would send it, and nothing reaches the server")
    func offlinePrintsTheRequest() async throws {
        let server = try await DemoServer.start()
        let url = server.url("echo").absoluteString
        let result = try await CLI.run(["--offline", "POST", url, "a=b", "n:=3", "X-Trace:abc"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.text.hasPrefix("POST \(url)\nX-Trace: abc\nAccept: application/json, */*;q=0.5\n"), "\(result.text)")
        // What the session adds: its user agent, the body's type.
        #expect(result.text.contains("\nUser-Agent: Wattle/"), "\(result.text)")
        #expect(result.text.contains("\nContent-Type: application/json\n"), "\(result.text)")
        #expect(result.text.hasSuffix("\n\n{\"a\":\"b\",\"n\":3}\n\n"), "\(result.text)")
        #expect(server.stats.connectionCount == 0 && server.stats.totalRequests == 0)
        try await server.stop()

        // Nothing listens there: a request sent would fail with exit 2.
        let closed = try await CLI.run(["--offline", "http://127.0.0.1:\(try SilentServer.refusedPort())/x"])
        #expect(closed.status == 0 && closed.text.hasPrefix("GET http://127.0.0.1:"), "\(closed.stderr)")
    }

    @Test("--offline shows -a's credentials redacted, a file's bytes as a note, and --print H or B alone")
    func offlineParts() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("upload.bin")
        try Data([0, 1, 2, 0xFF, 9]).write(to: file)
        let url = "http://127.0.0.1:\(try SilentServer.refusedPort())/up"

        let form = try await CLI.run([
            "--offline", "-a", "alice:s3cret", "--form", "POST", url, "a=b", "f@\(file.path)",
        ])
        #expect(form.status == 0, "\(form.stderr)")
        #expect(form.text.contains("Authorization: <redacted>"), "\(form.text)")
        #expect(!form.text.contains("s3cret") && !form.text.contains("YWxpY2U6czNjcmV0"), "\(form.text)")
        #expect(form.text.contains("Content-Type: multipart/form-data; boundary="), "\(form.text)")
        #expect(form.text.contains("name=\"a\"\r\n\r\nb\r\n"), "\(form.text)")
        #expect(form.text.contains("filename=\"upload.bin\""), "\(form.text)")
        #expect(form.text.contains("[the contents of \(file.path) (5 bytes)]\r\n--"), "\(form.text)")
        #expect(!form.stdout.contains(0xFF))

        let head = try await CLI.run(["--offline", "-p", "H", "PUT", url, "a=b"])
        #expect(head.status == 0 && head.text.hasPrefix("PUT \(url)\n"), "\(head.stderr)")
        #expect(head.text.hasSuffix("\n\n") && !head.text.contains("{\"a\""), "\(head.text)")
        let body = try await CLI.run(["--offline", "-p", "B", "PUT", url, "a=b"])
        #expect(body.status == 0 && body.text == "{\"a\":\"b\"}\n\n", "\(body.text)")
    }

    @Test("--print h prints the status line and headers alone, with the exit status of the answer")
    func responseHeadOnly() async throws {
        let server = try await Servers.plain.value
        let ok = try await CLI.run(["-p", "h", server.url("user").absoluteString])
        #expect(ok.status == 0, "\(ok.stderr)")
        #expect(ok.text.hasPrefix("HTTP/1.1 200\n") && ok.text.contains("Content-Type: application/json\n"))
        #expect(!ok.text.contains("{"), "no body: \(ok.text)")
        let missing = try await CLI.run(["-p", "h", server.url("nothing-here").absoluteString])
        #expect(missing.status == 4 && missing.text.hasPrefix("HTTP/1.1 404\n"), "\(missing.text)")
        #expect(!missing.text.contains("{"), "\(missing.text)")
        #expect(missing.stderr.contains("HTTP 404"), "\(missing.stderr)")
        // A HEAD request's head is what --print h shows; --print b shows nothing of it.
        let head = try await CLI.run(["-p", "h", "HEAD", server.url("user").absoluteString])
        #expect(head.status == 0 && head.text.hasPrefix("HTTP/1.1 200\n"), "\(head.text)")
        let headBody = try await CLI.run(["-p", "b", "HEAD", server.url("user").absoluteString])
        #expect(headBody.status == 0 && headBody.text.isEmpty, "\(headBody.text)")
    }

    @Test("--print hb prints the head, a blank line and the body; Hh the request's head then the response's")
    func severalParts() async throws {
        let server = try await Servers.plain.value
        let url = server.url("user").absoluteString
        let both = try await CLI.run(["-p", "hb", url])
        #expect(both.status == 0, "\(both.stderr)")
        let parts = both.text.components(separatedBy: "\n\n")
        #expect(parts.count == 2 && parts[0].hasPrefix("HTTP/1.1 200\n") && parts[1].hasPrefix("{"), "\(both.text)")

        let heads = try await CLI.run(["-p", "Hh", url, "X-Trace:abc"])
        #expect(heads.status == 0, "\(heads.stderr)")
        #expect(heads.text.hasPrefix("GET \(url)\nX-Trace: abc\n"), "\(heads.text)")
        let request = try #require(heads.text.range(of: "X-Trace: abc"))
        let response = try #require(heads.text.range(of: "HTTP/1.1 200\n"))
        #expect(request.upperBound < response.lowerBound)
        #expect(!heads.text.contains("{"), "\(heads.text)")

        let sent = try await CLI.run(["-p", "B", "POST", server.url("echo").absoluteString, "a=b"])
        #expect(sent.status == 0 && sent.text == "{\"a\":\"b\"}\n\n", "\(sent.text)")
    }

    @Test(
        "--print HB shows the request asked for, once: not the session's refresh call, whose body holds the refresh token"
    )
    func printsOnlyTheRequestAskedFor() async throws {
        let server = try await DemoServer.start()
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let keychain = folder.appendingPathComponent("cli.keychain").path
        let common = ["--keychain", keychain, "--base-url", server.baseURL.absoluteString]
        /// Keeps newly issued tokens, expired: the next request refreshes before it is sent.
        func keepExpiredTokens() async throws -> (access: String, refresh: String) {
            let issued = server.api.issueTokens()
            let kept = try await CLI.run(
                ["auth", "set-token", "-", "--refresh-token", "-", "--expires-in=-1"] + common,
                input: .pipe(Data("\(issued.access)\n\(issued.refresh)\n".utf8)))
            #expect(kept.status == 0, "\(kept.stderr)")
            return issued
        }
        let issued = try await keepExpiredTokens()
        let result = try await CLI.run(
            ["-p", "HB", "POST", "echo", "a=b", "--refresh-path", "api/refresh"] + common)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(server.stats.hits("/api/refresh") == 1)
        #expect(!result.text.contains(issued.refresh), "\(result.text)")
        #expect(!result.text.contains("api/refresh") && !result.text.contains("refresh_token"), "\(result.text)")
        #expect(
            result.text.components(separatedBy: "POST \(server.url("echo").absoluteString)").count == 2,
            "\(result.text)")
        #expect(result.text.hasSuffix("{\"a\":\"b\"}\n\n"), "\(result.text)")

        // A request like the session's refresh call (same method and URL): its own body is shown,
        // not the session's refresh call before it.
        let again = try await keepExpiredTokens()
        let lookalike = try await CLI.run(
            ["-p", "B", "POST", "api/refresh", "refresh_token=mine", "--refresh-path", "api/refresh"] + common)
        #expect(lookalike.text == "{\"refresh_token\":\"mine\"}\n\n", "\(lookalike.text)")
        #expect(!lookalike.text.contains(again.refresh))

        // --offline reads nothing from the keychain: with its key file gone it still prints.
        try FileManager.default.removeItem(atPath: keychain + ".key")
        let sent = try await CLI.run(["api/whoami"] + common)
        #expect(sent.status == 1, "the keychain cannot be opened: \(sent.stderr)")
        let offline = try await CLI.run(["--offline", "api/whoami"] + common)
        #expect(offline.status == 0, "\(offline.stderr)")
        #expect(offline.text.hasPrefix("GET \(server.url("api/whoami").absoluteString)\n"), "\(offline.text)")
        #expect(!offline.text.contains("Authorization"), "\(offline.text)")
        try await server.stop()
    }

    @Test("--print H prints a request once, whether its URL spells the base URL's origin as the base URL does or not")
    func printedOnce() async throws {
        let server = try await Servers.plain.value
        let base = server.url("").absoluteString
        let spelled = base.replacingOccurrences(of: "http://", with: "HTTP://") + "echo"
        let result = try await CLI.run(["-p", "H", spelled, "--base-url", base])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.text.components(separatedBy: "GET ").count == 2, "\(result.text)")
    }

    @Test("--offline checks the certificate and client options as a sent request does, and reads none of them")
    func offlineOptions() async throws {
        let url = "http://127.0.0.1:\(try SilentServer.refusedPort())/x"
        // Files that do not exist, a secret not set: nothing is read.
        let cert = try await CLI.run([
            "--offline", "--cert", "/nonexistent/c.pem", "--cert-key", "/nonexistent/k.pem", url,
        ])
        #expect(cert.status == 0, "\(cert.stderr)")
        let client = try await CLI.run(
            ["--offline", "--token-path", "oauth/token", "--client-id", "c", url],
            environment: ["WATTLE_CLIENT_SECRET": ""])
        #expect(client.status == 0, "\(client.stderr)")
        let wrongKey = try await CLI.run(["--offline", "--cert-name", "n", "--cert-key", "/nonexistent/k.pem", url])
        #expect(wrongKey.status == 1 && wrongKey.stderr.contains("--cert-key goes with --cert, not --cert-name"))
        let scope = try await CLI.run(["--offline", "--scope", "read", url])
        #expect(scope.status == 1 && scope.stderr.contains("--client-id and --scope go with --token-path"))
    }

    @Test("--print h with -o: the head on stdout, the body in the file")
    func headWithOutputFile() async throws {
        let server = try await Servers.plain.value
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("user.json")
        let result = try await CLI.run(["-p", "h", "-o", file.path, server.url("user").absoluteString])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.text.hasPrefix("HTTP/1.1 200\n") && !result.text.contains("{"), "\(result.text)")
        #expect(try Data(contentsOf: file).first == UInt8(ascii: "{"))
    }

    @Test("--offline on a terminal shows a JSON body pretty, and a binary body as a note")
    func offlineOnATerminal() async throws {
        let url = "http://127.0.0.1:\(try SilentServer.refusedPort())/x"
        let json = try await CLI.runOnTerminal(["--offline", "POST", url, "name=alice"])
        #expect(json.status == 0, "\(json.screen)")
        #expect(json.screen.contains("\"name\""), "\(json.screen)")
        #expect(json.screen.contains("alice"), "\(json.screen)")
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("bytes")
        try Data([0x1B, 0x5D, 0x30, 0x3B, 0x78, 0x07]).write(to: file)
        let binary = try await CLI.runOnTerminal([
            "--offline", "POST", url, "Content-Type:application/octet-stream", "@\(file.path)",
        ])
        #expect(binary.status == 0, "\(binary.screen)")
        #expect(binary.screen.contains("[the contents of \(file.path) (6 bytes)]"), "\(binary.screen)")
        #expect(!binary.screen.contains("\u{1B}]0;"), "\(binary.screen)")
    }

    @Test("--print and --offline refuse what they cannot do, before anything is sent")
    func usageErrors() async throws {
        let url = "http://127.0.0.1:\(try SilentServer.refusedPort())/x"
        let cases: [([String], String)] = [
            (["-p", "x", url], "\"x\" is not one of H"),
            (["-p", "", url], "--print needs one or more"),
            (["-v", "-p", "h", url], "give one of the two"),
            (["-v", "--offline", url], "give one of the two"),
            (["-p", "hb", "-o", "/tmp/wattle-never", url], "leave b out of --print with -o"),
            (["--offline", "-o", "/tmp/wattle-never", url], "--offline sends nothing"),
            (["--offline", "--session", "s", url], "--session's cookies"),
        ]
        for (arguments, message) in cases {
            let result = try await CLI.run(arguments)
            #expect(result.status == 1 && result.stderr.contains(message), "\(arguments): \(result.stderr)")
            #expect(result.text.isEmpty, "\(arguments): \(result.text)")
        }
        #expect(!FileManager.default.fileExists(atPath: "/tmp/wattle-never"))
    }
}
