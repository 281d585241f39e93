import Foundation
import Testing
import WattleDemoServer

#if canImport(Glibc)
import Glibc
#endif

@Suite("--connect-timeout bounds the connection alone")
struct CLIConnectTimeoutTests {
    @Test("a TLS handshake that never completes fails after --connect-timeout, exit 2, naming the option")
    func firesDuringTheHandshake() async throws {
        // A port whose kernel completes TCP connections into the backlog, where nobody
        // accepts them: the TLS handshake gets no answer, as from a host behind a black hole.
        let silent = try ListeningSocket()
        let result = try await CLI.run(["--connect-timeout", "0.4", "https://127.0.0.1:\(silent.port)/"])
        #expect(result.status == 2, "\(result.stderr)")
        // The library's message says which phase timed out and what the timeout was: the
        // option reached the request (the default would say 10 s). When it fires is the
        // library's to show (FailureTests.connectTimeout): in `make test` the test waited
        // 6.5-10.7 s for a child that ran 0.48 s (by `time`), on two cores the suite fills.
        #expect(result.stderr.contains("connect phase after 400 ms"), "\(result.stderr)")
        #expect(result.stderr.contains("From the CLI: --connect-timeout SECONDS."), "\(result.stderr)")
    }

    @Test("zero, negative and non-finite values are usage errors on one line; a huge one is taken as very long")
    func values() async throws {
        let server = try await Servers.plain.value
        let url = server.url("echo").absoluteString
        for value in ["0", "-1", "inf", "nan"] {
            let refused = try await CLI.run(["--connect-timeout=\(value)", url])
            #expect(refused.status == 1, "\(value): \(refused.stderr)")
            #expect(
                refused.stderr == "wattle: --connect-timeout must be a positive number of seconds\n",
                "\(value): \(refused.stderr)")
        }
        let long = try await CLI.run(["--connect-timeout", "1e16", url])
        #expect(long.status == 0, "\(long.stderr)")
    }
}

/// A TCP socket on 127.0.0.1 that listens and never accepts; closed when released.
private final class ListeningSocket {
    let port: Int
    private let descriptor: Int32

    init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        guard descriptor >= 0, bound == 0, listen(descriptor, 16) == 0 else {
            if descriptor >= 0 { close(descriptor) }
            throw POSIXError(.EADDRINUSE)
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        self.descriptor = descriptor
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(descriptor) }
}
