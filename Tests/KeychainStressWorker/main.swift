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

import Foundation
import WattleKeychain

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
guard arguments.count >= 3 else { fail("usage: KeychainStressWorker write|kill|bench ...") }

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
    case "bench" where arguments.count == 4:
        try bench(folder: arguments[2], items: Int(arguments[3]) ?? 1000)
    default:
        fail("usage: KeychainStressWorker write|kill|bench ...")
    }
} catch {
    fail("error: \(error)")
}
