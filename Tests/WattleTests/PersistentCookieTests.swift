import Foundation
import Testing
import Wattle
import WattleDemoServer
import WattleTesting

@testable import WattleKeychain

@Suite(
    "Cookies kept in a keychain: a later session starts with them, sealed on disk, never replaced by a jar that did not read them"
)
struct PersistentCookieTests {
    /// A session whose jar is kept in `jar`, its host names reaching the test server.
    static func session(_ server: DemoServer, _ jar: KeychainCookieJar, names: [String] = ["api.test"]) -> Session {
        makeSession(server) {
            $0.cookies = .keychain(jar)
            $0.hostOverrides = names.map { .init(host: $0, port: server.port, address: "127.0.0.1") }
        }
    }

    static func api(_ server: DemoServer) -> String { "http://api.test:\(server.port)/" }

    @Test(
        "a later session, on the keychain file reopened, sends the cookies back, session cookies and HttpOnly included; the file and its WAL hold no value"
    )
    func keptAcrossSessions() async throws {
        let server = try await TestServer.shared()
        let temporary = try TemporaryKeychain()
        do {
            let first = Self.session(server, KeychainCookieJar(name: "intranet", store: temporary.store))
            _ = try await first.get(
                Self.api(server)
                    + CookieTests.setting(
                        "sid=s3cret-cookie-value; HttpOnly; Path=/", "pref=dark; Max-Age=3600; Path=/echo",
                        "gone=x; Max-Age=3600"))
            // Max-Age=0 removes it from the jar, and from the stored one.
            _ = try await first.get(Self.api(server) + CookieTests.setting("gone=x; Max-Age=0"))
        }
        let later = Self.session(server, KeychainCookieJar(name: "intranet", store: try temporary.reopen()))
        let listed = try await later.cookies().sorted { $0.name < $1.name }
        #expect(listed.map(\.name) == ["pref", "sid"])
        #expect(listed.last == Cookie(name: "sid", value: "s3cret-cookie-value", domain: "api.test", isHTTPOnly: true))
        #expect(
            try await CookieTests.sent(later, Self.api(server) + "echo") == [
                "sid": "s3cret-cookie-value", "pref": "dark",
            ])
        // Another jar name is another jar.
        let other = Self.session(server, KeychainCookieJar(name: "other", store: try temporary.reopen()))
        #expect(try await CookieTests.sent(other, Self.api(server) + "echo").isEmpty)
        for path in [temporary.fileURL.path, temporary.fileURL.path + "-wal"]
        where FileManager.default.fileExists(atPath: path) {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            #expect(
                bytes.range(of: Data("s3cret-cookie-value".utf8)) == nil
                    && bytes.range(of: Data("api.test".utf8)) == nil)
        }
    }

    @Test("removeAllCookies empties the jar and removes the stored item")
    func removeAll() async throws {
        let server = try await TestServer.shared()
        let store = KeychainStore.inMemory()
        let jar = KeychainCookieJar(name: "j", store: store)
        let session = Self.session(server, jar)
        _ = try await session.get(Self.api(server) + CookieTests.setting("sid=1"))
        #expect(try jar.keychain.data(forKey: jar.key) != nil)
        try await session.removeAllCookies()
        #expect(try jar.keychain.data(forKey: jar.key) == nil)
        #expect(try await session.cookies().isEmpty)
        #expect(try await Self.session(server, jar).cookies().isEmpty)
    }

    @Test(
        "a jar that cannot be read fails the request, unsent, and is not overwritten; the next request after an unlock reads it"
    )
    func unreadableJarFailsClosed() async throws {
        let server = try await TestServer.shared()
        let temporary = try TemporaryKeychain()
        // whenUnlocked: a locked store cannot read it.
        let jar = KeychainCookieJar(name: "j", keychain: Keychain(service: "cookies", store: temporary.store))
        _ = try await Self.session(server, jar).get(Self.api(server) + CookieTests.setting("sid=stored"))
        temporary.store.lock()
        let session = Self.session(server, jar)
        let unsent = "/never-sent-\(UUID().uuidString)"
        await #expect {
            _ = try await session.get("http://api.test:\(server.port)\(unsent)")
        } throws: { error in
            guard case .cookieJar(let reason) = error as? WattleError else { return false }
            return reason.contains("cannot read the stored jar") && reason.contains("KeychainCookieJar(cookies/j)")
        }
        #expect(server.stats.hits(unsent) == 0)
        await #expect(throws: WattleError.self) { try await session.cookies() }
        try temporary.store.unlock()
        #expect(try await CookieTests.sent(session, Self.api(server) + "echo") == ["sid": "stored"])
    }

    @Test(
        "a damaged item fails requests with cookieJar naming the line, its text never reaching libcurl as a command; removeAllCookies clears it"
    )
    func damagedItem() async throws {
        let server = try await TestServer.shared()
        let jar = KeychainCookieJar(name: "j", store: .inMemory())
        let good = "api.test\tFALSE\t/\tFALSE\t0\tsid\tv"
        try jar.keychain.set(Data("# Netscape HTTP Cookie File\n\(good)\nALL\n".utf8), forKey: jar.key)
        let session = Self.session(server, jar)
        await #expect {
            _ = try await session.get(Self.api(server) + "echo")
        } throws: { error in
            guard case .cookieJar(let reason) = error as? WattleError else { return false }
            return reason.contains("damaged (line 3)") && !reason.contains("sid")
        }
        try await session.removeAllCookies()
        _ = try await session.get(Self.api(server) + CookieTests.setting("fresh=1"))
        #expect(try await Self.session(server, jar).cookies().map(\.name) == ["fresh"])
    }

    @Test("concurrent responses setting cookies all end up stored: writes run in turn, each with the jar as it is then")
    func concurrentWrites() async throws {
        let server = try await TestServer.shared()
        let jar = KeychainCookieJar(name: "j", store: .inMemory())
        let session = Self.session(server, jar)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<16 {
                group.addTask {
                    _ = try await session.get(Self.api(server) + CookieTests.setting("c\(index)=\(index)"))
                }
            }
            try await group.waitForAll()
        }
        let stored = try await Self.session(server, jar).cookies()
        #expect(Set(stored.map(\.name)) == Set((0..<16).map { "c\($0)" }))
    }

    @Test(
        "addCookies puts checked cookies in the jar and stores them; a bad one is refused, none added, its value never shown"
    )
    func addCookies() async throws {
        let server = try await TestServer.shared()
        let jar = KeychainCookieJar(name: "j", store: .inMemory())
        let session = Self.session(server, jar, names: ["api.test", "www.api.test"])
        let refused: [(Cookie, String)] = [
            (Cookie(name: "", value: "v", domain: "api.test"), "name is empty"),
            (Cookie(name: "bad name", value: "v", domain: "api.test"), "contains a space"),
            (Cookie(name: "n", value: "s3cret;x=1", domain: "api.test"), "contains \";\""),
            (Cookie(name: "n", value: "s3cret\nALL", domain: "api.test"), "contains LF"),
            (Cookie(name: "n", value: "s3cret\tx", domain: "api.test"), "contains byte 0x9"),
            (Cookie(name: "n", value: "v", domain: "api.test/x"), "is not a host name"),
            (Cookie(name: "n", value: "v", domain: "#HttpOnly_api.test"), "is not a host name"),
            (Cookie(name: "n", value: "v", domain: "bücher.test"), "is not a host name"),
            (Cookie(name: "n", value: "v", domain: "api.test", path: "echo"), "does not start with /"),
            // A line starting "Set-Cookie:" is a header to libcurl; an IPv6 literal goes with the colon.
            (Cookie(name: "n", value: "v", domain: "set-cookie:x"), "is not a host name"),
            (Cookie(name: "n", value: "v", domain: "[::1]"), "is not a host name"),
            (Cookie(name: "__Secure-id", value: "v", domain: "api.test"), "must be secure"),
            (
                Cookie(name: "__Host-id", value: "v", domain: "api.test", path: "/echo", isSecure: true),
                "host-only and on path /"
            ),
            // Sent to every host under them otherwise: no server could set these.
            (Cookie(name: "n", value: "v", domain: "test", includesSubdomains: true), "public suffix"),
            (Cookie(name: "n", value: "v", domain: "co.uk", includesSubdomains: true), "public suffix"),
            (Cookie(name: "n", value: "v", domain: ".github.io", includesSubdomains: true), "public suffix"),
        ]
        for (cookie, expected) in refused {
            await #expect {
                try await session.addCookies([Cookie(name: "ok", value: "1", domain: "api.test"), cookie])
            } throws: { error in
                guard case .cookieJar(let reason) = error as? WattleError else { return false }
                return reason.contains(expected) && !reason.contains("s3cret")
            }
        }
        #expect(try await session.cookies().isEmpty)
        #expect(try jar.keychain.data(forKey: jar.key) == nil)

        try await session.addCookies([
            Cookie(name: "sid", value: "abc", domain: ".API.test", includesSubdomains: true),
            Cookie(name: "host", value: "1", domain: "api.test", path: "/echo"),
            // Host-only for one label, and a domain cookie for a registrable domain, are fine.
            Cookie(name: "single", value: "1", domain: "intranet"),
            Cookie(name: "site", value: "1", domain: "example.co.uk", includesSubdomains: true),
        ])
        #expect(try await CookieTests.sent(session, "http://www.api.test:\(server.port)/echo") == ["sid": "abc"])
        #expect(try await CookieTests.sent(session, Self.api(server) + "echo") == ["sid": "abc", "host": "1"])
        // The same name, domain and path replaces; an expiry in the past removes.
        try await session.addCookies([
            Cookie(name: "sid", value: "def", domain: "api.test", includesSubdomains: true),
            Cookie(
                name: "host", value: "1", domain: "api.test", path: "/echo", expiresAt: Date(timeIntervalSinceNow: -60)),
        ])
        #expect(try await CookieTests.sent(session, Self.api(server) + "echo") == ["sid": "def"])
        let stored = try await Self.session(server, jar).cookies()
        #expect(stored.filter { $0.name == "sid" }.map(\.value) == ["def"])
        #expect(Set(stored.map(\.name)) == ["sid", "single", "site"])
    }

    @Test("a task on the network thread's executor reads and writes the jar")
    func networkThreadExecutor() async throws {
        let server = try await TestServer.shared()
        let jar = KeychainCookieJar(name: "j", store: .inMemory())
        let session = Self.session(server, jar)
        let sent = try await session.withNetworkThreadExecutor {
            _ = try await session.get(Self.api(server) + CookieTests.setting("sid=1"))
            return try await CookieTests.sent(session, Self.api(server) + "echo")
        }
        #expect(sent == ["sid": "1"])
        #expect(try await Self.session(server, jar).cookies().map(\.name) == ["sid"])
    }

    @Test("an expiry beyond Int64's seconds (libcurl clamps a huge Max-Age there) is added, not a crash")
    func farExpiry() async throws {
        let server = try await TestServer.shared()
        let session = Self.session(server, KeychainCookieJar(name: "j", store: .inMemory()))
        _ = try await session.get(Self.api(server) + CookieTests.setting("far=1; Max-Age=99999999999999999999"))
        let listed = try await session.cookies()
        try await session.removeAllCookies()
        try await session.addCookies(
            listed + [
                Cookie(name: "inf", value: "1", domain: "api.test", expiresAt: Date(timeIntervalSince1970: .infinity)),
                Cookie(name: "big", value: "1", domain: "api.test", expiresAt: Date(timeIntervalSince1970: 1e30)),
            ])
        #expect(try await CookieTests.sent(session, Self.api(server) + "echo") == ["far": "1", "inf": "1", "big": "1"])
    }

    @Test("cookies of a head that arrived before the transfer failed (a body over the limit) are stored")
    func keptAfterAFailedTransfer() async throws {
        let server = try await TestServer.shared()
        let jar = KeychainCookieJar(name: "j", store: .inMemory())
        let session = makeSession(server) {
            $0.cookies = .keychain(jar)
            $0.hostOverrides = [.init(host: "api.test", port: server.port, address: "127.0.0.1")]
            $0.maximumResponseSize = 1  // the body is "ok"
        }
        await #expect {
            _ = try await session.get(Self.api(server) + CookieTests.setting("sid=1"))
        } throws: { error in
            if case .responseTooLarge = error as? WattleError { true } else { false }
        }
        #expect(try await Self.session(server, jar).cookies().map(\.name) == ["sid"])
    }

    @Test(
        "two sessions keeping one jar, each on its own connection to the file as two processes would, keep each other's cookies; a later change or a server's removal wins; removeAllCookies empties it for both"
    )
    func sharedJar() async throws {
        let server = try await TestServer.shared()
        let temporary = try TemporaryKeychain()
        func session() throws -> Session {
            Self.session(server, KeychainCookieJar(name: "shared", store: try temporary.reopen()))
        }
        func stored() async throws -> [String: String] {
            Dictionary(uniqueKeysWithValues: try await session().cookies().map { ($0.name, $0.value) })
        }
        _ = try await session().get(Self.api(server) + CookieTests.setting("x=1; Path=/", "y=1; Path=/", "z=1; Path=/"))
        let first = try session()
        let second = try session()
        // Both have read {x, y, z} before either writes.
        #expect(try await first.cookies().count == 3)
        #expect(try await second.cookies().count == 3)
        _ = try await first.get(Self.api(server) + CookieTests.setting("a=1; Path=/", "x=2; Path=/"))
        #expect(try await stored() == ["a": "1", "x": "2", "y": "1", "z": "1"])
        // The second session's own changes go in; its x, unchanged since it read it, does not
        // replace the first's newer one; its server's removal of z is kept.
        _ = try await second.get(
            Self.api(server) + CookieTests.setting("b=1; Path=/", "y=2; Path=/", "z=; Max-Age=0; Path=/"))
        #expect(try await stored() == ["a": "1", "b": "1", "x": "2", "y": "2"])
        _ = try await first.get(Self.api(server) + CookieTests.setting("c=1; Path=/"))
        #expect(try await stored() == ["a": "1", "b": "1", "c": "1", "x": "2", "y": "2"])
        // A write's changes are counted from the last write: the first's x=2, stored already,
        // does not replace the second's later x=3.
        _ = try await second.get(Self.api(server) + CookieTests.setting("x=3; Path=/"))
        _ = try await first.get(Self.api(server) + CookieTests.setting("e=1; Path=/"))
        #expect(try await stored() == ["a": "1", "b": "1", "c": "1", "e": "1", "x": "3", "y": "2"])
        // Signing out in one empties the stored jar; the other's next write adds its new
        // cookie, not the ones it holds unchanged.
        try await second.removeAllCookies()
        #expect(try await stored().isEmpty)
        _ = try await first.get(Self.api(server) + CookieTests.setting("d=1; Path=/"))
        #expect(try await stored() == ["d": "1"])
    }

    @Test(
        "removeAllCookies empties a jar whose sealed item is damaged (it never reads it), and the next write stores a fresh jar"
    )
    func removeAllDamagedSecret() async throws {
        let server = try await TestServer.shared()
        let store = KeychainStore.inMemory()
        let jar = KeychainCookieJar(name: "j", store: store)
        let reader = Self.session(server, jar)
        _ = try await reader.get(Self.api(server) + CookieTests.setting("sid=1"))
        var row = try #require(try store.withStorage { try $0.allRows() }.first)
        row.secret[row.secret.count - 1] ^= 1
        try store.withStorage { storage in try storage.write { try storage.upsert(row) } }
        // A session that read the jar before the damage: its next write says what to do.
        await #expect {
            try await reader.addCookies([Cookie(name: "n", value: "1", domain: "api.test")])
        } throws: { error in
            guard case .cookieJar(let reason) = error as? WattleError else { return false }
            return reason.contains("is damaged") && reason.contains("removeAllCookies() empties it")
        }
        let session = Self.session(server, jar)
        await #expect(throws: WattleError.self) { _ = try await session.get(Self.api(server) + "echo") }
        try await session.removeAllCookies()
        #expect(try !jar.keychain.hasValue(forKey: jar.key))
        _ = try await session.get(Self.api(server) + CookieTests.setting("fresh=1"))
        #expect(try await Self.session(server, jar).cookies().map(\.name) == ["fresh"])
    }

    @Test(
        "a stored line libcurl folds into another cookie on reading (libcurl 7.88 compares paths in any case) is not taken for a removal by the next write"
    )
    func foldedLinesStay() async throws {
        let server = try await TestServer.shared()
        let jar = KeychainCookieJar(name: "j", store: .inMemory())
        let folded = "api.test\tFALSE\t/P\tFALSE\t0\tx\t1"
        let lines = [folded, "api.test\tFALSE\t/p\tFALSE\t0\tx\t2"]
        try jar.keychain.set(
            Data((["# Netscape HTTP Cookie File"] + lines).joined(separator: "\n").utf8), forKey: jar.key)
        let session = Self.session(server, jar)
        #expect(try await session.cookies().map(\.path) == ["/p"])
        _ = try await session.get(Self.api(server) + CookieTests.setting("c=1; Path=/"))
        let stored = String(decoding: try #require(try jar.keychain.data(forKey: jar.key)), as: UTF8.self)
        #expect(stored.contains(folded), "\(stored)")
    }
}
