import Foundation
import NIOCore
import NIOHTTP1

/// What a route asks the connection to do.
enum RouteOutcome: Sendable {
    /// A complete response.
    case respond(status: Int, headers: [(String, String)], body: [UInt8])
    /// `totalBytes` of the deterministic pattern (byte `i` is `i % 251`), streamed with
    /// back-pressure so memory stays flat whatever the size.
    case stream(status: Int, headers: [(String, String)], totalBytes: Int)
    /// Announces `declaredLength` bytes, sends `sentBytes`, then closes the connection.
    case truncated(declaredLength: Int, sentBytes: Int)
    /// Announces `declaredLength` bytes, sends `sentBytes`, then sends nothing more and keeps
    /// the connection open (for stall timeouts).
    case stall(declaredLength: Int, sentBytes: Int)
    /// A head announcing `declaredLength` bytes and `body` (shorter), then the connection
    /// closes, or with `stall` stays open and silent. With no `declaredLength`, an HTTP/1.0
    /// head without a length: the body is what comes before the close, as from an old server.
    case cut(status: Int, headers: [(String, String)], body: [UInt8], declaredLength: Int?, stall: Bool)
    /// Server-sent events: the head at once, then `count` events (`id: i`, `data: {"n":i}`),
    /// the first after `delay` milliseconds and one every `interval` milliseconds after it,
    /// chunked, then the end of the body.
    case events(count: Int, intervalMilliseconds: Int, delayMilliseconds: Int)
    /// The outcome after a delay.
    indirect case delayed(milliseconds: Int, RouteOutcome)
    /// The outcome once the gate opens.
    indirect case held(RouteGate, RouteOutcome)
    /// Closes the connection without any response.
    case close
}

/// A parsed request as routes see it.
struct RouteRequest: Sendable {
    var method: String
    var uri: String
    var path: String
    var query: String
    var headers: [(String, String)]
    var body: [UInt8]
    /// How many requests arrived for this path so far, this one included.
    var hitCount = 1

    /// Query parameters, percent-decoded, in order.
    var queryItems: [(String, String)] { Self.formItems(query) }

    /// The fields of an `application/x-www-form-urlencoded` text, percent-decoded, in order.
    static func formItems(_ text: String) -> [(String, String)] {
        text.split(separator: "&", omittingEmptySubsequences: true).map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (formDecoded(parts[0]), parts.count > 1 ? formDecoded(parts[1]) : "")
        }
    }

    /// One form-encoded name or value, decoded: `+` is a space, `%XX` a byte (kept as it is when
    /// it does not decode).
    static func formDecoded(_ text: Substring) -> String {
        text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(text)
    }

    func queryValue(_ name: String) -> String? { queryItems.first { $0.0 == name }?.1 }

    func header(_ name: String) -> String? { headers.first { $0.0.lowercased() == name.lowercased() }?.1 }
}

/// Reads each HTTP/1.1 request (or HTTP/2 stream, through NIO's translating codec), asks the
/// routes for an outcome, and carries it out.
final class HTTPRouteHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let stats: ServerStats
    private let routes: @Sendable (RouteRequest) -> RouteOutcome
    private var head: HTTPRequestHead?
    private var body: [UInt8] = []
    private static let maximumBody = 64 * 1024 * 1024

    /// With a limit, the connection closes after that many requests (HTTP/1.1).
    private let maximumRequests: Int?
    /// With a limit, the request after that many closes the connection unanswered.
    private let closeUnansweredAfter: Int?
    private var requestsServed = 0

    init(
        stats: ServerStats, maximumRequests: Int? = nil, closeUnansweredAfter: Int? = nil,
        routes: @escaping @Sendable (RouteRequest) -> RouteOutcome = TestRoutes.route
    ) {
        self.stats = stats
        self.maximumRequests = maximumRequests
        self.closeUnansweredAfter = closeUnansweredAfter
        self.routes = routes
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            body.removeAll(keepingCapacity: true)
        case .body(var buffer):
            if body.count + buffer.readableBytes <= Self.maximumBody,
                let bytes = buffer.readBytes(length: buffer.readableBytes)
            {
                body.append(contentsOf: bytes)
            }
        case .end:
            guard let head else { return }
            self.head = nil
            if let closeUnansweredAfter, requestsServed >= closeUnansweredAfter {
                context.close(promise: nil)
                return
            }
            let uri = head.uri
            let path: String
            let query: String
            if let mark = uri.firstIndex(of: "?") {
                path = String(uri[..<mark])
                query = String(uri[uri.index(after: mark)...])
            } else {
                path = uri
                query = ""
            }
            let hits = stats.record(path: path)
            let request = RouteRequest(
                method: head.method.rawValue, uri: uri, path: path, query: query,
                headers: head.headers.map { ($0.name, $0.value) }, body: body, hitCount: hits)
            // An HTTP/2 stream ends with its response, and its connection stays.
            requestsServed += 1
            let atLimit = maximumRequests.map { requestsServed >= $0 } ?? false
            let keepAlive = head.version.major >= 2 || (head.isKeepAlive && !atLimit)
            perform(routes(request), context: context, keepAlive: keepAlive, version: head.version)
        }
    }

    private func perform(_ outcome: RouteOutcome, context: ChannelHandlerContext, keepAlive: Bool, version: HTTPVersion)
    {
        switch outcome {
        case .respond(let status, let headers, let body):
            var fields = HTTPHeaders(headers)
            if !fields.contains(name: "Content-Length") {
                fields.replaceOrAdd(name: "Content-Length", value: "\(body.count)")
            }
            if !keepAlive { fields.replaceOrAdd(name: "Connection", value: "close") }
            context.write(
                wrapOutboundOut(
                    .head(HTTPResponseHead(version: version, status: .init(statusCode: status), headers: fields))),
                promise: nil)
            if !body.isEmpty {
                context.write(
                    wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: body)))), promise: nil)
            }
            let done = context.writeAndFlush(wrapOutboundOut(.end(nil)))
            if !keepAlive {
                Self.close(context, after: done)
            }
        case .stream(let status, let headers, let totalBytes):
            var fields = HTTPHeaders(headers)
            fields.replaceOrAdd(name: "Content-Length", value: "\(totalBytes)")
            if !keepAlive { fields.replaceOrAdd(name: "Connection", value: "close") }
            closeAfterStream = !keepAlive
            context.write(
                wrapOutboundOut(
                    .head(HTTPResponseHead(version: version, status: .init(statusCode: status), headers: fields))),
                promise: nil)
            streamPattern(context: context, remaining: totalBytes)
        case .truncated(let declared, let sent):
            writePartial(context: context, version: version, declared: declared, sent: sent)
                .assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        case .stall(let declared, let sent):
            _ = writePartial(context: context, version: version, declared: declared, sent: sent)
        case .cut(let status, let headers, let body, let declared, let stall):
            var fields = HTTPHeaders(headers)
            var headVersion = version
            if let declared {
                fields.replaceOrAdd(name: "Content-Length", value: "\(declared)")
            } else {
                // (NIO frames an HTTP/1.1 body without a length as chunked; an HTTP/1.0 one by the close.)
                headVersion = .http1_0
                fields.replaceOrAdd(name: "Connection", value: "close")
            }
            context.write(
                wrapOutboundOut(
                    .head(HTTPResponseHead(version: headVersion, status: .init(statusCode: status), headers: fields))),
                promise: nil)
            let done = context.writeAndFlush(
                wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: body)))))
            if !stall { Self.close(context, after: done) }
        case .delayed(let milliseconds, let next):
            let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(Int64(milliseconds))) {
                let (handler, context) = loopBound.value
                guard context.channel.isActive else { return }
                handler.perform(next, context: context, keepAlive: keepAlive, version: version)
            }
        case .held(let gate, let next):
            let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            let eventLoop = context.eventLoop
            gate.whenOpen {
                eventLoop.execute {
                    let (handler, context) = loopBound.value
                    guard context.channel.isActive else { return }
                    handler.perform(next, context: context, keepAlive: keepAlive, version: version)
                }
            }
        case .close:
            context.close(promise: nil)
        case .events(let count, let interval, let delay):
            var fields = HTTPHeaders([("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache")])
            if !keepAlive { fields.replaceOrAdd(name: "Connection", value: "close") }
            context.writeAndFlush(
                wrapOutboundOut(.head(HTTPResponseHead(version: version, status: .ok, headers: fields))), promise: nil)
            guard delay > 0 else {
                return sendEvent(0, of: count, every: interval, context: context, keepAlive: keepAlive)
            }
            let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(Int64(delay))) {
                let (handler, context) = loopBound.value
                handler.sendEvent(0, of: count, every: interval, context: context, keepAlive: keepAlive)
            }
        }
    }

    /// Writes event `index`, then schedules the next, then ends the body after the last.
    private func sendEvent(
        _ index: Int, of count: Int, every interval: Int, context: ChannelHandlerContext, keepAlive: Bool
    ) {
        guard context.channel.isActive else { return }
        guard index < count else {
            let done = context.writeAndFlush(wrapOutboundOut(.end(nil)))
            if !keepAlive { Self.close(context, after: done) }
            return
        }
        let event = Array("id: \(index)\ndata: {\"n\":\(index)}\n\n".utf8)
        context.writeAndFlush(
            wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: event)))), promise: nil)
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(Int64(interval))) {
            let (handler, context) = loopBound.value
            handler.sendEvent(index + 1, of: count, every: interval, context: context, keepAlive: keepAlive)
        }
    }

    private func writePartial(context: ChannelHandlerContext, version: HTTPVersion, declared: Int, sent: Int)
        -> EventLoopFuture<Void>
    {
        let fields = HTTPHeaders([("Content-Length", "\(declared)"), ("Content-Type", "application/octet-stream")])
        context.write(
            wrapOutboundOut(.head(HTTPResponseHead(version: version, status: .ok, headers: fields))), promise: nil)
        let bytes = Array(Pattern.chunk.prefix(sent))
        return context.writeAndFlush(
            wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: bytes)))))
    }

    /// Bytes of the pattern still to stream; streaming pauses while the channel is not writable.
    private var streamRemaining = 0
    /// The connection closes once the streamed body has been written.
    private var closeAfterStream = false

    /// Writes pattern chunks while the channel is writable (its outbound buffer is under the
    /// high-water mark), then waits for `channelWritabilityChanged`. Memory stays at a few
    /// chunks whatever the body size, and no call recurses.
    private func streamPattern(context: ChannelHandlerContext, remaining: Int) {
        streamRemaining = remaining
        pump(context: context)
    }

    private func pump(context: ChannelHandlerContext) {
        // At most 16 chunks (~1 MB) per turn, then yield the event loop so the other
        // connections it serves are not starved by a fast reader.
        var budget = 16
        while streamRemaining > 0, context.channel.isWritable, budget > 0 {
            let count = min(Pattern.chunk.count, streamRemaining)
            let buffer = context.channel.allocator.buffer(bytes: Pattern.chunk.prefix(count))
            streamRemaining -= count
            budget -= 1
            context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
        }
        if streamRemaining == 0 {
            streamRemaining = -1
            let done = context.writeAndFlush(wrapOutboundOut(.end(nil)))
            if closeAfterStream {
                Self.close(context, after: done)
            }
        } else if streamRemaining > 0, budget == 0, context.channel.isWritable {
            let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            context.eventLoop.assumeIsolated().execute {
                let (handler, context) = loopBound.value
                guard context.channel.isActive else { return }
                handler.pump(context: context)
            }
        }
    }

    /// Closes the connection once `done` (its last write) completes.
    private static func close(_ context: ChannelHandlerContext, after done: EventLoopFuture<Void>) {
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        done.assumeIsolated().whenComplete { _ in loopBound.value.close(promise: nil) }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if streamRemaining > 0, context.channel.isWritable { pump(context: context) }
        context.fireChannelWritabilityChanged()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}

/// The deterministic body the streaming routes send: byte `i` is `i % 251`.
public enum Pattern {
    /// One chunk: 256 whole periods, so every chunk is identical.
    public static let chunk: [UInt8] = (0..<(251 * 256)).map { UInt8($0 % 251) }

    /// The first `count` bytes of the pattern, copied a chunk at a time (byte by byte, a test's
    /// few megabytes took a second of a debug build's CPU).
    public static func bytes(_ count: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(max(0, count))
        while bytes.count < count { bytes += chunk.prefix(count - bytes.count) }
        return bytes
    }
}
