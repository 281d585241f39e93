import Crypto
import Foundation
import TestProxies
import Testing
import WattleDemoServer

/// Bodies from files, standard input and forms, and `--proxy`: the `wattle` binary against the
/// demo server's `/echo`, which answers with the bytes it received.
@Suite("The wattle CLI: bodies from files, stdin and forms; --proxy", .serialized)
struct CLIBodyTests {
    /// A folder with the files the items name: text with quotes and a newline, JSON, and 300
    /// bytes that are not UTF-8.
    struct Files {
        let folder: URL
        let text = "hello \"world\"\nline 2 é"
        let json = "{\"a\": [1, 2], \"b\": null}\n"
        let binary = Data((0..<300).map { UInt8(($0 * 7 + 0x80) % 256) })

        init() throws {
            folder = try temporaryFolder()
            try Data(text.utf8).write(to: path("note.txt"))
            try Data(json.utf8).write(to: path("data.json"))
            try binary.write(to: path("blob.bin"))
            try Data("not json".utf8).write(to: path("bad.json"))
            try Data([0xEF, 0xBB, 0xBF] + Array(json.utf8)).write(to: path("bom.json"))
        }

        func path(_ name: String) -> URL { folder.appendingPathComponent(name) }
        func arg(_ name: String) -> String { path(name).path }
        func remove() { try? FileManager.default.removeItem(at: folder) }
    }

    @Test("name=@file and name:=@file embed a file's text and JSON; @file sends it whole, typed by its extension")
    func fileItems() async throws {
        let server = try await Servers.plain.value
        let files = try Files()
        defer { files.remove() }
        let url = server.url("echo").absoluteString

        let embedded = try await CLI.run([
            url, "note=@" + files.arg("note.txt"), "data:=@" + files.arg("data.json"), "n:=1", #"at=\@home"#,
            "bom:=@" + files.arg("bom.json"),
        ])
        #expect(embedded.status == 0, "\(embedded.stderr)")
        let echo = try JSONDecoder().decode(Echo.self, from: embedded.stdout)
        #expect(echo.method == "POST")
        #expect(echo.header("Content-Type") == "application/json")
        let object = try JSONSerialization.jsonObject(with: echo.bodyData) as? [String: Any]
        #expect(object?["note"] as? String == files.text)
        #expect((object?["data"] as? [String: Any])?["a"] as? [Int] == [1, 2])
        #expect(object?["n"] as? Int == 1)
        // The JSON file's own text, without its last newline, in the order given.
        // A byte order mark before a JSON file's text is dropped.
        #expect(
            echo.body
                == #"{"note":"hello \"world\"\nline 2 é","data":{"a": [1, 2], "b": null},"n":1,"at":"@home","bom":{"a": [1, 2], "b": null}}"#
        )

        let whole = try await CLI.run(["PUT", url, "@" + files.arg("data.json")])
        #expect(whole.status == 0, "\(whole.stderr)")
        let wholeEcho = try JSONDecoder().decode(Echo.self, from: whole.stdout)
        #expect(wholeEcho.method == "PUT")
        #expect(wholeEcho.bodyData == Data(files.json.utf8))
        #expect(wholeEcho.header("Content-Type") == "application/json")

        let binary = try await CLI.run([url, "@" + files.arg("blob.bin"), "X-Trace:1"])
        #expect(binary.status == 0, "\(binary.stderr)")
        let binaryEcho = try JSONDecoder().decode(Echo.self, from: binary.stdout)
        #expect(binaryEcho.method == "POST", "a body makes the method POST")
        #expect(binaryEcho.bodyData == files.binary, "the bytes arrive as they are on disk")
        #expect(binaryEcho.header("Content-Type") == "application/octet-stream")

        // A Content-Type header item wins over the one the file name suggests.
        let typed = try await CLI.run([url, "@" + files.arg("note.txt"), "Content-Type:text/markdown"])
        #expect(typed.status == 0, "\(typed.stderr)")
        let typedEcho = try JSONDecoder().decode(Echo.self, from: typed.stdout)
        #expect(typedEcho.headers.filter { $0[0].lowercased() == "content-type" }.map { $0[1] } == ["text/markdown"])
        #expect(typedEcho.body == files.text)
    }

    @Test("a repeated JSON field name is sent once, its last value in its first place (httpie); a form keeps each")
    func repeatedFieldNames() async throws {
        let server = try await Servers.plain.value
        let url = server.url("echo").absoluteString

        let json = try await CLI.run([url, "a=1", "b=2", "a:=3", "c:=[1]", "c=x"])
        #expect(json.status == 0, "\(json.stderr)")
        #expect(try JSONDecoder().decode(Echo.self, from: json.stdout).body == #"{"a":3,"b":"2","c":"x"}"#)

        // Names that are canonically equivalent but different bytes are different JSON names.
        let composed = try await CLI.run([url, "\u{E9}=1", "e\u{301}=2"])
        #expect(composed.status == 0, "\(composed.stderr)")
        #expect(
            try JSONDecoder().decode(Echo.self, from: composed.stdout).body == "{\"\u{E9}\":\"1\",\"e\u{301}\":\"2\"}")

        let form = try await CLI.run(["--form", url, "a=1", "a=2", "b=3"])
        #expect(form.status == 0, "\(form.stderr)")
        #expect(try JSONDecoder().decode(Echo.self, from: form.stdout).body == "a=1&a=2&b=3")
    }

    @Test("a file that cannot be used fails before anything is sent: exit 1, one line naming it")
    func unusableFiles() async throws {
        let server = try await Servers.plain.value
        let files = try Files()
        defer { files.remove() }
        let url = server.url("echo").absoluteString
        let cases: [([String], String)] = [
            (
                ["a=@" + files.arg("missing.txt")],
                "cannot read \"\(files.arg("missing.txt"))\": No such file or directory"
            ),
            (["@" + files.folder.path], "it is a folder"),
            (["a:=@" + files.arg("bad.json")], "a:=@\(files.arg("bad.json")): the file is not valid JSON"),
            (["ids:=[1,2,]"], "the value of ids:= is not valid JSON: [1,2,]"),
            (["a=@" + files.arg("blob.bin")], "the file is not UTF-8 text"),
            (["up@" + files.arg("note.txt")], "uploads a file: it needs --form (-f)"),
            (["a=1", "@" + files.arg("note.txt")], "cannot be mixed with body fields"),
            (["@" + files.arg("note.txt"), "@" + files.arg("data.json")], "only one @file can be the body"),
            (["-f", "a:=1"], "a:= is a JSON field: not with --form"),
            (["@"], "\"@\" needs a file name"),
        ]
        for (items, message) in cases {
            let result = try await CLI.run([url] + items)
            #expect(result.status == 1, "\(items): \(result.stderr)")
            #expect(result.stderr.contains(message), "\(items): \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(items): \(result.stderr)")
            #expect(result.stdout.isEmpty, "\(items): something was sent")
        }
    }

    @Test("standard input: @- reads it; POST, PUT and PATCH read a redirected one; GET and --ignore-stdin do not")
    func standardInput() async throws {
        let server = try await Servers.plain.value
        let files = try Files()
        defer { files.remove() }
        let url = server.url("echo").absoluteString
        func echo(_ arguments: [String], _ input: CLI.Input) async throws -> Echo {
            let result = try await CLI.run(arguments, input: input)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
            return try JSONDecoder().decode(Echo.self, from: result.stdout)
        }

        let piped = try await echo([url, "@-"], .pipe(files.binary))
        #expect(piped.method == "POST")
        #expect(piped.bodyData == files.binary)
        #expect(piped.header("Content-Type") == "application/octet-stream")

        // `wattle PUT URL < data.json`, and `… | wattle PATCH URL`: JSON is sent as JSON.
        let redirected = try await echo(["PUT", url], .file(files.path("data.json")))
        #expect(redirected.bodyData == Data(files.json.utf8))
        #expect(redirected.header("Content-Type") == "application/json")
        let patched = try await echo(["PATCH", url], .pipe(Data(files.json.utf8)))
        #expect(patched.method == "PATCH")
        #expect(patched.bodyData == Data(files.json.utf8))
        // A byte order mark before JSON is dropped (JSON text has none); before other bytes it stays.
        let marked = try await echo(["PUT", url], .pipe(Data([0xEF, 0xBB, 0xBF] + Array(files.json.utf8))))
        #expect(marked.bodyData == Data(files.json.utf8))
        #expect(marked.header("Content-Type") == "application/json")
        let markedText = try await echo(["PUT", url], .pipe(Data([0xEF, 0xBB, 0xBF] + Array("not json".utf8))))
        #expect(markedText.bodyData == Data([0xEF, 0xBB, 0xBF] + Array("not json".utf8)))
        #expect(markedText.header("Content-Type") == "application/octet-stream")

        // Not read: a GET, the method left to default, --ignore-stdin, body items given, or no
        // redirection at all (/dev/null is a device).
        for (arguments, input) in [
            (["GET", url], CLI.Input.file(files.path("data.json"))),
            ([url], .file(files.path("data.json"))),
            (["POST", url, "--ignore-stdin"], .file(files.path("data.json"))),
            (["POST", url], .none),
            (["POST", url], .pipe(Data())),
        ] {
            let result = try await echo(arguments, input)
            #expect(result.bodyData.isEmpty, "\(arguments) read standard input")
            #expect(result.header("Content-Type") == nil, "\(arguments): a body was sent")
        }
        // A body on standard input and body items: refused, as httpie does, nothing sent;
        // --ignore-stdin sends the items. An empty pipe is no body.
        for input in [CLI.Input.file(files.path("data.json")), .pipe(Data(files.json.utf8))] {
            for arguments in [["POST", url, "a=1"], [url, "a=1"]] {
                let mixed = try await CLI.run(arguments, input: input)
                #expect(mixed.status == 1 && mixed.stderr.contains("--ignore-stdin"), "\(arguments): \(mixed.stderr)")
                #expect(mixed.stdout.isEmpty)
            }
        }
        let fields = try await echo(["POST", url, "a=1", "--ignore-stdin"], .file(files.path("data.json")))
        #expect(fields.body == #"{"a":"1"}"#)
        let emptyPipe = try await echo(["POST", url, "a=2"], .pipe(Data()))
        #expect(emptyPipe.body == #"{"a":"2"}"#)
        // With --form, standard input is the form, already encoded.
        let form = try await echo(["-f", "POST", url], .pipe(Data("a=1&b=2".utf8)))
        #expect(form.body == "a=1&b=2" && form.header("Content-Type") == "application/x-www-form-urlencoded")
    }

    @Test(
        "--form: fields URL-encoded; with name@file, multipart with the file's name, type (or ;type=) and exact bytes")
    func forms() async throws {
        let server = try await Servers.plain.value
        let files = try Files()
        defer { files.remove() }
        let url = server.url("echo").absoluteString

        let encoded = try await CLI.run(["-f", url, "name=Ada Lovelace", "q=a&b=c", "note=@" + files.arg("note.txt")])
        #expect(encoded.status == 0, "\(encoded.stderr)")
        let encodedEcho = try JSONDecoder().decode(Echo.self, from: encoded.stdout)
        #expect(encodedEcho.method == "POST")
        #expect(encodedEcho.header("Content-Type") == "application/x-www-form-urlencoded")
        #expect(
            encodedEcho.body
                == "name=Ada%20Lovelace&q=a%26b%3Dc&note=hello%20%22world%22%0Aline%202%20%C3%A9")

        let multipart = try await CLI.run([
            "--form", "PUT", url, "title=Koala", "photo@" + files.arg("blob.bin"), "doc@" + files.arg("data.json"),
        ])
        #expect(multipart.status == 0, "\(multipart.stderr)")
        let echo = try JSONDecoder().decode(Echo.self, from: multipart.stdout)
        #expect(echo.method == "PUT")
        let type = try #require(echo.header("Content-Type"))
        #expect(type.hasPrefix("multipart/form-data; boundary="))
        let boundary = String(type.dropFirst("multipart/form-data; boundary=".count))
        let parts = MultipartForm.parts(of: echo.bodyData, boundary: boundary)
        #expect(parts.count == 3)
        #expect(parts.first?.head == #"Content-Disposition: form-data; name="title""#)
        #expect(parts.first?.body == Data("Koala".utf8))
        #expect(
            parts.dropFirst().first?.head == """
                Content-Disposition: form-data; name="photo"; filename="blob.bin"\r
                Content-Type: application/octet-stream
                """)
        #expect(parts.dropFirst().first?.body == files.binary)
        #expect(parts.last?.head.contains(#"name="doc"; filename="data.json""#) == true)
        #expect(parts.last?.head.contains("Content-Type: application/json") == true)
        #expect(parts.last?.body == Data(files.json.utf8))

        // httpie's name@file;type=MIME gives the part's type; a bad one is refused unsent.
        let typed = try await CLI.run(["-f", url, "doc@" + files.arg("note.txt") + ";type=text/csv"])
        #expect(typed.status == 0, "\(typed.stderr)")
        let typedEcho = try JSONDecoder().decode(Echo.self, from: typed.stdout)
        let typedBoundary = String(
            try #require(typedEcho.header("Content-Type")).dropFirst("multipart/form-data; boundary=".count))
        let typedPart = try #require(MultipartForm.parts(of: typedEcho.bodyData, boundary: typedBoundary).first)
        #expect(typedPart.head.hasSuffix("filename=\"note.txt\"\r\nContent-Type: text/csv"), "\(typedPart.head)")
        // From standard input too: the pipe is the part's body, not a second body.
        let piped = try await CLI.run(["-f", url, "doc@-;type=text/csv"], input: .pipe(Data("a,b\n".utf8)))
        #expect(piped.status == 0, "\(piped.stderr)")
        let pipedEcho = try JSONDecoder().decode(Echo.self, from: piped.stdout)
        let pipedBoundary = String(
            try #require(pipedEcho.header("Content-Type")).dropFirst("multipart/form-data; boundary=".count))
        let pipedPart = try #require(MultipartForm.parts(of: pipedEcho.bodyData, boundary: pipedBoundary).first)
        #expect(pipedPart.head.hasSuffix("Content-Type: text/csv") && pipedPart.body == Data("a,b\n".utf8))
        let badType = try await CLI.run(["-f", url, "doc@" + files.arg("note.txt") + ";type=csv"])
        #expect(badType.status == 1 && badType.stderr.contains("not a media type"), "\(badType.stderr)")
    }

    @Test("--proxy sends through that proxy even when no_proxy and http_proxy say otherwise; its password never shows")
    func proxyOption() async throws {
        let server = try await Servers.plain.value
        let proxy = try LocalProxy.tinyproxy(credentials: ("wattle", "pr0xy-s3cret"))
        defer { proxy.stop() }
        let url = server.url("echo").absoluteString
        let dead = "http://127.0.0.1:\(try DemoServerPort.free())"
        // no_proxy lists the server, http_proxy names a proxy that is not there: a configured
        // proxy ignores both (CURLOPT_NOPROXY "").
        let environment = ["no_proxy": "*", "NO_PROXY": "*", "http_proxy": dead]

        let result = try await CLI.run(
            ["--proxy", proxy.url(user: "wattle", password: "pr0xy-s3cret"), url, "a=1"], environment: environment)
        #expect(result.status == 0, "\(result.stderr)")
        let echo = try JSONDecoder().decode(Echo.self, from: result.stdout)
        #expect(echo.header("Via")?.contains(LocalProxy.viaName) == true, "the request did not pass the proxy")
        #expect(echo.header("Proxy-Authorization") == nil, "the proxy's credentials went on to the server")
        #expect(proxy.requestLines().contains { $0.hasPrefix("POST \(url) ") }, "\(proxy.requestLines())")

        // --proxy "" (or --proxy=): no proxy at all, whatever http_proxy says.
        for option in [["--proxy", ""], ["--proxy="]] {
            let direct = try await CLI.run(option + [url], environment: environment)
            #expect(direct.status == 0, "\(option): \(direct.stderr)")
            #expect(try JSONDecoder().decode(Echo.self, from: direct.stdout).header("Via") == nil)
        }

        // Wrong password, a proxy that is not there, a URL that is not a proxy's: the right exit
        // code and one line, never the password.
        let cases: [(String, Int32, String)] = [
            // tinyproxy refuses a plain-http request with 401 (not 407): the proxy's answer.
            (proxy.url(user: "wattle", password: "wr0ng-s3cret"), 4, "HTTP 401"),
            ("http://wattle:pr0xy-s3cret@127.0.0.1:\(try DemoServerPort.free())", 2, "cannot reach it"),
            ("http://wattle:pr0xy-s3cret@127.0.0.1:3128/path", 1, "not a usable proxy URL"),
        ]
        for (proxyURL, status, message) in cases {
            let failed = try await CLI.run(["-v", "--proxy", proxyURL, url], environment: environment)
            #expect(failed.status == status, "\(failed.stderr)")
            #expect(failed.stderr.contains(message), "\(failed.stderr)")
            #expect(!failed.stderr.contains("s3cret") && !failed.text.contains("s3cret"), "\(failed.stderr)")
        }
    }

    @Test("@file streams a 64 MB file: it arrives whole, from a process that stays under 50 MB")
    func streamedUpload() async throws {
        let server = try await Servers.plain.value
        let files = try Files()
        defer { files.remove() }
        let size = 64 * 1024 * 1024
        var bytes = [UInt8](repeating: 0, count: size)
        for index in 0..<size { bytes[index] = UInt8(truncatingIfNeeded: index &* 2_654_435_761 >> 13) }
        try Data(bytes).write(to: files.path("big.bin"))
        let expected = SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
        bytes = []

        let result = try await CLI.run(
            ["PUT", server.url("digest").absoluteString, "@" + files.arg("big.bin")],
            wrapper: ["/usr/bin/time", "-f", "maxrss=%M"])
        #expect(result.status == 0, "\(result.stderr)")
        struct Digest: Decodable {
            var method: String
            var length: Int
            var sha256: String
            var contentType: String
        }
        let digest = try JSONDecoder().decode(Digest.self, from: result.stdout)
        #expect(digest.method == "PUT" && digest.length == size && digest.sha256 == expected)
        #expect(digest.contentType == "application/octet-stream")
        let peakKilobytes = result.stderr.split(separator: "\n").compactMap { line in
            line.hasPrefix("maxrss=") ? Int(line.dropFirst(7)) : nil
        }.first
        // Read whole, the file alone would be 64 MB, and libcurl's copy of it as much again.
        #expect((peakKilobytes ?? .max) < 50 * 1024, "peak RSS \(peakKilobytes ?? -1) KB")
    }

    @Test("--form name@file streams the file: a 48 MB upload arrives whole in a form, in bounded memory")
    func streamedUploadOfAFormFile() async throws {
        let server = try await Servers.plain.value
        let files = try Files()
        defer { files.remove() }
        let size = 48 * 1024 * 1024
        var bytes = [UInt8](repeating: 0, count: size)
        for index in 0..<size { bytes[index] = UInt8(truncatingIfNeeded: index &* 2_654_435_761 >> 11) }
        try Data(bytes).write(to: files.path("video.mp4"))

        let result = try await CLI.run(
            ["--form", "POST", server.url("digest").absoluteString, "title=Koala", "video@" + files.arg("video.mp4")],
            wrapper: ["/usr/bin/time", "-f", "maxrss=%M"])
        #expect(result.status == 0, "\(result.stderr)")
        struct Digest: Decodable {
            var length: Int
            var sha256: String
            var contentType: String
        }
        let digest = try JSONDecoder().decode(Digest.self, from: result.stdout)
        #expect(digest.contentType.hasPrefix("multipart/form-data; boundary="))
        let boundary = String(digest.contentType.dropFirst("multipart/form-data; boundary=".count))
        // The form the server should have received, hashed without building it whole.
        var hasher = SHA256()
        let head =
            "--\(boundary)\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nKoala\r\n"
            + "--\(boundary)\r\nContent-Disposition: form-data; name=\"video\"; filename=\"video.mp4\"\r\n"
            + "Content-Type: video/mp4\r\n\r\n"
        let tail = "\r\n--\(boundary)--\r\n"
        hasher.update(data: Data(head.utf8))
        hasher.update(data: bytes)
        hasher.update(data: Data(tail.utf8))
        bytes = []
        let expected = hasher.finalize().map { String(format: "%02x", $0) }.joined()
        #expect(digest.length == head.utf8.count + size + tail.utf8.count)
        #expect(digest.sha256 == expected)
        let peakKilobytes = result.stderr.split(separator: "\n").compactMap { line in
            line.hasPrefix("maxrss=") ? Int(line.dropFirst(7)) : nil
        }.first
        // Read whole, the file would be 48 MB, the form built from it as much, and libcurl's copy
        // of that as much again.
        #expect((peakKilobytes ?? .max) < 50 * 1024, "peak RSS \(peakKilobytes ?? -1) KB")
    }
}
