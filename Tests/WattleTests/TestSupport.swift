import Foundation
import TestProxies
import Testing
import Wattle
import WattleDemoServer

#if canImport(Glibc)
import Glibc
#endif

/// The local test server, started once per test process.
enum TestServer {
    private static let started = Task { try await DemoServer.start() }
    private static let second = Task { try await DemoServer.start() }

    /// The main server.
    static func shared() async throws -> DemoServer { try await started.value }
    /// A second server: another origin (same host, other port) for cross-origin tests.
    static func other() async throws -> DemoServer { try await second.value }
}

/// A configuration for tests: no proxy from the environment, and timeouts that allow for the
/// sanitizer passes: the library's defaults (10 s to connect, 60 s in all, 30 s without a byte),
/// tripled there. There every suite starts at once on two cores with the TLS server in the same
/// process, and .ci/run's ASan pass saw TLS handshakes to it overrun the default 10 s connect
/// timeout (the connect phase includes the handshake) in the first minute.
func testConfiguration() -> Configuration {
    var configuration = Configuration()
    configuration.proxy = .none
    configuration.timeouts.connect = promptBound(seconds: 10)
    configuration.timeouts.total = promptBound(seconds: 60)
    configuration.timeouts.stall = promptBound(seconds: 30)
    return configuration
}

/// A session whose base URL is the test server, with no proxy from the environment.
func makeSession(_ server: DemoServer, _ configure: (inout Configuration) -> Void = { _ in }) -> Session {
    var configuration = testConfiguration()
    configuration.baseURL = server.baseURL
    configure(&configuration)
    return Session(configuration: configuration)
}

/// The JSON the `/echo` route answers with.
typealias Echo = EchoAnswer

/// Runs `body` and checks it throws a ``WattleError`` for which `matches` is true.
func expectWattleError(
    _ body: () async throws -> Void,
    sourceLocation: SourceLocation = #_sourceLocation,
    matches: (WattleError) -> Bool
) async {
    do {
        try await body()
        Issue.record("expected a WattleError, but the call succeeded", sourceLocation: sourceLocation)
    } catch let error as WattleError {
        #expect(matches(error), "unexpected error: \(error)", sourceLocation: sourceLocation)
    } catch {
        Issue.record("expected a WattleError, got \(error)", sourceLocation: sourceLocation)
    }
}

/// A port on 127.0.0.1 where a connection is refused (``SilentServer/refusedPort()``).
func refusedPort() throws -> Int { try SilentServer.refusedPort() }

/// The resident set size of this process, in bytes.
func residentMemory() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = text.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}

/// The number of open file descriptors of this process.
func openFileDescriptorCount() -> Int {
    (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
}

/// A fresh empty folder under the system temp folder.
func temporaryFolder() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("wattle-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// Checks that a file holds `count` bytes of the test server's ``Pattern`` (its `/bytes/{n}`).
func expectPattern(in file: URL, count: Int, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let handle = try FileHandle(forReadingFrom: file)
    defer { try? handle.close() }
    let chunk = Data(Pattern.chunk)
    var offset = 0
    while offset < count {
        let data = try handle.read(upToCount: chunk.count) ?? Data()
        if data.isEmpty { break }
        guard data == chunk.prefix(data.count) else {
            Issue.record("content differs near byte \(offset)", sourceLocation: sourceLocation)
            return
        }
        offset += data.count
    }
    #expect(offset == count, sourceLocation: sourceLocation)
}

/// A time bound for work that normally takes milliseconds to a few seconds. Under a sanitizer
/// (`make sanitize` sets WATTLE_TEST_SANITIZER) the suite runs 5-15 times slower with every test
/// in parallel on two cores, and fresh-clone CI runs overshot 5 s and 8 s bounds (6.4 s, 8.7 s)
/// with the right result: there the bound is tripled. Each test also checks what happened (the
/// error and its phase), which is what tells a wrong outcome from a slow machine.
func promptBound(seconds: Int) -> Duration {
    .seconds(underSanitizer ? seconds * 3 : seconds)
}

/// The bound for "promptly" when the wrong behaviour would wait `slow`: a server's delay, a
/// Retry-After, or a later timeout that should not be the one to end the request. Half of it,
/// the same with or without a sanitizer. A fixed few seconds is not enough: swift-testing runs
/// every test at once on the cooperative pool (two threads here), and a resumed task has waited
/// 8 s for a thread in a plain `make test` (CI, stop 40: 8.2 s against an 8 s bound) and 40 s
/// under ThreadSanitizer. So each such test makes its wrong behaviour take 60-120 s, checks that
/// it is done in half that, and checks the error itself, which is what tells right from wrong.
func wellBefore(_ slow: Duration) -> Duration {
    slow / 2
}

/// Whether the tests run under a sanitizer (`make sanitize` sets WATTLE_TEST_SANITIZER).
let underSanitizer = getenv("WATTLE_TEST_SANITIZER") != nil
