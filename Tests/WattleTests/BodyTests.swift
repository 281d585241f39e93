import Foundation
import Testing
import Wattle
import WattleDemoServer

@Suite("Request bodies arrive encoded as asked, with their content type")
struct BodyTests {
    struct NewUser: Codable, Equatable, Sendable {
        var name: String
        var tags: [String]
    }

    @Test("a JSON body from parameters keeps order, nests and escapes")
    func jsonParameters() async throws {
        let server = try await TestServer.shared()
        let body = RequestBody.json([
            "name": "Ada \"Countess\" Lovelace", "age": 36, "admin": false, "ratio": 0.5, "none": nil as String?,
            "nested": ["k": "v"] as Parameters, "list": [1, 2, 3],
        ])
        let echo = try await makeSession(server).send(Request("echo", method: .post, body: body)).decode(Echo.self)
        #expect(
            echo.body
                == #"{"name":"Ada \"Countess\" Lovelace","age":36,"admin":false,"ratio":0.5,"none":null,"nested":{"k":"v"},"list":[1,2,3]}"#
        )
        #expect(echo.header("Content-Type") == "application/json")
    }

    @Test("whole floating-point numbers go as JSONEncoder writes them (2, not 2.0), in a JSON body and a query")
    func wholeNumbers() async throws {
        let server = try await TestServer.shared()
        let session = makeSession(server)
        let parameters: Parameters = ["n": 2.0, "half": 0.5, "f": Float(3), "big": 1e20, "minus": -4.0]
        let json = try await session.send(Request("echo", method: .post, body: .json(parameters))).decode(Echo.self)
        #expect(json.body == #"{"n":2,"half":0.5,"f":3,"big":1e+20,"minus":-4}"#)
        // The same bytes as JSONEncoder's for the same numbers.
        let encoded = try JSONEncoder().encode([2.0, 0.5, 1e20, -4.0])
        #expect(String(decoding: encoded, as: UTF8.self) == "[2,0.5,1e+20,-4]")
        let query = try await session.get("echo", parameters: ["n": 2.0, "half": 0.5]).decode(Echo.self)
        #expect(query.query == "n=2&half=0.5")
    }

    @Test("json: with Data sends it as it is (JSON already serialized), not base64 in a JSON string")
    func jsonData() async throws {
        let server = try await TestServer.shared()
        let text = #"{"a":1}"#
        let echo = try await makeSession(server).post("echo", json: Data(text.utf8)).decode(Echo.self)
        #expect(echo.body == text && echo.header("Content-Type") == "application/json")
        // A String is a JSON string.
        let string = try await makeSession(server).post("echo", json: "koala").decode(Echo.self)
        #expect(string.body == #""koala""#)
    }

    @Test("an Encodable body round-trips through the server")
    func encodable() async throws {
        let server = try await TestServer.shared()
        let user = NewUser(name: "Ada", tags: ["math", "poetry"])
        let echo = try await makeSession(server).post("echo", json: user).decode(Echo.self)
        #expect(try JSONDecoder().decode(NewUser.self, from: Data(echo.body.utf8)) == user)
        #expect(echo.header("content-type") == "application/json")
    }

    @Test("a form body is percent-encoded with the form content type")
    func form() async throws {
        let server = try await TestServer.shared()
        let echo = try await makeSession(server).post(
            "echo", parameters: ["grant_type": "password", "user": "a b&c"], encoding: .form
        ).decode(Echo.self)
        #expect(echo.body == "grant_type=password&user=a%20b%26c")
        #expect(echo.header("Content-Type") == "application/x-www-form-urlencoded")
    }

    @Test("raw data is sent byte for byte, binary included")
    func rawData() async throws {
        let server = try await TestServer.shared()
        let bytes = Data((0..<256).map { UInt8($0) })
        let echo = try await makeSession(server).send(
            Request("echo", method: .put, body: .data(bytes, contentType: "application/x-test"))
        ).decode(Echo.self)
        #expect(echo.bodyLength == 256)
        #expect(echo.header("Content-Type") == "application/x-test")
    }

    @Test("a large body (5 MB) is sent whole, without Expect: 100-continue")
    func largeBody() async throws {
        let server = try await TestServer.shared()
        let bytes = Data(repeating: 0x61, count: 5 * 1024 * 1024)
        let echo = try await makeSession(server).send(Request("echo", method: .post, body: .data(bytes))).decode(
            Echo.self)
        #expect(echo.bodyLength == bytes.count)
        #expect(echo.header("Expect") == nil)
    }

    @Test("a POST, PUT or PATCH without a body sends Content-Length: 0; GET, DELETE, OPTIONS and others send no length")
    func emptyPost() async throws {
        let server = try await TestServer.shared()
        let session = makeSession(server)
        for method in [HTTPMethod.post, .put, .patch] {
            let echo = try await session.send(Request("echo", method: method)).decode(Echo.self)
            #expect(echo.method == method.rawValue)
            #expect(echo.header("Content-Length") == "0", "\(method)")
            #expect(echo.header("Content-Type") == nil, "\(method)")
            #expect(echo.bodyLength == 0)
        }
        // Methods whose content has no meaning say nothing of it.
        for method in [HTTPMethod.get, .delete, .options, "PURGE"] {
            let echo = try await session.send(Request("echo", method: method)).decode(Echo.self)
            #expect(echo.method == method.rawValue)
            #expect(echo.header("Content-Length") == nil, "\(method)")
            #expect(echo.header("Transfer-Encoding") == nil, "\(method)")
        }
    }

    @Test("a body's own content type wins over a default header's; the request's own wins over both")
    func contentTypePrecedence() async throws {
        let server = try await TestServer.shared()
        let session = makeSession(server) { $0.defaultHeaders["Content-Type"] = "application/json" }
        let multipart = RequestBody.multipart([.field("a", "b")], boundary: "XyZ")
        let framed = try await session.send(Request("echo", method: .post, body: multipart)).decode(Echo.self)
        #expect(framed.header("Content-Type") == "multipart/form-data; boundary=XyZ")
        let form = try await session.post("echo", parameters: ["a": "b"], encoding: .form).decode(Echo.self)
        #expect(form.header("Content-Type") == "application/x-www-form-urlencoded")
        let own = try await session.send(
            Request("echo", method: .put, headers: ["Content-Type": "image/png"], body: .data(Data([1])))
        ).decode(Echo.self)
        #expect(own.header("Content-Type") == "image/png")
        // A body without a type of its own (none) keeps the default's.
        let plain = try await session.send(Request("echo", method: .post)).decode(Echo.self)
        #expect(plain.header("Content-Type") == "application/json")
        #expect(framed.headers.filter { $0.first?.lowercased() == "content-type" }.count == 1)
        // A request's own multipart type without a boundary gets the body's; with one, it is its own.
        for (type, sent) in [
            ("multipart/form-data", "multipart/form-data; boundary=XyZ"),
            ("multipart/mixed; charset=utf-8;", "multipart/mixed; charset=utf-8; boundary=XyZ"),
            ("multipart/form-data; boundary=Other", "multipart/form-data; boundary=Other"),
        ] {
            let echo = try await session.send(
                Request("echo", method: .post, headers: ["Content-Type": type], body: multipart)
            ).decode(Echo.self)
            #expect(echo.header("Content-Type") == sent)
        }
    }

    @Test(
        "a request's Content-Length or Transfer-Encoding is not sent: the body frames itself, the connection stays in step"
    )
    func framingIsTheBodys() async throws {
        let server = try await TestServer.shared()
        let session = makeSession(server) {
            $0.defaultHeaders["Transfer-Encoding"] = "chunked"
            $0.willSend = { _ in ["content-length": "1"] }
        }
        let short = try await session.send(
            Request("echo", method: .post, headers: ["Content-Length": "2"], body: .text("hello"))
        ).decode(Echo.self)
        #expect(short.body == "hello")
        #expect(short.headerValues("Content-Length") == ["5"])
        #expect(short.header("Transfer-Encoding") == nil)
        // A GET claiming a body is answered at once, and the connection serves the next request.
        let get = try await session.send(Request("echo", headers: ["Content-Length": "5"], timeout: .seconds(10)))
        #expect(try get.decode(Echo.self).header("Content-Length") == nil)
        #expect(try await session.get("echo").decode(Echo.self).method == "GET")
    }

    @Test("a JSON value that cannot be encoded is refused with its path")
    func badJSON() async throws {
        let server = try await TestServer.shared()
        await expectWattleError({
            _ = try await makeSession(server).post("echo", parameters: ["outer": ["x": Double.nan] as Parameters])
        }) {
            if case .invalidRequest(let reason) = $0 { return reason.contains("outer.x") }
            return false
        }
        // Decimal's NaN too (its description, "NaN", is not JSON), in a body and in a query.
        await expectWattleError({
            _ = try await makeSession(server).post("echo", parameters: ["outer": ["x": Decimal.nan] as Parameters])
        }) {
            if case .invalidRequest(let reason) = $0 { return reason.contains("outer.x") }
            return false
        }
        await expectWattleError({ _ = try await makeSession(server).get("echo", parameters: ["x": Decimal.nan]) }) {
            if case .invalidRequest(let reason) = $0 { return reason.contains("\"x\" is not a finite number") }
            return false
        }
        // Through JSONEncoder, which writes Decimal.nan as a bare NaN (and refuses Double.nan).
        struct Price: Encodable {
            let label: String
            let amount: Decimal
        }
        await expectWattleError({
            _ = try await makeSession(server).post("echo", json: Price(label: "NaN \"NaN\"", amount: .nan))
        }) {
            if case .invalidRequest(let reason) = $0 { return reason.contains("Price") && reason.contains("NaN") }
            return false
        }
        // "NaN" inside strings is sent as it is.
        let named = try await makeSession(server).post("echo", json: Price(label: "NaN \"NaN\" \\", amount: 1))
        struct Sent: Decodable {
            let label: String
            let amount: Int
        }
        let sent = try JSONDecoder().decode(Sent.self, from: Data(try named.decode(Echo.self).body.utf8))
        #expect(sent.label == #"NaN "NaN" \"# && sent.amount == 1)
        let exact = try await makeSession(server).post("echo", parameters: ["x": Decimal(string: "12.345")!])
        #expect(try exact.decode(Echo.self).body == #"{"x":12.345}"#)
    }
}

@Suite("Multipart bodies")
struct MultipartTests {
    @Test(
        "fields and files are framed by the boundary, names quoted as browsers do, the content type carries the boundary"
    )
    func multipart() async throws {
        let server = try await TestServer.shared()
        let file = Data([0x00, 0xFF, 0x41, 0x0D, 0x0A])
        let body = RequestBody.multipart(
            [
                .field("title", "Holiday \"2026\""),
                .file("photo", filename: "koala\r\n.jpg", contentType: "image/jpeg", data: file),
                .file("a\"b", filename: "C:\\x\"y\r.txt", data: Data("z".utf8)),
                // A combining mark after the quote makes one Character that is not "\"".
                .field("x\"\u{301}; name=\"is_admin", "1"),
            ],
            boundary: "XyZ")
        let echo = try await makeSession(server).send(Request("echo", method: .post, body: body)).decode(Echo.self)
        #expect(echo.header("Content-Type") == "multipart/form-data; boundary=XyZ")
        #expect(echo.bodyLength == body.data.count)
        let expectedStart =
            "--XyZ\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nHoliday \"2026\"\r\n"
            + "--XyZ\r\nContent-Disposition: form-data; name=\"photo\"; filename=\"koala%0D%0A.jpg\"\r\nContent-Type: image/jpeg\r\n\r\n"
        #expect(body.data.starts(with: Data(expectedStart.utf8)))
        // `"`, CR and LF percent-encoded, a backslash as it is (the HTML standard's encoding).
        let third = #"--XyZ\#r\#nContent-Disposition: form-data; name="a%22b"; filename="C:\x%22y%0D.txt""#
        #expect(String(decoding: body.data, as: UTF8.self).contains(third))
        #expect(String(decoding: body.data, as: UTF8.self).contains("name=\"x%22\u{301}; name=%22is_admin\"\r\n"))
        #expect(body.data.suffix(9) == Data("--XyZ--\r\n".utf8))
    }

    @Test("a part's content type with a control character, or a boundary RFC 2046 refuses, fails the request unsent")
    func badPartTypeOrBoundary() async throws {
        let server = try await TestServer.shared()
        let session = makeSession(server)
        let data = Data("file".utf8)
        for body in [
            RequestBody.multipart([
                .file("photo", filename: "a.jpg", contentType: "image/jpeg\r\nContent-Disposition: x", data: data)
            ]),
            .multipart([.file("photo", filename: "a.jpg", contentType: "image/jpeg\r\n", data: data)]),
            .multipart([.file("photo", filename: "a.jpg", contentType: "image/jpeg\n", data: data)]),
            .multipart([.field("a", "b")], boundary: ""),
            .multipart([.field("a", "b")], boundary: String(repeating: "b", count: 71)),
            .multipart([.field("a", "b")], boundary: "semi;colon"),
            .multipart([.field("a", "b")], boundary: "ends in space "),
            // Refused even where a part holds it (it is not replaced by a fresh one).
            .multipart([.field("a", "x semi;colon y")], boundary: "semi;colon"),
        ] {
            let path = "echo/multipart-\(UUID().uuidString)"
            await expectWattleError({ _ = try await session.send(Request(path, method: .post, body: body)) }) {
                guard case .invalidRequest(let reason) = $0 else { return false }
                return reason.contains("multipart")
            }
            #expect(server.stats.hits("/" + path) == 0)
        }
        // A boundary with a space or a colon is allowed, and quoted in the header.
        let quoted = try await session.send(
            Request("echo", method: .post, body: .multipart([.field("a", "b")], boundary: "my: boundary"))
        ).decode(Echo.self)
        #expect(quoted.header("Content-Type") == "multipart/form-data; boundary=\"my: boundary\"")
        #expect(quoted.body.hasPrefix("--my: boundary\r\n"))
    }

    @Test("a boundary given is kept where a part holds its text alone; after -- it fails unsent, never replaced")
    func boundaryCollision() async throws {
        let body = RequestBody.multipart([.field("a", "contains XyZ inside")], boundary: "XyZ")
        #expect(body.contentType == "multipart/form-data; boundary=XyZ")
        let server = try await TestServer.shared()
        let session = makeSession(server)
        // The request's own type names the boundary: a body framed with another one would
        // arrive as no parts at all.
        for parts in [
            [MultipartPart.field("a", "line\r\n--XyZ\r\nmore")], [.field("a", "x--XyZ")], [.field("a--XyZ", "b")],
            [.file("f", filename: "--XyZ.txt", data: Data("d".utf8))],
        ] {
            let path = "echo/clash-\(UUID().uuidString)"
            let request = Request(
                path, method: .post, headers: ["Content-Type": "multipart/form-data; boundary=XyZ"],
                body: .multipart(parts, boundary: "XyZ"))
            await expectWattleError({ _ = try await session.send(request) }) {
                guard case .invalidRequest(let reason) = $0 else { return false }
                return reason.contains("boundary \"XyZ\" occurs in the part")
            }
            #expect(server.stats.hits("/" + path) == 0)
        }
    }
}
