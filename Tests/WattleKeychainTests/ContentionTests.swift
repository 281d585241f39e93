import Foundation
import TestProxies
import Testing

@testable import WattleKeychain

/// Several processes set, remove and read overlapping keys of one keychain file at once. Each
/// logs every operation with its start and end on the shared monotonic clock; the final state
/// and every read must be explained by some serial order of the logged operations that respects
/// those times (each operation takes effect at one instant between its start and end).
///
/// `WATTLE_CONTENTION_PROCESSES` (8) processes for `WATTLE_CONTENTION_SECONDS` (3 by default,
/// 30 in `make soak`) on 16 keys.
@Suite(.serialized) struct ContentionTests {
    struct Logged {
        enum Kind: String { case set, del, get }
        var kind: Kind
        var key: String
        /// The value set, or the value read ("-" for none).
        var value: String
        var start: UInt64
        var end: UInt64
    }

    static func parse(_ text: String) -> [Logged] {
        text.split(separator: "\n").compactMap { line in
            let words = line.split(separator: " ")
            guard words.count == 5, let kind = Logged.Kind(rawValue: String(words[0])), let start = UInt64(words[3]),
                let end = UInt64(words[4])
            else {
                Issue.record("bad log line \(line)")
                return nil
            }
            return Logged(kind: kind, key: String(words[1]), value: String(words[2]), start: start, end: end)
        }
    }

    /// Why the history of one key cannot be serialized, or nil. `final` is the value left ("-"
    /// for none).
    static func violation(_ operations: [Logged], final: String) -> String? {
        let writes = operations.filter { $0.kind != .get }
        let sets = Dictionary(writes.filter { $0.kind == .set }.map { ($0.value, $0) }, uniquingKeysWith: { a, _ in a })
        let deletes = writes.filter { $0.kind == .del }
        /// Whether `operation` may be the last write before the instant `before` (nothing
        /// written certainly after it, and certainly before `before`).
        func mayBeLatest(_ operation: Logged, before: UInt64) -> Bool {
            !writes.contains { $0.start > operation.end && $0.end < before }
        }
        /// Whether "no value" may hold at an instant before `deleteBefore`, given the sets that
        /// certainly ended before `setBefore`: the latest-starting of them must be followed by
        /// a removal that may come after it.
        func absentPossible(setBefore: UInt64, deleteBefore: UInt64) -> Bool {
            guard let latest = writes.filter({ $0.kind == .set && $0.end < setBefore }).map(\.start).max() else {
                return true
            }
            return deletes.contains { $0.end > latest && $0.start < deleteBefore }
        }
        if final == "-" {
            if !absentPossible(setBefore: .max, deleteBefore: .max) {
                return "no value left, but a set was never followed by a removal"
            }
        } else {
            guard let set = sets[final] else { return "final value \(final) was never set" }
            if !mayBeLatest(set, before: .max) { return "final value \(final) was certainly overwritten" }
        }
        for read in operations where read.kind == .get {
            if read.value == "-" {
                if !absentPossible(setBefore: read.start, deleteBefore: read.end) {
                    return "a read at \(read.start) found nothing after a set"
                }
            } else {
                guard let set = sets[read.value], set.start < read.end else {
                    return "a read found \(read.value), which was not set before it"
                }
                if !mayBeLatest(set, before: read.start) { return "a read found the stale value \(read.value)" }
            }
        }
        return nil
    }

    @Test(.timeLimit(.minutes(10)))
    func processesUpsertingAndRemovingOverlappingKeysEndInAStateASerialReplayExplains() async throws {
        let processes = Reliability.integer("WATTLE_CONTENTION_PROCESSES", default: 8)
        let seconds = Reliability.double("WATTLE_CONTENTION_SECONDS", default: 3)
        let keyCount = 16
        let folder = try Reliability.temporaryFolder("wattle-contend")
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("contend.keychain")
        let keyURL = folder.appendingPathComponent("contend.key")
        _ = try KeychainStore(fileURL: url, credential: .keyFile(keyURL))

        let workers = try (0..<processes).map { worker in
            try MultiProcessTests.start([
                "contend", url.path, keyURL.path, "\(worker)", "\(seconds)", "\(keyCount)",
                folder.appendingPathComponent("log-\(worker)").path,
            ])
        }
        var operations: [Logged] = []
        for (worker, child) in workers.enumerated() {
            let (outData, errData, status) = await child.collect()
            let out = String(decoding: outData, as: UTF8.self)
            let err = String(decoding: errData, as: UTF8.self)
            #expect(status == 0, "worker \(worker): \(err)")
            #expect(out.hasPrefix("done "))
            let log = try String(contentsOf: folder.appendingPathComponent("log-\(worker)"), encoding: .utf8)
            operations += Self.parse(log)
        }

        #expect(try Reliability.integrity(url.path) == ["ok"])
        let keychain = Keychain(
            service: "contend", store: try KeychainStore(fileURL: url, credential: .keyFile(keyURL)))
        var present = 0
        for index in 0..<keyCount {
            let key = "k\(index)"
            let final = try keychain.string(forKey: key) ?? "-"
            if final != "-" { present += 1 }
            let history = operations.filter { $0.key == key }
            #expect(
                Self.violation(history, final: final) == nil, "\(key): \(Self.violation(history, final: final) ?? "")")
        }
        #expect(try keychain.allKeys().count == present)
        let sets = operations.filter { $0.kind == .set }.count
        let removals = operations.filter { $0.kind == .del }.count
        let reads = operations.count - sets - removals
        #expect(operations.count > processes * 10, "the workers made progress")
        Reliability.report(
            "contention: \(processes) processes x \(seconds) s on \(keyCount) shared keys: \(operations.count) operations "
                + "(\(sets) sets, \(removals) removals, \(reads) reads, "
                + String(format: "%.0f", Double(operations.count) / seconds)
                + "/s), final state and every read explained by a serial order, integrity ok")
    }
}
