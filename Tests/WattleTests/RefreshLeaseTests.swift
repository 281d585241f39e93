import Foundation
import Synchronization
import Testing
import WattleDemoServer
import WattleKeychain
import WattleTesting

@testable import Wattle

/// `KeychainTokenStore`'s refresh leases: a lock per token item beside the keychain file,
/// which two stores on the file (as two processes) exclude each other with.
@Suite struct RefreshLeaseTests {
    @Test("a lease on a token makes another store on the same file wait until it is released; another token's does not")
    func leasesExclude() async throws {
        let temporary = try TemporaryKeychain()
        let other = try temporary.reopen()
        let origin = try #require(URL(string: "https://api.example.test"))
        let first = KeychainTokenStore(origin: origin, store: temporary.store)
        let second = KeychainTokenStore(origin: origin, store: other)
        let held = try #require(await first.refreshLease(waitingAtMost: .seconds(60)))
        let got = Atomic<Bool>(false)
        let waiting = Task {
            let lease = await second.refreshLease(waitingAtMost: .seconds(60))
            got.store(true, ordering: .sequentiallyConsistent)
            return lease
        }
        try await Task.sleep(for: .milliseconds(300))
        let early = got.load(ordering: .sequentiallyConsistent)
        #expect(!early, "the second store waits while the first holds the lease")
        // Another profile's token is leased at once, while the first is held.
        let elsewhere = await KeychainTokenStore(origin: origin, profile: "ci", store: other).refreshLease(
            waitingAtMost: .seconds(60))
        #expect(elsewhere != nil)
        elsewhere?.release()
        let started = ContinuousClock.now
        held.release()
        let next = try #require(await waiting.value)
        // It was still waiting: it got the lease once the first was released (well within 10 s).
        #expect(ContinuousClock.now - started < .seconds(10))
        next.release()
        // In memory there is no lease to take.
        #expect(
            await KeychainTokenStore(origin: origin, store: .inMemory()).refreshLease(waitingAtMost: .seconds(60))
                == nil)
    }

    @Test("a lease waited for longer than its timeout is given up: the refresh goes on without it")
    func waitEnds() async throws {
        let temporary = try TemporaryKeychain()
        let file = try #require(temporary.store.fileURL)
        let held = try #require(await RefreshLeaseFile.acquire(keychainFile: file, item: "t", timeout: .seconds(1)))
        defer { held.release() }
        let started = ContinuousClock.now
        #expect(await RefreshLeaseFile.acquire(keychainFile: file, item: "t", timeout: .milliseconds(200)) == nil)
        #expect(ContinuousClock.now - started >= .milliseconds(200))
        #expect(await RefreshLeaseFile.acquire(keychainFile: file, item: "u", timeout: .milliseconds(200)) != nil)
    }

    @Test(
        "two sessions on two stores of one keychain file, whose token expired, refresh once: the second takes up the first's token"
    )
    func twoStoresRefreshOnce() async throws {
        let server = try await DemoServer.start()
        let temporary = try TemporaryKeychain()
        let stores = [
            KeychainTokenStore(origin: server.baseURL, store: temporary.store),
            KeychainTokenStore(origin: server.baseURL, store: try temporary.reopen()),
        ]
        let issued = server.api.issueTokens()
        try await stores[0].save(
            AuthToken(
                accessToken: issued.access, refreshToken: issued.refresh, expiresAt: Date(timeIntervalSinceNow: 3600)))
        let sessions = stores.map { store in
            makeSession(server) {
                $0.authenticator = Authenticator(
                    store: store, refresh: Authenticator.postRefreshToken(to: "api/refresh"))
            }
        }
        for session in sessions { #expect(try await session.isSignedIn) }
        // Both sessions' next requests are refused (401) and refresh; the first takes 500 ms.
        server.api.expireAccessTokens()
        server.api.configure { $0.refreshDelay = .milliseconds(500) }
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for session in sessions { group.addTask { try await session.get("api/whoami").statusCode } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(statuses == [200, 200])
        #expect(server.stats.hits("/api/refresh") == 1)
        #expect(try await stores[1].load()?.accessToken != issued.access)
        try await server.stop()
    }
}
