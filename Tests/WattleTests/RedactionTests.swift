import Foundation
import Logging
import Testing
import Wattle
import WattleDemoServer

@Suite("Credentials stay out of logs, dumps and error descriptions")
struct RedactionTests {
    @Test("a configured sensitive header is redacted in the trace log, in whatever case it is named")
    func configuredHeaderRedactedInLogs() async throws {
        let server = try await TestServer.shared()
        let capture = CapturedLogs()
        let session = makeSession(server) {
            $0.sensitiveHeaders = ["X-Service-Token"]
            $0.logger = Logger(label: "trace") { _ in CapturingLogHandler(capture: capture) }
        }
        for name in ["X-Service-Token", "x-service-token"] {
            _ = try await session.send(Request("echo", headers: [name: "svc-secret-0001"]))
        }
        let lines = capture.messages.map(\.text)
        #expect(lines.contains { $0.contains("request headers:") && $0.contains("<redacted>") })
        #expect(!lines.contains { $0.contains("svc-secret-0001") }, "a log line shows the header's value")
    }

    @Test("a header whose name says it holds a credential is redacted in logs and descriptions without being listed")
    func credentialLookingHeadersRedacted() async throws {
        let server = try await TestServer.shared()
        let capture = CapturedLogs()
        let session = makeSession(server) {
            $0.logger = Logger(label: "trace") { _ in CapturingLogHandler(capture: capture) }
        }
        let headers: HTTPHeaders = [
            "PRIVATE-TOKEN": "glpat-secret-01", "X-Vault-Token": "hvs.secret-02", "X-Goog-Api-Key": "goog-secret-03",
            "X-Amz-Security-Token": "amz-secret-04", "Accept-Encoding": "gzip",
        ]
        let echo = try await session.send(Request("echo", headers: headers)).decode(Echo.self)
        #expect(echo.header("X-Vault-Token") == "hvs.secret-02", "sent as given")
        let texts = capture.messages.map(\.text) + [headers.description, String(reflecting: headers)]
        var dumped = ""
        dump(headers, to: &dumped)
        for text in texts + [dumped] {
            for secret in ["glpat-secret-01", "hvs.secret-02", "goog-secret-03", "amz-secret-04"] {
                #expect(!text.contains(secret), "\(text)")
            }
        }
        // A standard field that merely holds such a word ("code", "auth") is shown.
        #expect(headers.description.contains("Accept-Encoding: gzip"))
        #expect(capture.messages.contains { $0.text.contains("Accept-Encoding: gzip") })
        let challenge: HTTPHeaders = ["WWW-Authenticate": #"Bearer realm="api""#]
        #expect(challenge.description == #"WWW-Authenticate: Bearer realm="api""#)
    }

    @Test("dump of a transport request and of a response shows no URL password, token query value or body")
    func dumpsRedact() async throws {
        let server = try await TestServer.shared()
        let url = try #require(
            URL(string: "http://ada:pa55word@127.0.0.1:\(server.port)/echo?access_token=tok-in-query&page=2"))
        let request = TransportRequest(
            method: .post, url: url, headers: ["Authorization": "Bearer bearer-secret"],
            body: Data(#"{"password":"body-secret"}"#.utf8))
        var dumped = ""
        dump(request, to: &dumped)
        let printed = String(describing: request)
        for secret in ["pa55word", "tok-in-query", "bearer-secret", "body-secret"] {
            #expect(!dumped.contains(secret), "dump shows \(secret): \(dumped)")
            #expect(!printed.contains(secret), "print shows \(secret): \(printed)")
        }
        #expect(dumped.contains("page=2") && dumped.contains("26 bytes"))

        let response = try await makeSession(server).get("echo", parameters: ["access_token": "tok-in-query"])
        var dumpedResponse = ""
        dump(response, to: &dumpedResponse)
        #expect(!dumpedResponse.contains("tok-in-query"), "\(dumpedResponse)")
        #expect(dumpedResponse.contains("/echo"))
    }

    @Test("dump of a request, its parameters and body, and of an error shows no credential")
    func dumpsOfRequestsAndErrorsRedact() throws {
        let request = Request(
            "https://ada:pa55word@h.example/x?access_token=tok-in-endpoint&page=2", method: .post,
            query: ["api_key": "key-in-query", "pin": 123_456, "user": "ada", "nested": ["password": "in-nested"]],
            headers: ["Authorization": "Bearer bearer-secret"],
            body: .data(Data(#"{"password":"body-secret"}"#.utf8), contentType: "application/json"))
        var dumped = ""
        dump(request, to: &dumped)
        for secret in [
            "pa55word", "tok-in-endpoint", "key-in-query", "123456", "in-nested", "bearer-secret", "body-secret",
        ] {
            #expect(!dumped.contains(secret), "dump shows \(secret): \(dumped)")
        }
        #expect(dumped.contains("page=2") && dumped.contains("ada") && dumped.contains("26 bytes"), "\(dumped)")

        let url = try #require(URL(string: "https://ada:pa55word@h.example/x?access_token=tok-in-url"))
        let error = WattleError.timedOut(phase: .total, after: .seconds(1), url: url)
        var dumpedError = ""
        dump(error, to: &dumpedError)
        #expect(!dumpedError.contains("tok-in-url") && !dumpedError.contains("pa55word"), "\(dumpedError)")
        #expect(dumpedError.contains("h.example/x"), "\(dumpedError)")
    }

    @Test(
        "form-encoded credentials are redacted wherever they stand in a body",
        arguments: [
            #"{"echo":"refresh_token=s3cr3t-value&grant_type=x"}"#,
            #"{"req":"a=1\u0026refresh_token=s3cr3t-value"}"#,
            "bad request (client_secret=s3cr3t-value)",
            "<p>access_token=s3cr3t-value</p>",
            "access_token=s3cr3t-value",
            "x=1&password=s3cr3t-value&y=2",
        ])
    func formCredentialsRedacted(body: String) throws {
        let url = try #require(URL(string: "https://api.example.test/x"))
        let response = Response(
            statusCode: 200, headers: ["Content-Type": "text/plain"], data: Data(body.utf8), url: url)
        do {
            _ = try response.decode([String: Int].self)
            Issue.record("decoded")
        } catch {
            #expect(!error.description.contains("s3cr3t-value"), "\(error)")
            #expect(error.description.contains("<redacted>"), "\(error)")
        }
    }

    @Test(
        "JSON credentials are redacted whatever their value's type",
        arguments: [
            #"{"pin_code": 987654321, "ok": true}"#,
            #"{"tokens": ["s3cr3t-a", "s3cr3t-b"], "n": 1}"#,
            #"{"token": {"value": "s3cr3t-value", "nested": [1, {"x": "s3cr3t-y"}]}, "n": 1}"#,
            #"{"password": true}"#,
            #"{"pin": 987654321, "ok": true}"#,
        ])
    func jsonCredentialsOfAnyTypeRedacted(body: String) throws {
        let url = try #require(URL(string: "https://api.example.test/x"))
        let response = Response(
            statusCode: 200, headers: ["Content-Type": "application/json"], data: Data(body.utf8), url: url)
        do {
            _ = try response.decode([Int].self)
            Issue.record("decoded")
        } catch {
            for secret in ["987654321", "s3cr3t", #""password": true"#] {
                #expect(!error.description.contains(secret), "\(error)")
            }
            #expect(error.description.contains("<redacted>"), "\(error)")
        }
    }

    @Test("short credential names match only whole: a parameter that merely contains one stays readable")
    func shortNamesMatchWhole() {
        for name in ["pwd", "PIN", "pass", "otp", "passphrase", "db_passphrase"] {
            let description = Request("x?\(name)=s3cr3t-value").description
            #expect(!description.contains("s3cr3t-value"), "\(description)")
        }
        for name in ["compass", "shipping", "topping", "spinner", "bypass_cache", "page"] {
            let description = Request("x?\(name)=plain-value").description
            #expect(description.contains("\(name)=plain-value"), "\(description)")
        }
    }

    @Test(
        "credential-looking values are redacted in URLs the parser refuses as written, in fragments, and under short names",
        arguments: [
            "search?q=a b&api_key=s3cr3t-value",
            "https://h.example/cb#access_token=s3cr3t-value&state=x",
            "https://h.example/blob?sv=2020&sig=s3cr3t-value",
            "https://h.example/x?client_credential=s3cr3t-value|y",
            "login?user=ada&pwd=s3cr3t-value", "login?user=ada&Pass=s3cr3t-value", "unlock?passphrase=s3cr3t-value",
            "verify?otp=s3cr3t-value", "card?PIN=s3cr3t-value", "token?client_assertion=s3cr3t-value",
            // Pairs a server may split at ";", which the query parser reads as one value.
            "https://h.example/x?a=1;token=s3cr3t-value", "https://h.example/x?a=1;b=2;Api_Key=s3cr3t-value&c=3",
            // User-info written without a scheme, which the parser reads as scheme "alice".
            "alice:s3cr3t-value@api.example.com/me", "alice:s3cr3t-value@api.example.com",
            "alice:9s3cr3t-value@api.example.com/me",
            // A "://" later on (in a query, in a path) starts no authority.
            "alice:s3cr3t-value@api.example.com/cb?redirect_uri=https://app.example/",
            "alice:s3cr3t-value@api.example.com/x/https://y.example/",
            // A mistyped scheme, which the parser refuses or misreads.
            "https:/alice:s3cr3t-value@api.example.com/me", "https//alice:s3cr3t-value@api.example.com/me",
            "HTTP:alice:s3cr3t-value@api.example.com", "https:///alice:s3cr3t-value@api.example.com/me",
            "https:/alice:s3cr3t-value@api.example.com/cb?next=https://app.example/",
        ])
    func urlCredentialsRedacted(endpoint: String) {
        let description = Request(endpoint).description
        #expect(!description.contains("s3cr3t-value"), "\(description)")
    }

    @Test("an endpoint of credentials before a host with no scheme is refused without naming them, and not sent")
    func schemelessCredentialsRefused() async throws {
        let server = try await TestServer.shared()
        let session = makeSession(server)
        await expectWattleError({ _ = try await session.get("alice:s3cr3t-value@127.0.0.1:\(server.port)/echo") }) {
            guard case .invalidURL = $0 else { return false }
            let text = "\($0)"
            return text.contains("no scheme") && !text.contains("s3cr3t-value") && !text.contains("alice")
        }
        for endpoint in [
            "alice:s3cr3t-value@127.0.0.1:\(server.port)/cb?redirect_uri=https://app.example/",
            "alice:s3cr3t-value@127.0.0.1:\(server.port)/x/https://y.example/",
            // A digit after the colon rules out a scheme: without the check this was a path
            // under the base URL, sent with the password in it to the base URL's server.
            "alice:1234s3cr3t-value@127.0.0.1:\(server.port)/echo",
            "alice:1234s3cr3t-value@127.0.0.1",
            // Any host: an underscore, a name that is not ASCII, none at all.
            "alice:1234s3cr3t-value@build_server/echo",
            "deploy:s3cr3t-value@build_server/x",
            "alice:s3cr3t-value@b\u{FC}cher.example/x",
            "alice:1234s3cr3t-value@",
            // A mistyped scheme: under the base URL this was a path, the password in it.
            "https//alice:s3cr3t-value@127.0.0.1:\(server.port)/echo",
            "HTTP//alice:s3cr3t-value@127.0.0.1", "https//alice:s3cr3t-value@127.0.0.1:{{port}}/echo",
        ] {
            await expectWattleError({ _ = try await session.get(endpoint) }) {
                guard case .invalidURL = $0 else { return false }
                return "\($0)".contains("no scheme") && !"\($0)".contains("s3cr3t-value")
            }
        }
        // The remedy for a path is named.
        await expectWattleError({ _ = try await session.get("alice:1234s3cr3t-value@127.0.0.1/echo") }) {
            "\($0)".contains("begin it with a slash")
        }
        // A container image's digest is not credentials: what follows its "@" is no host:port.
        // It goes to the server as a path, under the base URL (404 there), as before.
        for path in [
            "nginx:1.25@sha256:0d17b565c37bcbd895e9d92315a05c1c3c9a29f762b011a10c54a66cd53c9b31/json",
            "library/nginx:1.25@sha256:0d17/json",
        ] {
            await expectWattleError({ _ = try await session.get(path) }) { $0.response?.statusCode == 404 }
        }
        await expectWattleError({ _ = try await session.get("nginx:latest@sha256:0d17/json") }) {
            guard case .invalidURL(_, let reason) = $0 else { return false }
            return reason.contains("\"nginx\" is not supported") && reason.contains("begin it with a slash")
        }

        // A value past ";" that is not a credential stays readable, and so do paths with an "@"
        // that are not user-info.
        #expect(Request("https://h.example/x?a=1;page=2").description.contains("page=2"))
        for path in ["@types/node", "users/alice@example.com", "alice@example.com", "https://h.example/@me"] {
            #expect(Request(path).description == "GET \(path)", "\(Request(path).description)")
        }
    }

    @Test(
        "a Location or Content-Location header shows as a URL does in descriptions and logs: no code, token or user-info"
    )
    func locationHeadersRedacted() {
        let headers: HTTPHeaders = [
            "Location": "https://app.example/cb?code=s3cr3t-value&state=x",
            "content-location": "https://bob:s3cr3t-value@h.example/a#access_token=s3cr3t-value",
            "X-Other": "https://h.example/?q=1",
            // Not cut as a log line's URL is: the CLI's -v prints it whole.
            "location": "https://h.example/" + String(repeating: "p", count: 400) + "?state=end",
        ]
        let text = headers.description
        #expect(!text.contains("s3cr3t-value"), "\(text)")
        #expect(
            text.contains("state=x") && text.contains("h.example/a") && text.contains("X-Other: https://h.example/?q=1")
        )
        #expect(text.contains("?state=end"), "\(text)")
    }

    @Test("a form-encoded token response is read; a broken one's error shows no token")
    func formEncodedTokenResponse() throws {
        let url = try #require(URL(string: "https://api.example.test/token"))
        func response(_ body: String, type: String) -> Response {
            Response(statusCode: 200, headers: ["Content-Type": type], data: Data(body.utf8), url: url)
        }
        let token = try AuthToken(
            oauthResponse: response(
                "access_token=gho_abc%2Bdef&refresh_token=ghr_xyz&expires_in=3600&token_type=bearer&scope=repo+user",
                type: "application/x-www-form-urlencoded; charset=utf-8"))
        #expect(token.accessToken == "gho_abc+def")
        #expect(token.refreshToken == "ghr_xyz")
        #expect(token.tokenType == "Bearer")
        #expect(token.expiresAt.map { abs($0.timeIntervalSinceNow - 3600) < 60 } == true)

        // Form-encoded text sent as something else: not read, and the error keeps the values out.
        do {
            _ = try AuthToken(
                oauthResponse: response(
                    "access_token=gho_leaked0001&refresh_token=ghr_leaked0002&token_type=bearer", type: "text/plain"))
            Issue.record("a form body without its content type was read as JSON")
        } catch {
            #expect(
                !error.description.contains("gho_leaked0001") && !error.description.contains("ghr_leaked0002"),
                "\(error)")
            #expect(error.description.contains("access_token=<redacted>"), "\(error)")
        }
        // Lifetimes that only text can carry are no lifetime; an empty type is the default.
        let odd = try AuthToken(
            oauthResponse: response(
                "access_token=a&expires_in=nan&token_type=", type: "application/x-www-form-urlencoded"))
        #expect(odd.expiresAt == nil && odd.tokenType == "Bearer")
        let negative = try AuthToken(
            oauthResponse: response("access_token=a&expires_in=-5", type: "application/x-www-form-urlencoded"))
        #expect(negative.expiresAt == nil)
        // A JSON lifetime far beyond any date ("never"), or below zero: described without
        // trapping; a negative one is no lifetime, as in a form.
        let never = try AuthToken(
            oauthResponse: response(#"{"access_token":"a","expires_in":1e19}"#, type: "application/json"))
        #expect(never.description.contains("expires in 1000000000000000 s"), "\(never)")
        #expect(!never.isExpired())
        let negativeJSON = try AuthToken(
            oauthResponse: response(#"{"access_token":"a","expires_in":-5}"#, type: "application/json"))
        #expect(negativeJSON.expiresAt == nil)
        // Declared form-encoded but with no access token.
        #expect(throws: WattleError.self) {
            try AuthToken(
                oauthResponse: response("error=bad_verification_code", type: "application/x-www-form-urlencoded"))
        }
    }

    @Test(
        "a JSON token response reads as a form does: an empty refresh token or type is absent, an empty access token or another type than Bearer is refused"
    )
    func tokenResponseFieldRules() throws {
        let url = try #require(URL(string: "https://api.example.test/token"))
        func json(_ body: String) -> Response {
            Response(statusCode: 200, headers: ["Content-Type": "application/json"], data: Data(body.utf8), url: url)
        }
        let previous = AuthToken(accessToken: "old", refreshToken: "r1")
        let empties = try AuthToken(
            oauthResponse: json(#"{"access_token":"a","refresh_token":"","token_type":""}"#), previous: previous)
        #expect(
            empties.refreshToken == "r1" && empties.tokenType == "Bearer" && empties.authorizationValue == "Bearer a")
        let lower = try AuthToken(oauthResponse: json(#"{"access_token":"a","token_type":"bEaReR"}"#))
        #expect(lower.tokenType == "Bearer")
        for body in [
            #"{"access_token":""}"#, #"{"access_token":"a","token_type":"DPoP"}"#,
            #"{"access_token":"a","token_type":"mac"}"#,
        ] {
            #expect(throws: WattleError.self, "\(body)") { try AuthToken(oauthResponse: json(body)) }
        }
        let form = Response(
            statusCode: 200, headers: ["Content-Type": "application/x-www-form-urlencoded"],
            data: Data("access_token=a&token_type=N_A".utf8), url: url)
        #expect(throws: WattleError.self) { try AuthToken(oauthResponse: form) }
    }

    @Test("a redacted secret shows at most a quarter of it")
    func redactedSecretShare() {
        #expect(AuthToken.redact("abcdefghijklmno") == "…")
        #expect(AuthToken.redact("abcdefghijklmnop") == "abcd…")
        let long = String(repeating: "x", count: 28) + "wxyz"
        #expect(AuthToken.redact("abcd" + long.dropFirst(4)) == "abcd…wxyz")
    }
}
