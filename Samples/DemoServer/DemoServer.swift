public import Foundation
import NIOCore
import NIOHTTP1
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
    public static func start(host: String = "127.0.0.1", port: Int = 0, tls: TLSIdentity? = nil) async throws -> DemoServer {
        let stats = ServerStats()
        let api = DemoAPI()
        let sslContext = try tls.map { identity in
            var configuration = TLSConfiguration.makeServerConfiguration(
                certificateChain: try NIOSSLCertificate.fromPEMBytes(Array(identity.certificatePEM.utf8)).map { .certificate($0) },
                privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(identity.privateKeyPEM.utf8), format: .pem)))
            configuration.applicationProtocols = ["http/1.1"]
            return try NIOSSLContext(configuration: configuration)
        }
        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelOption(.maxMessagesPerRead, value: 16)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let sslContext {
                        try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: sslContext))
                    }
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(
                        withPipeliningAssistance: true, withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandler(HTTPRouteHandler(stats: stats) { api.route($0) ?? TestRoutes.route($0) })
                }
            }
        let channel = try await bootstrap.bind(host: host, port: port).get()
        return DemoServer(channel: channel, stats: stats, api: api, scheme: tls == nil ? "http" : "https")
    }

    /// Stops listening. Open connections are closed.
    public func stop() async throws {
        try await channel.close()
    }
}
