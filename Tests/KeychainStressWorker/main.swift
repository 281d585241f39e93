// A worker process for the keychain's multi-process tests and benchmark.
//
//   KeychainStressWorker write <keychain> <key file> <prefix> <count>
//       sets <count> distinct items "<prefix>-<n>" = "value-<prefix>-<n>", then exits 0;
//       on any error prints it on stderr and exits 1.
//   KeychainStressWorker kill <keychain> <key file> <iteration>
//       prints "ready", then forever: sets "i<iteration>-<n>" and the Int "counter"
//       (iteration * 1_000_000 + n), and prints "ok <n>" (written unbuffered) after both returned.
//   KeychainStressWorker bench <folder> <items>
//       fills a keychain with <items> items and prints read and write latencies.
//   KeychainStressWorker mixkill <keychain> <key file> <iteration>
//       prints "ready", then forever on the keys m0..m11 of service "mix": prints
//       "begin <n> set <key> <size>" or "begin <n> del <key>" before an operation and "ok <n>"
//       after it returned; a set stores "<iteration>-<n>" padded with "." to <size> bytes
//       (0..4000, so some writes span several pages).
//   KeychainStressWorker contend <keychain> <key file> <worker> <seconds> <keys> <log>
//       for <seconds>, sets (60%), removes (25%) and reads (15%) random keys k0..k<keys-1> of
//       service "contend", setting "w<worker>-<n>"; then writes one line per operation to
//       <log>: "<set|del|get> <key> <value or -> <start ns> <end ns>" (CLOCK_MONOTONIC, which
//       all processes share) and prints "done <operations>".

import Foundation
import WattleKeychain
import WattleTesting

#if canImport(Glibc)
import Glibc
#endif

func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data((message + "\n").utf8))
    exit(1)
}

func openStore(_ path: String, _ keyFile: String) throws -> KeychainStore {
    try KeychainStore(
        fileURL: URL(fileURLWithPath: path), credential: .keyFile(URL(fileURLWithPath: keyFile)))
}

func nanoseconds() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

/// CLOCK_MONOTONIC in nanoseconds: comparable between processes on one machine.
func monotonic() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

func mixKill(keychain: Keychain, iteration: Int) throws -> Never {
    say("ready")
    var generator = SystemRandomNumberGenerator()
    var index = 0
    while true {
        let key = "m\(Int.random(in: 0..<12, using: &generator))"
        if Int.random(in: 0..<4, using: &generator) == 0 {
            say("begin \(index) del \(key)")
            try keychain.removeValue(forKey: key)
        } else {
            let size = Int.random(in: 0...4000, using: &generator)
            say("begin \(index) set \(key) \(size)")
            try keychain.set(mixValue(iteration: iteration, index: index, size: size), forKey: key)
        }
        say("ok \(index)")
        index += 1
    }
}

/// The value `mixkill` stores for operation `index` of `iteration`.
func mixValue(iteration: Int, index: Int, size: Int) -> String {
    let head = "\(iteration)-\(index)"
    return head + String(repeating: ".", count: max(0, size - head.utf8.count))
}

func contend(keychain: Keychain, worker: String, seconds: Double, keys: Int, log: String) throws {
    var generator = SystemRandomNumberGenerator()
    var lines: [String] = []
    let deadline = monotonic() + UInt64(seconds * 1e9)
    var index = 0
    while monotonic() < deadline {
        let key = "k\(Int.random(in: 0..<keys, using: &generator))"
        let roll = Int.random(in: 0..<100, using: &generator)
        let start = monotonic()
        if roll < 60 {
            let value = "w\(worker)-\(index)"
            try keychain.set(value, forKey: key)
            lines.append("set \(key) \(value) \(start) \(monotonic())")
        } else if roll < 85 {
            try keychain.removeValue(forKey: key)
            lines.append("del \(key) - \(start) \(monotonic())")
        } else {
            let value = try keychain.string(forKey: key) ?? "-"
            lines.append("get \(key) \(value) \(start) \(monotonic())")
        }
        index += 1
    }
    try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: log))
    say("done \(index)")
}

func percentile(_ sorted: [UInt64], _ fraction: Double) -> Double {
    Double(sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]) / 1000
}

func bench(folder: String, items: Int) throws {
    let store = try KeychainStore(directory: URL(fileURLWithPath: folder), name: "bench")
    let keychain = Keychain(service: "bench", store: store)
    let existing = try keychain.allKeys().count
    var writes: [UInt64] = []
    for index in existing..<items {
        let start = nanoseconds()
        try keychain.set("token-value-\(index)-0123456789abcdef", forKey: "key-\(index)")
        writes.append(nanoseconds() - start)
    }
    var reads: [UInt64] = []
    for _ in 0..<20_000 {
        let key = "key-\(Int.random(in: 0..<items))"
        let start = nanoseconds()
        guard try keychain.data(forKey: key) != nil else { fail("missing \(key)") }
        reads.append(nanoseconds() - start)
    }
    var upserts: [UInt64] = []
    for _ in 0..<2_000 {
        let key = "key-\(Int.random(in: 0..<items))"
        let start = nanoseconds()
        try keychain.set("token-value-updated", forKey: key)
        upserts.append(nanoseconds() - start)
    }
    reads.sort()
    upserts.sort()
    writes.sort()
    say("items \(items)")
    say(String(format: "read   p50 %.1f us  p99 %.1f us", percentile(reads, 0.5), percentile(reads, 0.99)))
    say(String(format: "upsert p50 %.1f us  p99 %.1f us", percentile(upserts, 0.5), percentile(upserts, 0.99)))
    if !writes.isEmpty {
        say(String(format: "insert p50 %.1f us  (%d new items)", percentile(writes, 0.5), writes.count))
    }
}

let arguments = CommandLine.arguments
guard arguments.count >= 3 else { fail("usage: KeychainStressWorker write|kill|mixkill|contend|temporary|bench ...") }

do {
    switch arguments[1] {
    case "write" where arguments.count == 6:
        let keychain = Keychain(service: "stress", store: try openStore(arguments[2], arguments[3]))
        let prefix = arguments[4]
        for index in 0..<(Int(arguments[5]) ?? 0) {
            try keychain.set("value-\(prefix)-\(index)", forKey: "\(prefix)-\(index)")
        }
        say("done")
    case "kill" where arguments.count == 5:
        let keychain = Keychain(service: "kill", store: try openStore(arguments[2], arguments[3]))
        let iteration = Int(arguments[4]) ?? 0
        say("ready")
        var index = 0
        while true {
            try keychain.set("v\(iteration)-\(index)", forKey: "i\(iteration)-\(index)")
            try keychain.set(iteration * 1_000_000 + index, forKey: "counter")
            say("ok \(index)")
            index += 1
        }
    case "mixkill" where arguments.count == 5:
        let keychain = Keychain(service: "mix", store: try openStore(arguments[2], arguments[3]))
        try mixKill(keychain: keychain, iteration: Int(arguments[4]) ?? 0)
    case "contend" where arguments.count == 8:
        let keychain = Keychain(service: "contend", store: try openStore(arguments[2], arguments[3]))
        try contend(
            keychain: keychain, worker: arguments[4], seconds: Double(arguments[5]) ?? 1, keys: Int(arguments[6]) ?? 16,
            log: arguments[7])
    case "temporary" where arguments.count == 3:
        // A TemporaryKeychain (in $TMPDIR), kept until the process is killed.
        let temporary = try TemporaryKeychain()
        try temporary.keychain(service: "temporary").set(arguments[2], forKey: "k")
        say("ready \(temporary.directory.path)")
        while true { sleep(60) }
    case "bench" where arguments.count == 4:
        try bench(folder: arguments[2], items: Int(arguments[3]) ?? 1000)
    default:
        fail("usage: KeychainStressWorker write|kill|mixkill|contend|temporary|bench ...")
    }
} catch {
    fail("error: \(error)")
}
