// Wattle under the shared benchmark driver (see BenchSupport): Session.get and Session.download.
import BenchSupport
import FoundationEssentials
import Wattle

#if canImport(Glibc)
    import Glibc
#endif

struct WattleClient: BenchClient {
    let session: Session
    /// `WATTLE_BENCH_EXECUTOR=1`: the measurement runs inside `Session.withNetworkThreadExecutor`.
    let onNetworkThread = getenv("WATTLE_BENCH_EXECUTOR").map { String(cString: $0) == "1" } ?? false
    /// `WATTLE_BENCH_UNSYNCED=1`: downloads leave the file to the page cache (`.unsynced`), as raw libcurl does.
    let durability: DownloadDurability =
        (getenv("WATTLE_BENCH_UNSYNCED").map { String(cString: $0) == "1" } ?? false) ? .unsynced : .synced

    init(_ options: Options) {
        session = Session(
            configuration: Configuration {
                $0.proxy = .none
                $0.httpVersion = options.http2 ? .http2OverTLS : .http1_1
                $0.multiplexing = true
                $0.connectionsPerHost = max(32, options.concurrency)
                $0.connectionCacheSize = max(64, options.concurrency)
                // nginx's certificate is self-signed for 127.0.0.1: allowlist it (host name still checked).
                $0.trust = TrustPolicy(selfSignedHosts: ["127.0.0.1", "localhost"])
            })
    }

    func run(_ measurement: () async -> Int) async -> Int {
        guard onNetworkThread else { return await measurement() }
        return await session.withNetworkThreadExecutor { await measurement() }
    }

    func get(_ url: String) async throws -> Int {
        let response = try await session.get(url)
        guard response.statusCode == 200 else { throw BenchError.status(response.statusCode) }
        return response.data.count
    }

    func download(_ url: String, to path: String) async throws -> Int {
        let response = try await session.download(url, to: URL(fileURLWithPath: path), durability: durability)
        guard response.statusCode == 200 else { throw BenchError.status(response.statusCode) }
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_size) : 0
    }
}

enum BenchError: Error {
    case status(Int)
}

await Bench.main(tool: "wattle") { WattleClient($0) }
