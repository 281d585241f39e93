import Foundation
import TestProxies
import Testing
import WattleDemoServer

@testable import Wattle

/// Requests through real proxies on 127.0.0.1 (tinyproxy and microsocks, see ``LocalProxy``):
/// plain `http` forwarded, `https` tunnelled with the server's certificate verified as without
/// a proxy, SOCKS5, proxy credentials, and the failures a proxy causes, each named without its
/// password.
@Suite("Proxies: forwarding, CONNECT tunnels, SOCKS5, credentials, failures")
struct ProxyTests {
    static let password = "pr0xy-s3cret"

    @Test("Plain http goes through the proxy, which forwards each request and its body")
    func forwardsPlainHTTP() async throws {
        let proxy = try LocalProxy.tinyproxy()
        let server = try await TestServer.shared()
        let session = makeSession(server) { $0.proxy = .url(proxy.url()) }
        for index in 0..<5 {
            let echo = try await session.get("echo", parameters: ["n": index]).decode(Echo.self)
            #expect(echo.query == "n=\(index)")
            #expect(echo.header("Via")?.contains(LocalProxy.viaName) == true, "the request did not pass the proxy")
        }
        let posted = try await session.post("echo", parameters: ["id": 7]).decode(Echo.self)
        #expect(posted.method == "POST" && posted.body == #"{"id":7}"#)
        #expect(posted.header("Via")?.contains(LocalProxy.viaName) == true)
        let lines = proxy.requestLines()
        #expect(lines.count == 6)
        #expect(lines.first == "GET http://127.0.0.1:\(server.port)/echo?n=0 HTTP/1.1")
        #expect(lines.last == "POST http://127.0.0.1:\(server.port)/echo HTTP/1.1")
    }

    @Test(
        "https goes through one CONNECT tunnel: HTTP/2 with the server inside it, the allowlist applied to the server")
    func tunnelsHTTPS() async throws {
        let proxy = try LocalProxy.tinyproxy()
        let server = try await DemoServer.start(tls: try TLSServers.identity.get(), http2: true)
        let session = tlsSession {
            $0.baseURL = server.baseURL
            $0.trust.selfSignedHosts = ["127.0.0.1"]
            $0.proxy = .url(proxy.url())
        }
        for index in 0..<10 {
            let response = try await session.get("echo", parameters: ["n": index])
            #expect(response.metrics.httpVersion == "2")
            #expect(response.metrics.reusedConnection == (index > 0))
            let echo = try response.decode(Echo.self)
            #expect(echo.query == "n=\(index)")
            // The proxy only relays bytes: it cannot add a header to what it cannot read.
            #expect(echo.header("Via") == nil)
        }
        let destination = try temporaryFolder().appendingPathComponent("through-proxy.bin")
        let download = try await session.download("bytes/3000000", to: destination)
        #expect(download.metrics.reusedConnection)
        try expectPattern(in: destination, count: 3_000_000)
        #expect(proxy.requestLines() == ["CONNECT 127.0.0.1:\(server.port) HTTP/1.1"])
        #expect(server.stats.connectionCount == 1)
        try await server.stop()
    }

    @Test("https through a proxy to a host that is not allowlisted is refused: the tunnel changes nothing")
    func tunnelFailsClosed() async throws {
        let proxy = try LocalProxy.tinyproxy()
        let server = try await DemoServer.start(tls: try TLSServers.identity.get())
        let session = tlsSession {
            $0.baseURL = server.baseURL
            $0.proxy = .url(proxy.url())
        }
        await expectWattleError({ _ = try await session.get("echo") }) { isUntrusted($0, host: "127.0.0.1") }
        // The refusal came from verifying the server through the tunnel, not from a bypass.
        #expect(proxy.requestLines() == ["CONNECT 127.0.0.1:\(server.port) HTTP/1.1"])
        #expect(server.stats.totalRequests == 0)
        try await server.stop()
    }

    @Test("An https proxy whose certificate is not trusted fails as the proxy's handshake, never as the server's")
    func untrustedHTTPSProxy() async throws {
        // A TLS server with a self-signed certificate stands in for the proxy: the handshake
        // with it fails before anything is proxied.
        let tlsProxy = try await TLSServers.server()
        let plain = try await TestServer.shared()
        let proxyURL = "https://127.0.0.1:\(tlsProxy.port)"
        // The allowlist is for servers: it does not relax the proxy's check.
        let session = makeSession(plain) {
            $0.proxy = .url(proxyURL)
            $0.trust.selfSignedHosts = ["127.0.0.1"]
        }
        for endpoint in ["echo", "https://127.0.0.1:\(tlsProxy.port)/echo"] {
            await expectWattleError({ _ = try await session.get(endpoint) }) {
                guard case .proxyFailed(let proxy, .handshakeFailed(let reason)) = $0 else { return false }
                return proxy == proxyURL && reason.contains("not trusted")
                    && !$0.description.contains("selfSignedHosts")
            }
        }
    }

    @Test("Proxy credentials from the URL are sent; wrong ones fail clearly, without the password anywhere")
    func credentials() async throws {
        let proxy = try LocalProxy.tinyproxy(credentials: ("wattle", Self.password))
        let server = try await TestServer.shared()
        let tlsServer = try await DemoServer.start(tls: try TLSServers.identity.get())
        func session(_ password: String, base: URL) -> Session {
            tlsSession {
                $0.baseURL = base
                $0.trust.selfSignedHosts = ["127.0.0.1"]
                $0.proxy = .url(proxy.url(user: "wattle", password: password))
            }
        }
        let good = session(Self.password, base: server.baseURL)
        #expect(try await good.get("echo").decode(Echo.self).header("Via")?.contains(LocalProxy.viaName) == true)
        #expect(try await session(Self.password, base: tlsServer.baseURL).get("echo").statusCode == 200)

        // Plain http: the proxy answers the request itself (tinyproxy with 401 for wrong
        // credentials, 407 for none).
        let wrong = "not-the-" + Self.password
        await expectWattleError({ _ = try await session(wrong, base: server.baseURL).get("echo") }) { error in
            guard case .httpStatus(let response) = error else { return false }
            return [401, 407].contains(response.statusCode) && !"\(error)".contains(wrong)
        }
        #expect(proxy.requestLines().filter { $0.hasPrefix("GET http://127.0.0.1:\(server.port)/echo") }.count == 2)
        // https: the proxy refuses the tunnel.
        await expectWattleError({ _ = try await session(wrong, base: tlsServer.baseURL).get("echo") }) { error in
            guard case .proxyFailed(let name, .refusedTunnel(let status, let target)) = error else { return false }
            let text = "\(error) \(String(reflecting: error))"
            return name == "http://127.0.0.1:\(proxy.port)" && (status == 407 || status == 401)
                && target == "127.0.0.1:\(tlsServer.port)" && text.contains("user name and password")
                && !error.isTransient && !text.contains(wrong) && !text.contains("wattle:")
        }
        #expect(tlsServer.stats.totalRequests == 1)
        try await tlsServer.stop()
    }

    @Test("SOCKS5 with credentials: https to the allowlisted server through one SOCKS connection")
    func socks5() async throws {
        let proxy = try LocalProxy.microsocks(credentials: ("wattle", Self.password))
        let server = try await DemoServer.start(tls: try TLSServers.identity.get(), http2: true)
        let session = tlsSession {
            $0.baseURL = server.baseURL
            $0.trust.selfSignedHosts = ["127.0.0.1"]
            $0.proxy = .url(proxy.url(user: "wattle", password: Self.password))
        }
        for index in 0..<5 {
            let response = try await session.get("echo", parameters: ["n": index])
            #expect(response.metrics.httpVersion == "2")
            #expect(try response.decode(Echo.self).query == "n=\(index)")
        }
        #expect(proxy.socksConnections() == ["127.0.0.1:\(server.port)"])
        #expect(server.stats.connectionCount == 1)
        try await server.stop()
    }

    @Test("SOCKS5 failures: wrong credentials are the proxy's, not transient; a server it cannot reach is the server's")
    func socks5Failures() async throws {
        let proxy = try LocalProxy.microsocks(credentials: ("wattle", Self.password))
        let server = try await DemoServer.start()
        let wrong = "not-the-" + Self.password
        let refused = makeSession(server) { $0.proxy = .url(proxy.url(user: "wattle", password: wrong)) }
        await expectWattleError({ _ = try await refused.get("echo") }) { error in
            guard case .proxyFailed(let name, .handshakeFailed(let reason)) = error else { return false }
            return name == "socks5h://127.0.0.1:\(proxy.port)" && reason.contains("rejected") && !error.isTransient
                && !"\(error)".contains(wrong)
        }
        let closedPort = try refusedPort()
        let session = makeSession(server) { $0.proxy = .url(proxy.url(user: "wattle", password: Self.password)) }
        await expectWattleError({ _ = try await session.get("http://127.0.0.1:\(closedPort)/echo") }) { error in
            guard case .cannotConnect(let host, let port, let reason) = error else { return false }
            return host == "127.0.0.1" && port == closedPort
                && reason.contains("the proxy socks5h://127.0.0.1:\(proxy.port)")
                && error.isTransient && !"\(error)".contains(Self.password)
        }
        #expect(try await session.get("echo").statusCode == 200)
        #expect(server.stats.totalRequests == 1)
        try await server.stop()
    }

    @Test(
        "A proxy that cannot be reached fails every request as proxyFailed, transient, naming it without its password")
    func unreachableProxy() async throws {
        let server = try await DemoServer.start()
        let port = try refusedPort()
        let session = makeSession(server) { $0.proxy = .url("http://wattle:\(Self.password)@127.0.0.1:\(port)") }
        await expectWattleError({ _ = try await session.get("echo") }) { error in
            guard case .proxyFailed(let name, .unreachable(let reason)) = error else { return false }
            return name == "http://127.0.0.1:\(port)" && reason.contains("connection refused") && error.isTransient
                && !"\(error)".contains(Self.password)
        }
        #expect(server.stats.totalRequests == 0)
        try await server.stop()
    }

    @Test(
        "A proxy URL that is not usable fails every request unsent, and is named without its password",
        arguments: [
            ("ftp://wattle:\(password)@127.0.0.1:2121", "scheme \"ftp\""),
            ("http://wattle:\(password)@127.0.0.1:3128/some/path", "no path"),
            ("http://wattle:\(password)@:3128", "no host"),
            ("   ", "empty"),
            // A password with an unencoded reserved character: the URL parses wrong or not at all.
            ("http://wattle:\(password)#x@127.0.0.1:3128", "percent-encoded"),
            ("http://wattle:\(password)/x@127.0.0.1:3128", "percent-encoded"),
            ("http://wattle:\(password)?x@127.0.0.1:3128", "percent-encoded"),
        ])
    func unusableProxyURL(url: String, reason: String) async throws {
        let server = try await DemoServer.start()
        let session = makeSession(server) { $0.proxy = .url(url) }
        for _ in 0..<2 {
            await expectWattleError({ _ = try await session.get("echo") }) { error in
                guard case .invalidURL(let shown, let why) = error else { return false }
                return why.contains("not a usable proxy URL") && why.contains(reason) && !shown.contains(Self.password)
                    && !"\(error)".contains(Self.password)
            }
        }
        #expect(server.stats.totalRequests == 0 && server.stats.connectionCount == 0)
        try await server.stop()
    }

    @Test("A proxy URL libcurl cannot read is refused as invalid, not transient, its password kept out of the error")
    func proxyURLLibcurlCannotRead() async throws {
        // URLComponents accepts a comma in a host name; libcurl's URL parser does not.
        let server = try await DemoServer.start()
        let session = makeSession(server) { $0.proxy = .url("http://wattle:\(Self.password)@pro,xy.example:3128") }
        await expectWattleError({ _ = try await session.get("echo") }) { error in
            guard case .invalidURL(let shown, let why) = error else { return false }
            return why.contains("libcurl cannot read it") && shown == "http://pro,xy.example:3128" && !error.isTransient
                && !"\(error)".contains(Self.password)
        }
        #expect(server.stats.totalRequests == 0)
        try await server.stop()
    }

    @Test(
        "libcurl's messages lose any credentials they quote; other messages are unchanged",
        arguments: [
            "Unsupported proxy syntax in 'wattle:s3cr et@proxy.example:3128'",
            "Unsupported proxy syntax in 'http://wattle:s3cr et@pro,xy.example:3128'",
            "Unsupported proxy scheme for 'ftp://wattle:s3cr3t@proxy.example:21'",
            "Could not connect to http://wattle:s3cr3t@proxy.example:3128 now",
            "proxy wattle:s3cr3t@proxy.example said no",
        ])
    func curlMessagesLoseCredentials(message: String) {
        let redacted = Redaction.curlMessage(message)
        #expect(!redacted.contains("s3cr") && !redacted.contains("wattle"), "\(redacted)")
        #expect(redacted.contains("proxy.example") || redacted.contains("pro,xy.example"), "\(redacted)")
    }

    @Test("libcurl's messages without credentials pass unchanged; a proxy URL shows only scheme://host:port")
    func redactionLeavesTheRest() {
        for message in [
            "Failed to connect to 127.0.0.1 port 8080 after 0 ms: Connection refused",
            "SSL: no alternative certificate subject name matches target host name 'example.com'",
            "Could not resolve host: example.com",
        ] {
            #expect(Redaction.curlMessage(message) == message)
        }
        #expect(Redaction.proxyURL("wattle:pa://ss@proxy.example:3128") == "http://proxy.example:3128")
        #expect(Redaction.proxyURL("SOCKS5h://wattle:pw@[::1]:1080/") == "SOCKS5h://[::1]:1080")
        #expect(Redaction.proxyURL("proxy.example:3128") == "http://proxy.example:3128")
    }

    @Test(
        "A configuration's description, debug description and dump never show the proxy's password",
        arguments: [
            "http://wattle:\(password)@proxy.example:3128", "wattle:\(password)@proxy.example:3128",
            "socks5h://wattle:\(password)@proxy.example:1080", "http://wattle:\(password)@proxy example:3128",
            "http://wattle:\(password)#x@proxy.example:3128", "http://wattle:\(password)/x@proxy.example:3128",
            "http://wattle:x?\(password)@proxy.example:3128",
        ])
    func descriptionsHideThePassword(url: String) {
        var configuration = Configuration()
        configuration.proxy = .url(url)
        var dumped = ""
        dump(configuration, to: &dumped)
        for text in [
            "\(configuration)", String(reflecting: configuration), dumped, "\(configuration.proxy)",
            String(reflecting: configuration.proxy),
        ] {
            #expect(!text.contains(Self.password), "\(text)")
        }
        #expect("\(configuration.proxy)".contains(url.hasPrefix("socks5h") ? ":1080" : ":3128"))
    }

    @Test(
        "an unreachable proxy from the environment is named only when libcurl's message names that proxy",
        arguments: [
            // (https?, environment, libcurl's message, expected)
            (
                false, ["http_proxy": "http://u:pw@127.0.0.1:9"],
                "Failed to connect to 127.0.0.1 port 9 after 0 ms: Couldn't connect to server",
                "http://127.0.0.1:9 (from the environment)"
            ),
            (
                true, ["HTTPS_PROXY": "proxy.corp:3128"],
                "Failed to connect to proxy.corp port 3128 after 5 ms: Connection refused",
                "http://proxy.corp:3128 (from the environment)"
            ),
            (
                true, ["https_proxy": "", "ALL_PROXY": "socks5h://[::1]"],
                "Failed to connect to ::1 port 1080 after 0 ms: Couldn't connect to server",
                "socks5h://[::1]:1080 (from the environment)"
            ),
            // The server itself, sent direct by no_proxy, in libcurl's spelling: not the proxy.
            (
                true, ["https_proxy": "http://proxy.corp:3128"],
                "Failed to connect to xn--bcher-kva.example port 443 after 9 ms: Connection refused", nil
            ),
            (
                false, ["http_proxy": "http://proxy.corp:3128"],
                "Failed to connect to 127.0.0.1 port 8080 after 0 ms: Couldn't connect to server", nil
            ),
            // http ignores HTTPS_PROXY and upper-case HTTP_PROXY, as libcurl does.
            (
                false, ["HTTP_PROXY": "http://127.0.0.1:9", "https_proxy": "http://127.0.0.1:9"],
                "Failed to connect to 127.0.0.1 port 9 after 0 ms: Couldn't connect to server", nil
            ),
            // No proxy variable, or another message.
            (false, [:], "Failed to connect to 127.0.0.1 port 9 after 0 ms: Couldn't connect to server", nil),
            (false, ["http_proxy": "http://127.0.0.1:9"], "Connection refused", nil),
        ] as [(Bool, [String: String], String, String?)])
    func environmentProxyNaming(https: Bool, environment: [String: String], message: String, expected: String?) {
        let target = TransportRequest.Target(
            string: https ? "https://bücher.example/" : "http://127.0.0.1:8080/", isHTTPS: https,
            host: https ? "bücher.example" : "127.0.0.1", port: https ? 443 : 8080)
        #expect(CurlTransfer.environmentProxy(failedToConnect: message, target: target) { environment[$0] } == expected)
    }
}
