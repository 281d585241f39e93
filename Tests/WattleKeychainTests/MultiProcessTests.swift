import Foundation
import TestProxies
import Testing
import WattleTesting

@testable import WattleKeychain

#if canImport(Glibc)
import Glibc
#endif

/// Several processes on one keychain file, and a writer killed at random moments. Needs the
/// `KeychainStressWorker` executable, which is built next to the test bundle.
@Suite(.serialized) struct MultiProcessTests {
    /// The worker binary: `$KEYCHAIN_STRESS_WORKER`, or next to the test bundle.
    static func workerURL() throws -> URL {
        if let path = ProcessInfo.processInfo.environment["KEYCHAIN_STRESS_WORKER"] {
            return URL(fileURLWithPath: path)
        }
        var candidates: [URL] = []
        for start in [URL(fileURLWithPath: CommandLine.arguments[0]), Bundle.main.bundleURL] {
            var directory = start.deletingLastPathComponent()
            for _ in 0..<4 {
                candidates.append(directory.appendingPathComponent("KeychainStressWorker"))
                directory = directory.deletingLastPathComponent()
            }
        }
        let found = candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
        return try #require(found, "KeychainStressWorker not found near \(CommandLine.arguments[0]); build it first")
    }

    struct Finished {
        var status: Int32
        var output: String
        var errors: String
    }

    /// Starts the worker (by posix_spawn: Foundation's `Process.run()` can crash, see
    /// `ChildProcess`).
    static func start(_ arguments: [String]) throws -> ChildProcess {
        try ChildProcess(try workerURL().path, arguments, environment: ProcessInfo.processInfo.environment)
    }

    /// Another store opened on the same file in this process must not drop the locks SQLite
    /// holds for the first: then another process's close takes itself for the last user and
    /// checkpoints and deletes the write-ahead log under this process's connections.
    @Test(.timeLimit(.minutes(2)))
    func secondStoreInOneProcessKeepsTheFirstOnesLocks() async throws {
        let temporary = FileManager.default.temporaryDirectory.appendingPathComponent("wattle-mp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: temporary) }
        let path = temporary.appendingPathComponent("two.keychain").path
        let key = temporary.appendingPathComponent("two.key").path
        func open() throws -> Keychain {
            Keychain(
                service: "stress",
                store: try KeychainStore(
                    fileURL: URL(fileURLWithPath: path), credential: .keyFile(URL(fileURLWithPath: key))))
        }
        let first = try open()
        try first.set("one", forKey: "mine-1")
        let second = try open()
        try second.set("two", forKey: "mine-2")
        let worker = try Self.start(["write", path, key, "other", "3"])
        let (out, err, status) = await worker.collect()
        #expect(status == 0 && out == Data("done\n".utf8), "\(String(decoding: err, as: UTF8.self))")
        #expect(access(path + "-wal", F_OK) == 0, "the other process's close deleted the log this one has open")
        #expect(access(path + "-shm", F_OK) == 0)
        // Both stores go on, and see each other's and the other process's items.
        try first.set("three", forKey: "mine-3")
        for keychain in [first, second] {
            #expect(try keychain.allKeys().sorted() == ["mine-1", "mine-2", "mine-3", "other-0", "other-1", "other-2"])
        }
        // No temporary of the file's creation is left.
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: temporary.path).filter { $0.contains(".tmp-") } == [])
    }

    @Test(.timeLimit(.minutes(2)))
    func fourProcessesWritingAThousandItemsEachEndWithAllFourThousandAndNoError() async throws {
        let temporary = FileManager.default.temporaryDirectory.appendingPathComponent("wattle-mp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: temporary) }
        let path = temporary.appendingPathComponent("shared.keychain").path
        let key = temporary.appendingPathComponent("shared.key").path
        // The keychain does not exist yet: the four race to create it too.
        let workers = try (0..<4).map { try Self.start(["write", path, key, "p\($0)", "1000"]) }
        let results = await withTaskGroup(of: Finished.self) { group in
            for worker in workers {
                group.addTask {
                    let (out, err, status) = await worker.collect()
                    return Finished(
                        status: status, output: String(decoding: out, as: UTF8.self),
                        errors: String(decoding: err, as: UTF8.self))
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        for result in results {
            #expect(result.status == 0)
            #expect(result.errors.isEmpty, "\(result.errors)")
            #expect(result.output == "done\n")
        }
        let store = try KeychainStore(
            fileURL: URL(fileURLWithPath: path), credential: .keyFile(URL(fileURLWithPath: key)))
        let keychain = Keychain(service: "stress", store: store)
        let keys = try keychain.allKeys()
        #expect(keys.count == 4000)
        for prefix in 0..<4 {
            for index in stride(from: 0, to: 1000, by: 37) {
                #expect(try keychain.string(forKey: "p\(prefix)-\(index)") == "value-p\(prefix)-\(index)")
            }
        }
        #expect(try SQLiteConnection(path: path, create: false).strings("PRAGMA integrity_check") == ["ok"])
    }

    @Test(.timeLimit(.minutes(5)))
    func aWriterKilledAtRandomMomentsLosesNothingItReportedAndLeavesAnIntactFile() async throws {
        let temporary = FileManager.default.temporaryDirectory.appendingPathComponent(
            "wattle-kill-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: temporary) }
        let url = temporary.appendingPathComponent("killed.keychain")
        let keyURL = temporary.appendingPathComponent("killed.key")
        var reported: [(key: String, value: String)] = []
        var lastCounter: Int?
        var awaitedTotal = 0
        var generator = SystemRandomNumberGenerator()
        // `WATTLE_KILL_ROUNDS` rounds (100 by default, as in `make test` and CI's sanitizer runs;
        // 300 in `make soak`).
        let rounds = Reliability.integer("WATTLE_KILL_ROUNDS", default: 100)
        for iteration in 0..<rounds {
            let worker = try Self.start(["kill", url.path, keyURL.path, "\(iteration)"])
            // Most kills land during writes: after "ready" and up to two reported writes, at a
            // random moment. Some land anywhere, start-up and creation included.
            let duringWrites = iteration % 4 != 0
            let awaited = duringWrites ? Int.random(in: 0...2, using: &generator) : 0
            let received = await worker.kill(
                afterLines: duringWrites ? 1 + awaited : 0,
                microseconds: UInt32.random(in: 0...(duringWrites ? 15_000 : 40_000), using: &generator))
            let lines = String(decoding: received, as: UTF8.self).split(
                separator: "\n", omittingEmptySubsequences: false)
            // Only whole lines count: the last piece may have been cut by the kill.
            let indices = lines.dropLast().compactMap { line -> Int? in
                line.hasPrefix("ok ") ? Int(line.dropFirst(3)) : nil
            }
            #expect(indices == Array(indices.indices), "reports are in order")
            #expect(indices.count >= awaited, "the worker reported the writes the kill waited for")
            awaitedTotal += awaited
            guard FileManager.default.fileExists(atPath: url.path) else {
                // Killed before the keychain file was created: nothing can have been reported.
                #expect(indices.isEmpty, "writes reported before the keychain file existed")
                continue
            }

            #expect(try SQLiteConnection(path: url.path, create: false).strings("PRAGMA integrity_check") == ["ok"])
            let store = try KeychainStore(fileURL: url, credential: .keyFile(keyURL))
            let keychain = Keychain(service: "kill", store: store)
            for index in indices {
                reported.append(("i\(iteration)-\(index)", "v\(iteration)-\(index)"))
                #expect(try keychain.string(forKey: "i\(iteration)-\(index)") == "v\(iteration)-\(index)")
            }
            let counter = try keychain.integer(forKey: "counter")
            if let last = indices.last {
                let base = iteration * 1_000_000 + last
                #expect(
                    counter == base || counter == base + 1, "counter \(String(describing: counter)) after ok \(last)")
            } else if let counter {
                #expect(counter == lastCounter || counter == iteration * 1_000_000)
            }
            lastCounter = counter
        }
        let keychain = Keychain(service: "kill", store: try KeychainStore(fileURL: url, credential: .keyFile(keyURL)))
        for (key, value) in reported {
            #expect(try keychain.string(forKey: key) == value)
        }
        // The kills landed while writing: at least the writes they waited for were reported,
        // however slowly a sanitized build on a busy machine writes (a CI run under ASan
        // reported 4 writes in 75 rounds when the kills were timed from "ready" alone).
        #expect(awaitedTotal > rounds / 4 && reported.count >= awaitedTotal, "the kills landed while writing")
    }
}
