import Foundation
import Testing
import WattleDemoServer

@testable import Wattle

@Suite("Query parameters are percent-encoded per RFC 3986, in order")
struct QueryEncodingTests {
    @Test("reserved characters, spaces and non-ASCII are encoded exactly")
    func reservedCharacters() async throws {
        let server = try await TestServer.shared()
        let session = makeSession(server)
        let echo = try await session.get(
            "echo",
            parameters: [
                "q": "swift & curl", "eq": "a=b", "path": "/x/y", "plus": "1+1", "name": "Zoë", "emoji": "🐨",
                "tilde": "a-b._~c",
            ]
        ).decode(Echo.self)
        #expect(
            echo.query
                == "q=swift%20%26%20curl&eq=a%3Db&path=%2Fx%2Fy&plus=1%2B1&name=Zo%C3%AB&emoji=%F0%9F%90%A8&tilde=a-b._~c"
        )
    }

    @Test("the order given is kept, arrays repeat, nil is left out, Bool and numbers are text")
    func orderAndTypes() async throws {
        let server = try await TestServer.shared()
        let missing: String? = nil
        let echo = try await makeSession(server).get(
            "echo", parameters: ["z": 1, "a": true, "tag": ["x", "y"], "gone": missing, "pi": 3.5]
        ).decode(Echo.self)
        #expect(echo.query == "z=1&a=true&tag=x&tag=y&pi=3.5")
    }

    @Test("a Date is ISO 8601 in UTC, with milliseconds when it has a fraction of a second, in a query and a JSON body")
    func dates() async throws {
        let server = try await TestServer.shared()
        let session = makeSession(server)
        let whole = Date(timeIntervalSince1970: 1_714_564_800)
        let fraction = Date(timeIntervalSince1970: 1_714_564_800.75)
        let echo = try await session.get("echo", parameters: ["since": fraction, "until": whole]).decode(Echo.self)
        #expect(echo.query == "since=2024-05-01T12%3A00%3A00.750Z&until=2024-05-01T12%3A00%3A00Z")
        let posted = try await session.post("echo", parameters: ["since": fraction, "until": whole]).decode(Echo.self)
        #expect(posted.body == #"{"since":"2024-05-01T12:00:00.750Z","until":"2024-05-01T12:00:00Z"}"#)
        // Fractions that binary cannot hold exactly are rounded, not cut: .123 is 0.12299… stored.
        for (seconds, text) in [
            (1_714_564_811.123, "2024-05-01T12:00:11.123Z"), (1_714_564_811.001, "2024-05-01T12:00:11.001Z"),
            (1_714_564_811.9999, "2024-05-01T12:00:12Z"), (-0.25, "1969-12-31T23:59:59.750Z"),
        ] {
            #expect(Parameters.dateText(Date(timeIntervalSince1970: seconds)) == text, "\(seconds)")
        }
        // A date at no finite time is refused unsent, in a query and in a JSON body.
        for bad in [Date(timeIntervalSince1970: .nan), Date(timeIntervalSince1970: .infinity)] {
            await expectWattleError({ _ = try await session.get("echo", parameters: ["at": bad]) }) {
                guard case .invalidRequest(let reason) = $0 else { return false }
                return reason == "the parameter \"at\" is not a finite number"
            }
            await expectWattleError({ _ = try await session.post("echo", parameters: ["at": bad]) }) {
                guard case .invalidRequest(let reason) = $0 else { return false }
                return reason == "the JSON field \"at\" is not a finite number"
            }
        }
    }

    @Test("parameters are appended to a query already in the endpoint")
    func appendsToExistingQuery() async throws {
        let server = try await TestServer.shared()
        let echo = try await makeSession(server).get("echo?fixed=1", parameters: ["b": "2"]).decode(Echo.self)
        #expect(echo.query == "fixed=1&b=2")
    }

    @Test("a dictionary of parameters is sent sorted by name")
    func dictionarySorted() async throws {
        let server = try await TestServer.shared()
        let dictionary: [String: any Sendable] = ["b": 2, "a": 1, "c": 3]
        let echo = try await makeSession(server).get("echo", parameters: Parameters(dictionary)).decode(Echo.self)
        #expect(echo.query == "a=1&b=2&c=3")
    }

    @Test("a value that cannot go in a query is refused with its name")
    func unsupportedValue() async throws {
        struct Custom: Sendable {}
        let server = try await TestServer.shared()
        await expectWattleError({ _ = try await makeSession(server).get("echo", parameters: ["thing": Custom()]) }) {
            if case .invalidRequest(let reason) = $0 { return reason.contains("thing") }
            return false
        }
    }
}

@Suite("Endpoints resolve against the base URL")
struct EndpointResolutionTests {
    let base = URL(string: "https://api.example.test/v1/")!

    @Test("relative endpoints extend the base path, with or without a leading slash or trailing slash on the base")
    func relative() throws {
        #expect(try Request("users").url(relativeTo: base).absoluteString == "https://api.example.test/v1/users")
        #expect(try Request("/users/42").url(relativeTo: base).absoluteString == "https://api.example.test/v1/users/42")
        let noSlash = URL(string: "https://api.example.test/v1")!
        #expect(try Request("users").url(relativeTo: noSlash).absoluteString == "https://api.example.test/v1/users")
    }

    @Test("the base URL's query goes first in every relative endpoint's (Azure's api-version), its fragment nowhere")
    func baseQueryKept() throws {
        let azure = URL(string: "https://x.openai.azure.test/openai?api-version=2024-02-01")!
        func resolved(_ endpoint: String, _ query: Parameters = [:], _ base: URL = azure) throws -> String {
            try Request(endpoint, query: query).url(relativeTo: base).absoluteString
        }
        #expect(try resolved("deployments") == "https://x.openai.azure.test/openai/deployments?api-version=2024-02-01")
        #expect(
            try resolved("deployments", ["n": 2])
                == "https://x.openai.azure.test/openai/deployments?api-version=2024-02-01&n=2")
        #expect(
            try resolved("deployments?top=5", ["n": 2])
                == "https://x.openai.azure.test/openai/deployments?api-version=2024-02-01&top=5&n=2")
        #expect(try resolved("deployments?") == "https://x.openai.azure.test/openai/deployments?api-version=2024-02-01")
        #expect(
            try resolved("deployments#part") == "https://x.openai.azure.test/openai/deployments?api-version=2024-02-01")
        let withFragment = URL(string: "https://api.test/v1/?k=1#top")!
        #expect(try resolved("users", ["b": 2], withFragment) == "https://api.test/v1/users?k=1&b=2")
        // An absolute endpoint stands as it is, without the base's query.
        #expect(try resolved("https://other.test/x") == "https://other.test/x")
        // An empty query on the base adds nothing.
        #expect(try resolved("users", [:], URL(string: "https://api.test/v1/?")!) == "https://api.test/v1/users")
    }

    @Test("an absolute URL stands as it is")
    func absolute() throws {
        let url = try Request("http://other.test:8080/x?y=1").url(relativeTo: base)
        #expect(url.absoluteString == "http://other.test:8080/x?y=1")
    }

    @Test("a relative endpoint without a base URL is a clear error")
    func noBase() {
        #expect(throws: WattleError.self) { try Request("users").url(relativeTo: nil) }
        do {
            _ = try Request("users").url(relativeTo: nil)
        } catch {
            #expect(error.description.contains("no base URL"))
        }
    }

    @Test("non-HTTP schemes and CR/LF in the endpoint are refused")
    func refused() {
        for endpoint in ["file:///etc/passwd", "ftp://x.test/", "users\r\nHost: evil", "gopher://x"] {
            #expect(throws: WattleError.self) { try Request(endpoint).url(relativeTo: base) }
        }
    }

    @Test("a path with a colon first reads as a scheme: the error says to begin it with a slash, which works")
    func colonPath() throws {
        do {
            _ = try Request("speech:recognize").url(relativeTo: base)
            Issue.record("speech:recognize was taken as a path")
        } catch {
            #expect(error.description.contains(#"begin it with a slash ("/speech:recognize" extends the base URL)"#))
        }
        // A key in the query stays out of the hint, as out of the URL the error shows.
        do {
            _ = try Request("speech:recognize?key=AIzaSecret0001").url(relativeTo: base)
            Issue.record("speech:recognize was taken as a path")
        } catch {
            #expect(!error.description.contains("AIzaSecret0001"), "\(error)")
            #expect(error.description.contains(#""/speech:recognize""#), "\(error)")
        }
        #expect(
            try Request("/speech:recognize").url(relativeTo: base).absoluteString
                == "https://api.example.test/v1/speech:recognize")
        #expect(try Request("v1beta/documents:batchGet").url(relativeTo: base).path.hasSuffix("documents:batchGet"))
        do {
            _ = try Request("ftp://x.test/").url(relativeTo: base)
            Issue.record("ftp was taken")
        } catch {
            #expect(!error.description.contains("slash"), "\(error)")
        }
    }

    @Test("spaces and non-ASCII in a path are percent-encoded")
    func pathEncoding() throws {
        let url = try Request("files/my report é.pdf").url(relativeTo: base)
        #expect(url.absoluteString == "https://api.example.test/v1/files/my%20report%20%C3%A9.pdf")
    }
}

@Suite("Fuzz findings, kept as regression tests")
struct FuzzFindingTests {
    let base = URL(string: "https://api.example.test/v1/")!

    @Test("a stray % in the endpoint is encoded, and the parameters after it are not double-encoded")
    func strayPercent() throws {
        let url = try Request("search?q=100%", query: ["x": "a b"]).url(relativeTo: base)
        #expect(url.absoluteString == "https://api.example.test/v1/search?q=100%25&x=a%20b")
        let valid = try Request("search?q=100%25", query: ["x": "a b"]).url(relativeTo: base)
        #expect(valid.absoluteString == "https://api.example.test/v1/search?q=100%25&x=a%20b")
    }

    @Test("brackets are kept in an IPv6 authority and encoded in a path or query")
    func brackets() throws {
        let ipv6 = try Request("http://[::1]:8080/a[1]?b=[2]", query: ["c": "d"]).url(relativeTo: base)
        #expect(ipv6.absoluteString == "http://[::1]:8080/a%5B1%5D?b=%5B2%5D&c=d")
        let relative = try Request("x?s://[::1]:8443/y", query: ["k": "v w"]).url(relativeTo: base)
        #expect(relative.absoluteString == "https://api.example.test/v1/x?s://%5B::1%5D:8443/y&k=v%20w")
    }

    @Test(
        "a query that itself ends with ? still gets & before the parameters; an empty one or one ending in & does not")
    func questionMarkInQuery() throws {
        let url = try Request("search?q?", query: ["a": "b"]).url(relativeTo: base)
        #expect(url.absoluteString == "https://api.example.test/v1/search?q?&a=b")
        #expect(url.query == "q?&a=b")
        let empty = try Request("search?", query: ["a": "b"]).url(relativeTo: base)
        #expect(empty.absoluteString == "https://api.example.test/v1/search?a=b")
        let open = try Request("search?q=1&", query: ["a": "b"]).url(relativeTo: base)
        #expect(open.absoluteString == "https://api.example.test/v1/search?q=1&a=b")
        let twoMarks = try Request("search??", query: ["a": "b"]).url(relativeTo: base)
        #expect(twoMarks.absoluteString == "https://api.example.test/v1/search??&a=b")
    }

    @Test("brackets in the query of an absolute URL without a path are encoded, so parameters are not double-encoded")
    func bracketsInQueryAfterAuthority() throws {
        let url = try Request("http://h.example?[x]", query: ["\t": "a b"]).url(relativeTo: nil)
        #expect(url.absoluteString == "http://h.example?%5Bx%5D&%09=a%20b")
        let ipv6 = try Request("http://[::1]:8080?q=[1]", query: ["k": "v"]).url(relativeTo: nil)
        #expect(ipv6.absoluteString == "http://[::1]:8080?q=%5B1%5D&k=v")
        #expect(ipv6.host == "::1")
        let fragment = try Request("http://h.example#[f]", query: ["k": "v"]).url(relativeTo: nil)
        #expect(fragment.absoluteString == "http://h.example?k=v")
    }

    @Test(
        "only a leading scheme:// or // starts an authority: a later :// or a network-path reference keeps brackets right"
    )
    func authorityOnlyAtTheStart() {
        // A relative Location whose query holds a URL: the [ ] of its path are encoded.
        #expect(PercentEncoding.encodeForURL("/a[1]?next=https://x/") == "/a%5B1%5D?next=https://x/")
        // A network-path reference with an IPv6 literal keeps its brackets.
        #expect(PercentEncoding.encodeForURL("//[::1]:8080/x?a=[1]") == "//[::1]:8080/x?a=%5B1%5D")
        #expect(PercentEncoding.encodeForURL("HTTP://[::1]:8080?q=[1]") == "HTTP://[::1]:8080?q=%5B1%5D")
        #expect(PercentEncoding.encodeForURL("x?s://[::1]/y") == "x?s://%5B::1%5D/y")
        #expect(PercentEncoding.encodeForURL("a+b.c-d://[::1]/[") == "a+b.c-d://[::1]/%5B")
        #expect(PercentEncoding.authorityStart(Array("1http://h".utf8)) == nil)
    }

    @Test("a redirect to a relative Location whose query holds a URL reaches the server encoded once")
    func redirectLocationWithURLInQuery() async throws {
        let server = try await TestServer.shared()
        let target = "/echo?a=[1]&next=https://h.example/"
        let response = try await makeSession(server).get("redirect/302", parameters: ["to": target])
        let echo = try response.decode(Echo.self)
        #expect(echo.path == "/echo")
        #expect(echo.query == "a=%5B1%5D&next=https://h.example/")
        #expect(response.metrics.redirectCount == 1)
    }
}
