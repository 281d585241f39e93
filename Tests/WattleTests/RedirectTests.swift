import Foundation
import Testing
import Wattle
import WattleDemoServer

@Suite("Redirects are followed by Wattle, per status, with credentials kept to their origin")
struct RedirectTests {
    @Test("301, 302 and 303 turn a POST into a GET without a body", arguments: [301, 302, 303])
    func becomesGet(status: Int) async throws {
        let server = try await TestServer.shared()
        let response = try await makeSession(server).send(
            Request(
                "redirect/\(status)", method: .post,
                headers: [
                    "Content-Language": "en", "Digest": "sha-256=x", "Content-Digest": "sha-256=:x:", "X-Kept": "1",
                ],
                body: .json(["a": 1])))
        let echo = try response.decode(Echo.self)
        #expect(echo.method == "GET")
        #expect(echo.bodyLength == 0)
        #expect(echo.header("Content-Type") == nil)
        // The fields that described the body went with it (RFC 9110, section 15.4); others stay.
        for name in ["Content-Language", "Digest", "Content-Digest", "Content-Length", "Transfer-Encoding"] {
            #expect(echo.header(name) == nil, "\(name)")
        }
        #expect(echo.header("X-Kept") == "1")
        #expect(response.url.path == "/echo")
        #expect(response.metrics.redirectCount == 1)
    }

    @Test("307 and 308 keep the method and the body", arguments: [307, 308])
    func keepsMethod(status: Int) async throws {
        let server = try await TestServer.shared()
        let echo = try await makeSession(server).put("redirect/\(status)", parameters: ["a": 1]).decode(Echo.self)
        #expect(echo.method == "PUT")
        #expect(echo.body == #"{"a":1}"#)
    }

    @Test("303 turns a PUT into a GET; 302 keeps a PUT")
    func seeOtherAndFound() async throws {
        let server = try await TestServer.shared()
        let session = makeSession(server)
        #expect(try await session.put("redirect/303", parameters: ["a": 1]).decode(Echo.self).method == "GET")
        #expect(try await session.put("redirect/302", parameters: ["a": 1]).decode(Echo.self).method == "PUT")
    }

    @Test("a chain within the limit is followed; one hop more is tooManyRedirects")
    func hopLimit() async throws {
        let server = try await TestServer.shared()
        let session = makeSession(server) { $0.redirects = .follow(maximumHops: 3) }
        let response = try await session.get("redirect-chain/3")
        #expect(response.metrics.redirectCount == 3)
        await expectWattleError({ _ = try await session.get("redirect-chain/4") }) {
            if case .tooManyRedirects(let limit, _) = $0 { return limit == 3 }
            return false
        }
    }

    @Test("with redirects off, a 3xx is an httpStatus error carrying the Location")
    func notFollowed() async throws {
        let server = try await TestServer.shared()
        await expectWattleError({ _ = try await makeSession(server) { $0.redirects = .none }.get("redirect/302") }) {
            if case .httpStatus(let response) = $0 {
                return response.statusCode == 302 && response.headers["Location"] == "/echo"
            }
            return false
        }
    }

    @Test("Authorization, Cookie and API-key headers are dropped when the origin changes")
    func credentialsDroppedAcrossOrigins() async throws {
        let server = try await TestServer.shared()
        let other = try await TestServer.other()
        let target = other.url("echo").absoluteString
        let session = makeSession(server)
        let echo = try await session.send(
            Request(
                "redirect/302", query: ["to": target],
                headers: ["Authorization": "Bearer s3cret", "Cookie": "sid=1", "X-API-Key": "k", "X-Trace": "t"])
        ).decode(Echo.self)
        #expect(echo.header("Authorization") == nil)
        #expect(echo.header("Cookie") == nil)
        #expect(echo.header("X-API-Key") == nil)
        #expect(echo.header("X-Trace") == "t")
    }

    @Test("a configured sensitive header is dropped across origins whatever the case it is named in")
    func configuredSensitiveHeaderAnyCase() async throws {
        let server = try await TestServer.shared()
        let other = try await TestServer.other()
        let session = makeSession(server) { $0.sensitiveHeaders.insert("X-Goog-Api-Key") }
        for sent in ["X-Goog-Api-Key", "x-goog-api-key", "X-GOOG-API-KEY"] {
            let echo = try await session.send(
                Request("redirect/302", query: ["to": other.url("echo").absoluteString], headers: [sent: "k3y"])
            ).decode(Echo.self)
            #expect(echo.header("X-Goog-Api-Key") == nil, "\(sent) went to the other origin")
            // The same header stays on a same-origin hop.
            let same = try await session.send(Request("redirect/307", headers: [sent: "k3y"])).decode(Echo.self)
            #expect(same.header("X-Goog-Api-Key") == "k3y")
        }
    }

    @Test("headers whose names say they hold a credential are dropped across origins, with no configuration")
    func credentialLookingHeadersDroppedAcrossOrigins() async throws {
        let server = try await TestServer.shared()
        let other = try await TestServer.other()
        let headers: HTTPHeaders = [
            "PRIVATE-TOKEN": "glpat-1", "X-Goog-Api-Key": "k", "X-Vault-Token": "v", "X-Session-Id": "s",
            "X-Client-Secret": "c", "X-Trace": "t",
        ]
        let echo = try await makeSession(server).send(
            Request("redirect/302", query: ["to": other.url("echo").absoluteString], headers: headers)
        ).decode(Echo.self)
        for name in ["PRIVATE-TOKEN", "X-Goog-Api-Key", "X-Vault-Token", "X-Session-Id", "X-Client-Secret"] {
            #expect(echo.header(name) == nil, "\(name) went to the other origin")
        }
        #expect(echo.header("X-Trace") == "t")
        let same = try await makeSession(server).send(Request("redirect/307", headers: headers)).decode(Echo.self)
        #expect(same.header("PRIVATE-TOKEN") == "glpat-1")
    }

    @Test("a 307 or 308 keeping a body is not followed to another origin unless allowed", arguments: [307, 308])
    func bodyNotResentToOtherOrigins(status: Int) async throws {
        let server = try await TestServer.shared()
        let other = try await TestServer.other()
        let path = "echo/\(UUID().uuidString)"  // the other tests share this server
        let target = other.url(path).absoluteString
        let login = Request(
            "redirect/\(status)", method: .post, query: ["to": target], body: .json(["password": "hunter2"]))
        await expectWattleError({ _ = try await makeSession(server).send(login) }) {
            $0.response?.statusCode == status && $0.response?.headers["Location"] == target
        }
        #expect(other.stats.hits("/" + path) == 0)
        // Same origin: followed with the body. A 303 to another origin: followed as a GET without it.
        #expect(
            try await makeSession(server).send(Request("redirect/\(status)", method: .post, body: .json(["a": 1])))
                .decode(Echo.self).body == #"{"a":1}"#)
        let seeOther = try await makeSession(server).send(
            Request("redirect/303", method: .post, query: ["to": target], body: .json(["password": "hunter2"])))
        #expect(try seeOther.decode(Echo.self).method == "GET")
        // A PUT with no body (sent with Content-Length: 0) has nothing to resend: followed.
        let bodiless = try await makeSession(server).send(
            Request("redirect/\(status)", method: .put, query: ["to": target]))
        #expect(try bodiless.decode(Echo.self).method == "PUT")
        #expect(other.stats.hits("/" + path) == 2)  // the 303's GET, then this PUT
        // Allowed: followed, body and all.
        let allowing = makeSession(server) { $0.redirects = .follow(maximumHops: 5, resendingBodyToOtherOrigins: true) }
        let resent = try await allowing.send(login).decode(Echo.self)
        #expect(resent.method == "POST" && resent.body == #"{"password":"hunter2"}"#)
        // Its Idempotency-Key goes with it (the server there de-duplicates a replay by it; the
        // name holds "key", which made it a credential), and a credential does not.
        var keyed = login
        keyed.headers["Idempotency-Key"] = "order-42"
        keyed.headers["X-Api-Key"] = "s3cret"
        let withKey = try await allowing.send(keyed).decode(Echo.self)
        #expect(withKey.header("Idempotency-Key") == "order-42" && withKey.header("X-Api-Key") == nil)
    }

    @Test("credentials are kept on a same-origin redirect")
    func credentialsKeptOnSameOrigin() async throws {
        let server = try await TestServer.shared()
        let echo = try await makeSession(server).send(
            Request("redirect/307", headers: ["Authorization": "Bearer s3cret"])
        ).decode(Echo.self)
        #expect(echo.header("Authorization") == "Bearer s3cret")
    }

    @Test(
        "a redirect to file:// or another scheme is refused",
        arguments: ["file:///etc/passwd", "ftp://127.0.0.1/x", "gopher://x"])
    func nonHTTPRefused(target: String) async throws {
        let server = try await TestServer.shared()
        await expectWattleError({ _ = try await makeSession(server).get("redirect/302", parameters: ["to": target]) }) {
            if case .invalidURL(_, let reason) = $0 { return reason.contains("non-HTTP") }
            return false
        }
    }
}
