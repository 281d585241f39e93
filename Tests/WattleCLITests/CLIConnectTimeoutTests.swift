import Foundation
import TestProxies
import Testing

@Suite("--connect-timeout bounds the connection alone")
struct CLIConnectTimeoutTests {
    @Test("a TLS handshake that never completes fails after --connect-timeout, exit 2, naming the option")
    func firesDuringTheHandshake() async throws {
        // A port whose kernel completes TCP connections into the backlog, where nobody
        // accepts them: the TLS handshake gets no answer, as from a host behind a black hole.
        let silent = try SilentServer()
        defer { withExtendedLifetime(silent) {} }  // its socket closes when it is released
        let result = try await CLI.run(["--connect-timeout", "0.4", "https://127.0.0.1:\(silent.port)/"])
        #expect(result.status == 2, "\(result.stderr)")
        // The library's message says which phase timed out and what the timeout was: the
        // option reached the request (the default would say 10 s). When it fires is the
        // library's to show (FailureTests.connectTimeout): in `make test` the test waited
        // 6.5-10.7 s for a child that ran 0.48 s (by `time`), on two cores the suite fills.
        #expect(result.stderr.contains("connect phase after 400 ms"), "\(result.stderr)")
        #expect(result.stderr.contains("From the CLI: --connect-timeout SECONDS."), "\(result.stderr)")
    }
}
