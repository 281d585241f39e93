public import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

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

    private init(channel: any Channel, stats: ServerStats) {
        self.channel = channel
        self.port = channel.localAddress?.port ?? 0
        self.stats = stats
    }

    /// The server's base URL, `http://127.0.0.1:PORT/`.
    public var baseURL: URL { URL(string: "http://127.0.0.1:\(port)/")! }

    /// An absolute URL for a path on this server.
    public func url(_ path: String) -> URL {
        URL(string: "http://127.0.0.1:\(port)/\(path.hasPrefix("/") ? String(path.dropFirst()) : path)")!
    }

    /// Starts a server on `host` (default 127.0.0.1) and `port` (default 0: any free port).
    public static func start(host: String = "127.0.0.1", port: Int = 0) async throws -> DemoServer {
        let stats = ServerStats()
        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelOption(.maxMessagesPerRead, value: 16)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(
                        withPipeliningAssistance: true, withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandler(HTTPRouteHandler(stats: stats))
                }
            }
        let channel = try await bootstrap.bind(host: host, port: port).get()
        return DemoServer(channel: channel, stats: stats)
    }

    /// Stops listening. Open connections are closed.
    public func stop() async throws {
        try await channel.close()
    }
}
