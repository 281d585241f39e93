import Foundation
import TestProxies
import Testing

@testable import WattleKeychain

#if canImport(Glibc)
import Glibc
#endif

/// A writer that sets and removes values of all sizes is SIGKILLed at random moments, round
/// after round on one keychain file: every change it acknowledged survives, the change it was
/// making when killed is either whole or absent, and the file passes SQLite's integrity check.
///
/// `WATTLE_KILL_ROUNDS` rounds (100 by default, as in `make test` and CI's sanitizer runs; 300 in `make soak`).
@Suite(.serialized) struct KillDurabilityTests {
    /// One operation the worker announced.
    struct Operation {
        var index: Int
        var key: String
        /// The value a set stores; nil for a removal.
        var value: String?
    }

    static let keys = (0..<12).map { "m\($0)" }

    /// Parses the worker's whole lines: the acknowledged operations in order, and the one it
    /// had begun but not acknowledged (it may or may not have happened).
    static func parse(_ output: String, iteration: Int) -> (acknowledged: [Operation], pending: Operation?, ready: Bool)
    {
        var lines = output.split(separator: "\n", omittingEmptySubsequences: false)
        lines.removeLast()  // cut by the kill, or empty
        var acknowledged: [Operation] = []
        var pending: Operation?
        var ready = false
        for line in lines {
            let words = line.split(separator: " ")
            if words == ["ready"] {
                ready = true
            } else if words.count >= 4, words[0] == "begin", let index = Int(words[1]) {
                let key = String(words[3])
                let value =
                    words[2] == "set" ? mixValue(iteration: iteration, index: index, size: Int(words[4]) ?? 0) : nil
                pending = Operation(index: index, key: key, value: value)
            } else if words.count == 2, words[0] == "ok", let index = Int(words[1]), let begun = pending,
                begun.index == index
            {
                acknowledged.append(begun)
                pending = nil
            } else {
                Issue.record("unexpected worker line \(line.prefix(80))")
            }
        }
        return (acknowledged, pending, ready)
    }

    /// What the worker's `mixkill` mode stores (same rule as in KeychainStressWorker).
    static func mixValue(iteration: Int, index: Int, size: Int) -> String {
        let head = "\(iteration)-\(index)"
        return head + String(repeating: ".", count: max(0, size - head.utf8.count))
    }

    @Test(.timeLimit(.minutes(30)))
    func aWriterKilledAtRandomMomentsKeepsEveryAcknowledgedSetAndRemoval() async throws {
        let rounds = Reliability.integer("WATTLE_KILL_ROUNDS", default: 100)
        let folder = try Reliability.temporaryFolder("wattle-killmix")
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("mix.keychain")
        let keyURL = folder.appendingPathComponent("mix.key")
        var model: [String: String] = [:]
        var generator = SystemRandomNumberGenerator()
        var acknowledgedTotal = 0
        var awaitedTotal = 0
        var pendingApplied = 0
        var pendingAbsent = 0
        var killedBeforeReady = 0
        var freshStarts = 0
        let started = Date()
        for round in 0..<rounds {
            if round % 40 == 0 {
                // A fresh keychain now and then, so that kills also land during creation.
                for suffix in ["", "-wal", "-shm"] {
                    try? FileManager.default.removeItem(atPath: url.path + suffix)
                }
                try? FileManager.default.removeItem(at: keyURL)
                model = [:]
                freshStarts += 1
            }
            let worker = try MultiProcessTests.start(["mixkill", url.path, keyURL.path, "\(round)"])
            // Most after "ready" and up to five more lines (a change begun or acknowledged), at
            // a random moment; one in five anywhere, start-up included. Counting lines, not
            // time, keeps the kills among the writes on a slow sanitized build.
            let anywhere = round % 5 == 0
            let awaitedLines = anywhere ? 0 : 1 + Int.random(in: 0...5, using: &generator)
            let received = await worker.kill(
                afterLines: awaitedLines,
                microseconds: UInt32.random(in: 0...(anywhere ? 40_000 : 20_000), using: &generator))
            let (acknowledged, pending, ready) = Self.parse(String(decoding: received, as: UTF8.self), iteration: round)
            if !ready { killedBeforeReady += 1 }
            for operation in acknowledged { model[operation.key] = operation.value }
            acknowledgedTotal += acknowledged.count
            // "ready", then "begin"/"ok" pairs: each awaited pair is an acknowledged change.
            let awaitedChanges = max(0, awaitedLines - 1) / 2
            #expect(
                acknowledged.count >= awaitedChanges, "round \(round): the worker acknowledged what the kill waited for"
            )
            awaitedTotal += awaitedChanges

            guard FileManager.default.fileExists(atPath: url.path) else {
                #expect(acknowledged.isEmpty, "round \(round): changes acknowledged before the file existed")
                continue
            }
            #expect(try Reliability.integrity(url.path) == ["ok"], "round \(round)")
            let keychain = Keychain(
                service: "mix", store: try KeychainStore(fileURL: url, credential: .keyFile(keyURL)))
            for key in Self.keys {
                let actual = try keychain.string(forKey: key)
                if let pending, pending.key == key, actual != model[key] {
                    #expect(
                        actual == pending.value, "round \(round): \(key) is neither before nor after the cut change")
                    pendingApplied += 1
                } else {
                    #expect(
                        actual == model[key],
                        "round \(round): \(key) holds \(actual?.prefix(20) ?? "nil"), acknowledged \(model[key]?.prefix(20) ?? "nil")"
                    )
                    if let pending, pending.key == key, pending.value != model[key] { pendingAbsent += 1 }
                }
                model[key] = actual
            }
            #expect(try keychain.allKeys() == model.keys.sorted(), "round \(round)")
        }
        #expect(
            acknowledgedTotal >= awaitedTotal && awaitedTotal >= rounds / 4,
            "the kills landed while writing: \(acknowledgedTotal) acknowledged, \(awaitedTotal) awaited")
        Reliability.report(
            "kill: \(rounds) SIGKILLs survived (\(killedBeforeReady) before the worker was ready, \(freshStarts) fresh keychains), "
                + "\(acknowledgedTotal) acknowledged sets/removals all intact, cut change applied \(pendingApplied) / "
                + "absent \(pendingAbsent), integrity ok every round, "
                + String(format: "%.1f s", Date().timeIntervalSince(started)))
    }
}
