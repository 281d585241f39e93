import Foundation
import Testing
import WattleDemoServer

/// Several `wattle` processes sharing one keychain, whose token has expired: one refreshes, the
/// others wait for its lease on the token and take up the token it saved.
@Suite("The wattle CLI: processes sharing a keychain refresh its token once")
struct CLIRefreshLeaseTests {
    @Test("three processes started together with an expired token send its refresh token once, and all succeed")
    func oneRefreshAcrossProcesses() async throws {
        let server = try await DemoServer.start()
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let common = [
            "--keychain", folder.appendingPathComponent("cli.keychain").path, "--base-url",
            server.baseURL.absoluteString,
        ]
        let issued = server.api.issueTokens()
        let kept = try await CLI.run(
            ["auth", "set-token", "-", "--refresh-token", "-", "--expires-in=-1"] + common,
            input: .pipe(Data("\(issued.access)\n\(issued.refresh)\n".utf8)))
        #expect(kept.status == 0, "\(kept.stderr)")
        // The refresh takes a second: the others start theirs while it runs.
        server.api.configure { $0.refreshDelay = .seconds(1) }
        let runs = try await withThrowingTaskGroup(of: CLI.Result.self) { group in
            for _ in 0..<3 {
                group.addTask { try await CLI.run(["api/whoami", "--refresh-path", "api/refresh"] + common) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        for run in runs {
            #expect(run.status == 0, "\(run.stderr)")
            #expect(run.text.contains("\"demo\""), "\(run.text)")
        }
        // Without the lease each process sent the same refresh token (two were refused, as
        // spent, and took up the first one's token after): 3.
        #expect(server.stats.hits("/api/refresh") == 1)
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("cli.keychain-leases").path))
        try await server.stop()
    }
}
