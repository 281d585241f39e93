public import Foundation
import NIOCore
import NIOPosix

/// A server that misbehaves on purpose, at the byte level, for fault tests.
///
/// It reads a request head, then answers by the path:
///
/// | path | behaviour |
/// | --- | --- |
/// | `/reset-before-headers` | resets the connection (RST) without a byte |
/// | `/reset-mid-headers` | half a status line and header, then RST |
/// | `/reset-mid-body` | headers promising 1,000 bytes, 100 of them, then RST |
/// | `/truncated-chunked` | a chunked body cut inside a chunk, then FIN |
/// | `/short-body` | `Content-Length: 1000`, 10 bytes, then FIN |
/// | `/never` | reads the request and never answers |
/// | `/trickle` | headers, then one body byte a second |
/// | `/huge-header` | a 1 MB header line |
/// | `/many-headers` | 10,000 header fields |
/// | `/invalid-utf8` | invalid UTF-8 in a header value and in the body (a valid response) |
/// | `/huge-length-404` | a 404 announcing 9,000,000,000,000,000,000 bytes, with one, then FIN |
/// | `/big-error-500` | a 500 with a 3 MB body (`?chunked`: chunked, no length) |
/// | `/large-head` | a 200 head announcing 200 MB and no body (for HEAD requests) |
/// | `/terminal-escapes` | `ESC ] 0 ; … BEL` (a terminal's set-title sequence) in a header value and in a `text/plain` body (`?json`: a JSON body holding a raw C1 CSI) |
/// | `/trailers` | a 302 without `Location`, chunked, whose trailer fields say `Location: /elsewhere` and `Content-Type: text/html; charset=utf-16` |
/// | `/ok` | a small valid response |
/// | `/not-http` | an SSH server's greeting line, then FIN: not HTTP at all |
public final class FaultServer: Sendable {
    private let channel: any Channel
    /// The port.
    public let port: Int

    private init(channel: any Channel) {
        self.channel = channel
        port = channel.localAddress?.port ?? 0
    }

    /// `http://127.0.0.1:PORT/path`
    public func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)/\(path)")! }

    /// Starts the server on 127.0.0.1 and a free port.
    public static func start() async throws -> FaultServer {
        // An event loop of its own: fault timings must not depend on other servers' load.
        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup(numberOfThreads: 1))
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(FaultHandler())
                }
            }
        return FaultServer(channel: try await bootstrap.bind(host: "127.0.0.1", port: 0).get())
    }

    /// Stops listening.
    public func stop() async throws { try await channel.close() }
}

/// Reads up to the end of the request head, then misbehaves.
final class FaultHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private var received: [UInt8] = []
    private var answered = false
    private var trickleTask: RepeatedTask?

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        guard !answered, let bytes = buffer.readBytes(length: buffer.readableBytes) else { return }
        received.append(contentsOf: bytes)
        guard let end = headEnd() else { return }
        answered = true
        let head = String(decoding: received[..<end], as: UTF8.self)
        let target = head.split(separator: " ").dropFirst().first.map(String.init) ?? "/"
        let path = target.split(separator: "?").first.map(String.init) ?? target
        let query = target.split(separator: "?", maxSplits: 1).dropFirst().first.map(String.init) ?? ""
        respond(path: path, query: query, context: context)
    }

    private func headEnd() -> Int? {
        guard received.count >= 4 else { return nil }
        for index in 0...(received.count - 4)
        where received[index] == 13 && received[index + 1] == 10 && received[index + 2] == 13
            && received[index + 3] == 10
        {
            return index
        }
        return nil
    }

    private func write(_ text: String, context: ChannelHandlerContext) -> EventLoopFuture<Void> {
        write(Array(text.utf8), context: context)
    }

    private func write(_ bytes: [UInt8], context: ChannelHandlerContext) -> EventLoopFuture<Void> {
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: bytes)))
    }

    private func reset(_ context: ChannelHandlerContext) {
        // SO_LINGER with a zero timeout makes close() send RST instead of FIN.
        guard let provider = context.channel as? any SocketOptionProvider else {
            context.close(promise: nil)
            return
        }
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        provider.setSoLinger(linger(l_onoff: 1, l_linger: 0))
            .assumeIsolated().whenComplete { _ in loopBound.value.close(promise: nil) }
    }

    private func closeAfter(_ future: EventLoopFuture<Void>, context: ChannelHandlerContext, reset: Bool = false) {
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        future.assumeIsolated().whenComplete { _ in
            let (handler, context) = loopBound.value
            if reset { handler.reset(context) } else { context.close(promise: nil) }
        }
    }

    private func respond(path: String, query: String, context: ChannelHandlerContext) {
        switch path {
        case "/reset-before-headers":
            reset(context)
        case "/reset-mid-headers":
            closeAfter(
                write("HTTP/1.1 200 OK\r\nContent-Type: text/pl", context: context), context: context, reset: true)
        case "/reset-mid-body":
            let text = "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n" + String(repeating: "x", count: 100)
            closeAfter(write(text, context: context), context: context, reset: true)
        case "/truncated-chunked":
            let text = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n0123456789abcdef\r\n20\r\nabc"
            closeAfter(write(text, context: context), context: context)
        case "/short-body":
            closeAfter(
                write("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n0123456789", context: context), context: context)
        case "/never":
            break
        case "/not-http":
            closeAfter(write("SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n", context: context), context: context)
        case "/trickle":
            _ = write("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n", context: context)
            let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            trickleTask = context.eventLoop.scheduleRepeatedTask(
                initialDelay: TimeAmount.seconds(1), delay: TimeAmount.seconds(1)
            ) { _ in
                let (handler, context) = loopBound.value
                guard context.channel.isActive else { return }
                _ = handler.write("x", context: context)
            }
        case "/huge-header":
            let text =
                "HTTP/1.1 200 OK\r\nX-Huge: " + String(repeating: "h", count: 1_048_576)
                + "\r\nContent-Length: 2\r\n\r\nok"
            closeAfter(write(text, context: context), context: context)
        case "/many-headers":
            var text = "HTTP/1.1 200 OK\r\n"
            for index in 0..<10_000 { text += "X-Header-\(index): value-value-value-\(index)\r\n" }
            text += "Content-Length: 2\r\n\r\nok"
            closeAfter(write(text, context: context), context: context)
        case "/invalid-utf8":
            var bytes =
                Array("HTTP/1.1 200 OK\r\nX-Bad: ".utf8) + [0xFF, 0xFE, 0xC3]
                + Array("\r\nContent-Length: 4\r\n\r\n".utf8)
            bytes += [0xFF, 0xC0, 0x80, 0x41]
            closeAfter(write(bytes, context: context), context: context)
        case "/huge-length-404":
            closeAfter(
                write("HTTP/1.1 404 Not Found\r\nContent-Length: 9000000000000000000\r\n\r\nx", context: context),
                context: context)
        case "/big-error-500":
            let body = [UInt8](repeating: UInt8(ascii: "e"), count: 3_000_000)
            var bytes: [UInt8]
            if query.contains("chunked") {
                bytes = Array("HTTP/1.1 500 Internal Server Error\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
                for start in stride(from: 0, to: body.count, by: 65_536) {
                    let chunk = body[start..<min(start + 65_536, body.count)]
                    bytes += Array("\(String(chunk.count, radix: 16))\r\n".utf8) + chunk + Array("\r\n".utf8)
                }
                bytes += Array("0\r\n\r\n".utf8)
            } else {
                bytes = Array("HTTP/1.1 500 Internal Server Error\r\nContent-Length: \(body.count)\r\n\r\n".utf8) + body
            }
            closeAfter(write(bytes, context: context), context: context)
        case "/terminal-escapes":
            let sequence = "\u{1B}]0;pwned\u{07}"
            // `?json`: valid JSON whose string holds a raw C1 CSI (JSON allows it unescaped).
            let json = query.contains("json")
            let body = json ? "{\"title\":\"\u{9B}31mred\"}" : "title: \(sequence)\n"
            let text =
                "HTTP/1.1 200 OK\r\nX-Title: \(sequence)\r\nContent-Type: \(json ? "application/json" : "text/plain")\r\n"
                + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
            closeAfter(write(text, context: context), context: context)
        case "/trailers":
            let text =
                "HTTP/1.1 302 Found\r\nContent-Type: text/plain; charset=utf-8\r\nTransfer-Encoding: chunked\r\n"
                + "Trailer: Location, Content-Type\r\n\r\n5\r\nmoved\r\n0\r\n"
                + "Location: /elsewhere\r\nContent-Type: text/html; charset=utf-16\r\n\r\n"
            closeAfter(write(text, context: context), context: context)
        case "/large-head":
            _ = write(
                "HTTP/1.1 200 OK\r\nContent-Length: 200000000\r\nContent-Type: application/octet-stream\r\n\r\n",
                context: context)
        default:
            closeAfter(
                write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok", context: context),
                context: context)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        trickleTask?.cancel()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
