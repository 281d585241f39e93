import Foundation
import Synchronization
import Testing
import Wattle
import WattleDemoServer
import WattleKeychain
import WattleTesting

/// Counts calls from any thread.
final class Counter: Sendable {
    private let count = Mutex(0)
    func increment() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}

@Suite("HTTP Basic credentials (RFC 7617) as a token: sent to the API only, checked, kept sealed, never shown")
struct BasicAuthTests {
    /// The test server's route that accepts exactly these credentials.
    static let path = "basic-auth/alice/pässwörd-£1"

    static func session(_ server: DemoServer, password: String) throws -> Session {
        let token = try AuthToken.basic(username: "alice", password: password)
        return makeSession(server) { $0.authenticator = Authenticator(store: InMemoryTokenStore(token)) }
    }

    @Test("the RFC 7617 examples encode byte for byte, in UTF-8; an empty password and colons in it are kept")
    func encoding() throws {
        #expect(
            try AuthToken.basic(username: "Aladdin", password: "open sesame").authorizationValue
                == "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==")
        #expect(try AuthToken.basic(username: "test", password: "123£").authorizationValue == "Basic dGVzdDoxMjPCow==")
        let key = try AuthToken.basic(username: "sk_test_4eC39HqLyjWDarjtT1zdp7dc", password: "")
        #expect(Data(base64Encoded: key.accessToken) == Data("sk_test_4eC39HqLyjWDarjtT1zdp7dc:".utf8))
        #expect(
            try AuthToken.basic(username: "u", password: "a:b:c").accessToken
                == Data("u:a:b:c".utf8).base64EncodedString())
        #expect(key.tokenType == "Basic" && key.refreshToken == nil && key.expiresAt == nil)
    }

    @Test(
        "a colon in the username, or a control character in either, is refused naming the code, never the password",
        arguments: [
            ("ali:ce", "s3cret-1", "colon"),
            ("alice", "s3cret-2\n", "U+000A"),
            ("al\u{7F}ice", "s3cret-3", "U+007F"),
            ("alice", "s3cret\u{85}-4", "U+0085"),
            ("alice", "s3cret\0-5", "U+0000"),
            ("alice\t", "s3cret-6", "U+0009"),
            // A colon followed by a combining mark is one Character, but the server splits at the byte.
            ("bob:\u{301}x", "s3cret-7", "colon"),
        ])
    func refused(username: String, password: String, expected: String) {
        do {
            _ = try AuthToken.basic(username: username, password: password)
            Issue.record("accepted \(username.debugDescription)")
        } catch {
            guard case .invalidHeader(let name, let reason) = error else {
                Issue.record("unexpected error: \(error)")
                return
            }
            #expect(name == "Authorization")
            #expect(reason.contains(expected), "\(reason)")
            #expect(!error.description.contains("s3cret"))
            // A password read with its newline says so.
            #expect(reason.contains("newline") == password.hasSuffix("\n"))
        }
    }

    @Test("descriptions, dumps and reflection show no password, and a long username (an API key) only redacted")
    func redaction() throws {
        let key = try AuthToken.basic(username: "sk_live_0123456789abcdef", password: "")
        #expect(key.description == "AuthToken(Basic sk_l…:…, no refresh token)")
        let user = try AuthToken.basic(username: "alice", password: "correct horse battery staple")
        #expect(user.redactedAccessToken == "…:…")
        var dumped = ""
        dump(user, to: &dumped)
        for text in [user.description, user.debugDescription, dumped, String(reflecting: user), "\(user)"] {
            #expect(!text.contains("correct horse") && !text.contains("alice"), "\(text)")
            // Nothing of the base64 either: its last characters encode the password's last bytes.
            #expect(!text.contains(user.accessToken.suffix(4)) && !text.contains(user.accessToken.prefix(4)), "\(text)")
        }
        // The password starts at the first colon byte, even one a combining mark follows.
        let combining = try AuthToken.basic(username: "alice", password: "\u{301}hunter2-longpass:x")
        #expect(combining.redactedAccessToken == "…:…")
        #expect(!combining.description.contains("pass") && !combining.description.contains("hunt"))
        // A Basic scheme whose value is not base64 of user:password shows nothing of it.
        #expect(AuthToken(accessToken: "not base64 at all, 1234567890", tokenType: "basic").redactedAccessToken == "…")
    }

    @Test("a server checks the credentials the session sends; a wrong password's 401 is the error, with the challenge")
    func againstServer() async throws {
        let server = try await TestServer.shared()
        let accepted = try await Self.session(server, password: "pässwörd-£1").get(Self.path)
        #expect(accepted.statusCode == 200)
        let body = try accepted.json()
        #expect(body["authenticated"] == .bool(true) && body["user"] == .string("alice"))
        await expectWattleError({ _ = try await Self.session(server, password: "pässwörd-£2").get(Self.path) }) {
            error in
            error.response?.statusCode == 401
                && error.response?.headers["WWW-Authenticate"]?.hasPrefix("Basic ") == true
        }
    }

    @Test("with a refresh configured, a refused Basic token's 401 is still the error: nothing is refreshed or cleared")
    func noRefreshForBasic() async throws {
        let server = try await TestServer.shared()
        let token = try AuthToken.basic(username: "alice", password: "wrong")
        let store = InMemoryTokenStore(token)
        let refreshes = Counter()
        let session = makeSession(server) {
            $0.authenticator = Authenticator(store: store) { current, _ in
                refreshes.increment()
                return current
            }
        }
        await expectWattleError({ _ = try await session.get(Self.path) }) { $0.response?.statusCode == 401 }
        #expect(refreshes.value == 0)
        #expect(try await store.load() == token)
    }

    @Test("another origin never gets the credentials: not at an absolute URL, not after a redirect to it")
    func otherOrigin() async throws {
        let server = try await TestServer.shared()
        let other = try await TestServer.other()
        let session = try Self.session(server, password: "pässwörd-£1")
        let own = try await session.get("echo").decode(Echo.self)
        #expect(
            own.header("Authorization")
                == (try AuthToken.basic(username: "alice", password: "pässwörd-£1").authorizationValue))
        let direct = try await session.get(other.url("echo").absoluteString).decode(Echo.self)
        #expect(direct.header("Authorization") == nil)
        let redirected = try await session.get("redirect/302", parameters: ["to": other.url("echo").absoluteString])
            .decode(Echo.self)
        #expect(redirected.path == "/echo" && redirected.header("Authorization") == nil)
    }

    @Test(
        "kept in a keychain file, the credentials open the API in a later session; the file holds neither them nor their base64"
    )
    func keptInKeychain() async throws {
        let server = try await TestServer.shared()
        let temporary = try TemporaryKeychain()
        let token = try AuthToken.basic(username: "alice", password: "pässwörd-£1")
        do {
            let store = KeychainTokenStore(origin: server.baseURL, store: temporary.store)
            try await makeSession(server) { $0.authenticator = Authenticator(store: store) }.signIn(with: token)
        }
        let store = KeychainTokenStore(origin: server.baseURL, store: try temporary.reopen())
        #expect(try await store.load() == token)
        let later = makeSession(server) { $0.authenticator = Authenticator(store: store) }
        #expect(try await later.get(Self.path).statusCode == 200)
        // The file and its WAL, where the write sits until a checkpoint.
        for path in [temporary.fileURL.path, temporary.fileURL.path + "-wal"]
        where FileManager.default.fileExists(atPath: path) {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            #expect(bytes.range(of: Data("pässwörd-£1".utf8)) == nil && bytes.range(of: Data("alice".utf8)) == nil)
            #expect(bytes.range(of: Data(token.accessToken.utf8)) == nil)
        }
    }
}
