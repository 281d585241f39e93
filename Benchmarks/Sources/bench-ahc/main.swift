// AsyncHTTPClient (SwiftNIO) under the shared benchmark driver: HTTPClient.execute with the
// async API, the singleton event loop group (one loop per core), HTTP/2 over TLS when asked.
import AsyncHTTPClient
import BenchSupport
import NIOCore

struct AHCClient: BenchClient {
    let client: HTTPClient

    init(_ options: Options) {
        var configuration = HTTPClient.Configuration(certificateVerification: .none)
        configuration.httpVersion = options.http2 ? .automatic : .http1Only
        configuration.connectionPool = .init(
            idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: max(8, options.concurrency))
        configuration.proxy = nil
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    func get(_ url: String) async throws -> Int {
        let response = try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(30))
        guard response.status == .ok else { throw BenchError.status(Int(response.status.code)) }
        let body = try await response.body.collect(upTo: 16 << 20)
        return body.readableBytes
    }

    func download(_ url: String, to path: String) async throws -> Int {
        let delegate = try FileDownloadDelegate(path: path)
        let request = try HTTPClient.Request(url: url)
        let progress = try await client.execute(request: request, delegate: delegate).get()
        guard progress.head.status == .ok else { throw BenchError.status(Int(progress.head.status.code)) }
        return progress.receivedBytes
    }

    func shutdown() async { try? await client.shutdown() }
}

enum BenchError: Error {
    case status(Int)
}

await Bench.main(tool: "ahc") { AHCClient($0) }
