// Foundation's URLSession (swift-corelibs-foundation, FoundationNetworking) under the shared
// benchmark driver. HTTP only: on Linux URLSession cannot be told to trust a self-signed
// certificate (its server-trust challenges are never delivered).
import BenchSupport
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

struct URLSessionClient: BenchClient {
    let session: URLSession

    init(_ options: Options) {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = max(6, options.concurrency)
        configuration.connectionProxyDictionary = [:]
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        session = URLSession(configuration: configuration)
    }

    func get(_ url: String) async throws -> Int {
        let (data, response) = try await session.data(from: URL(string: url)!)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard status == 200 else { throw BenchError.status(status) }
        return data.count
    }

    func download(_ url: String, to path: String) async throws -> Int {
        let (temporary, response) = try await session.download(from: URL(string: url)!)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard status == 200 else { throw BenchError.status(status) }
        try? FileManager.default.removeItem(atPath: path)
        try FileManager.default.moveItem(at: temporary, to: URL(fileURLWithPath: path))
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return (attributes[.size] as? NSNumber)?.intValue ?? 0
    }

    func shutdown() async { session.finishTasksAndInvalidate() }
}

enum BenchError: Error {
    case status(Int)
}

await Bench.main(tool: "urlsession") { options in
    guard !options.isTLS else { Bench.fail("urlsession: HTTPS with a self-signed certificate is not possible on Linux") }
    return URLSessionClient(options)
}
