public import Foundation
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL

/// Wattle's embedded HTTP server, bound to 127.0.0.1 on a free port.
///
/// It serves the test routes (``TestRoutes``: echo, status, redirects, delays, large and broken
/// bodies) that Wattle's own tests run against, and is the core of the demo API.
///
/// ```swift
/// let server = try await DemoServer.start()
/// defer { Task { try await server.stop() } }
/// let response = try await session.get(server.url("echo").absoluteString)
/// ```
public final class DemoServer: Sendable {
    private let channel: any Channel
    /// The port the server listens on.
    public let port: Int
    /// Counts requests per path, for tests that check how often a route was hit.
    public let stats: ServerStats
    /// The demo API's state (tokens, settings).
    public let api: DemoAPI

    /// `http` or `https`.
    public let scheme: String

    private init(channel: any Channel, stats: ServerStats, api: DemoAPI, scheme: String) {
        self.channel = channel
        self.api = api
        self.port = channel.localAddress?.port ?? 0
        self.stats = stats
        self.scheme = scheme
    }

    /// The server's base URL, `http(s)://127.0.0.1:PORT/`.
    public var baseURL: URL { baseURL(host: "127.0.0.1") }

    /// The base URL with another host name (which must resolve to 127.0.0.1).
    public func baseURL(host: String) -> URL { URL(string: "\(scheme)://\(host):\(port)/")! }

    /// An absolute URL for a path on this server.
    public func url(_ path: String, host: String = "127.0.0.1") -> URL {
        URL(string: "\(scheme)://\(host):\(port)/\(path.hasPrefix("/") ? String(path.dropFirst()) : path)")!
    }

    /// Starts a server on `host` (default 127.0.0.1) and `port` (default 0: any free port),
    /// over TLS with `tls` when given.
    ///
    /// With `http2`, a TLS server offers HTTP/2 by ALPN (`h2`, then `http/1.1`, so clients
    /// without HTTP/2 still get HTTP/1.1), and a plain server speaks HTTP/2 with prior knowledge
    /// only (h2c, no HTTP/1.1). Each HTTP/2 stream is served by the same routes as an HTTP/1.1
    /// request; ``ServerStats/connectionCount`` counts connections, not streams.
    ///
    /// With `maximumRequestsPerConnection`, a connection ends gracefully after that many
    /// requests, as nginx's `keepalive_requests` does: over HTTP/1.1 the last response says
    /// `Connection: close` and the connection closes after it; over HTTP/2 the server sends
    /// `GOAWAY` with that stream, and streams opened after it go unanswered, for the client to
    /// retry on a new connection.
    ///
    /// With `closeUnansweredAfter`, an HTTP/1.1 connection answers that many requests and then
    /// closes when the next one arrives, without answering it: a server whose keep-alive timeout
    /// ran out just as the request came in. A client that sent it on a reused connection must
    /// retry it on a new one.
    ///
    /// With `clientCertificateAuthority` (PEM) and `tls`, the server asks every client for a
    /// certificate and completes only handshakes whose certificate that authority issued
    /// (mutual TLS).
    public static func start(
        host: String = "127.0.0.1", port: Int = 0, tls: TLSIdentity? = nil, http2: Bool = false,
        maximumRequestsPerConnection: Int? = nil, closeUnansweredAfter: Int? = nil,
        clientCertificateAuthority: String? = nil
    ) async throws -> DemoServer {
        let stats = ServerStats()
        let api = DemoAPI()
        let sslContext = try tls.map { identity in
            var configuration = TLSConfiguration.makeServerConfiguration(
                certificateChain: try NIOSSLCertificate.fromPEMBytes(Array(identity.certificatePEM.utf8)).map {
                    .certificate($0)
                },
                privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(identity.privateKeyPEM.utf8), format: .pem)))
            configuration.applicationProtocols = http2 ? ["h2", "http/1.1"] : ["http/1.1"]
            if let clientCertificateAuthority {
                // Required, and checked against that authority alone (a server has no host name
                // to check a client's certificate against).
                configuration.certificateVerification = .noHostnameVerification
                configuration.trustRoots = .certificates(
                    try NIOSSLCertificate.fromPEMBytes(Array(clientCertificateAuthority.utf8)))
            }
            return try NIOSSLContext(configuration: configuration)
        }
        let routes: @Sendable (RouteRequest) -> RouteOutcome = { api.route($0) ?? TestRoutes.route($0) }
        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelOption(.maxMessagesPerRead, value: 16)
            .childChannelInitializer { channel in
                stats.recordConnection()
                let http1: NIOChannelInitializer = {
                    serveHTTP1(
                        on: $0, stats: stats, limit: maximumRequestsPerConnection,
                        closeUnansweredAfter: closeUnansweredAfter,
                        routes: routes)
                }
                let h2: NIOChannelInitializer = {
                    serveHTTP2(on: $0, stats: stats, limit: maximumRequestsPerConnection, routes: routes)
                }
                guard let sslContext else { return http2 ? h2(channel) : http1(channel) }
                do {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: sslContext))
                } catch {
                    return channel.eventLoop.makeFailedFuture(error)
                }
                guard http2 else { return http1(channel) }
                return channel.configureHTTP2SecureUpgrade(h2ChannelConfigurator: h2, http1ChannelConfigurator: http1)
            }
        let channel = try await bootstrap.bind(host: host, port: port).get()
        return DemoServer(channel: channel, stats: stats, api: api, scheme: tls == nil ? "http" : "https")
    }

    /// HTTP/1.1 on a connection: NIO's codec (with pipelining assistance), then the routes.
    private static func serveHTTP1(
        on channel: any Channel, stats: ServerStats, limit: Int?, closeUnansweredAfter: Int?,
        routes: @escaping @Sendable (RouteRequest) -> RouteOutcome
    ) -> EventLoopFuture<Void> {
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.configureHTTPServerPipeline(
                withPipeliningAssistance: true, withErrorHandling: true)
            try channel.pipeline.syncOperations.addHandler(
                HTTPRouteHandler(
                    stats: stats, maximumRequests: limit, closeUnansweredAfter: closeUnansweredAfter, routes: routes))
        }
    }

    /// HTTP/2 on a connection: each stream is a child channel that translates its frames to the
    /// HTTP/1 parts the routes handle. A 1 MiB flow-control window, so that one stream's
    /// download is not throttled by acknowledgements.
    private static func serveHTTP2(
        on channel: any Channel, stats: ServerStats, limit: Int?,
        routes: @escaping @Sendable (RouteRequest) -> RouteOutcome
    ) -> EventLoopFuture<Void> {
        channel.configureHTTP2Pipeline(mode: .server, targetWindowSize: 1 << 20) { stream in
            stream.eventLoop.makeCompletedFuture {
                try stream.pipeline.syncOperations.addHandler(HTTP2FramePayloadToHTTP1ServerCodec())
                try stream.pipeline.syncOperations.addHandler(HTTPRouteHandler(stats: stats, routes: routes))
            }
        }.flatMapThrowing { multiplexer in
            if let limit {
                try channel.pipeline.syncOperations.addHandler(
                    HTTP2StreamLimitHandler(limit: limit), position: .before(multiplexer))
            }
        }
    }

    /// Stops listening. Open connections are closed.
    public func stop() async throws {
        try await channel.close()
    }
}
