// WattleKeychain's read, upsert and open latencies; Benchmarks/C/bench-keychain.c does the same
// work in C (the limit). Same command line and JSON fields:
//
//   bench-keychain fill DIR N                  DIR/bench.keychain (key file) with items key-0..<N
//   bench-keychain rw DIR N READS UPSERTS      random Keychain.data(forKey:), then random set(_:forKey:)
//   bench-keychain open DIR keyfile|passphrase REPS
//                                              KeychainStore(fileURL:credential:) on an existing file
//
// (Tests/KeychainStressWorker's `bench` mode prints text, fills one transaction per item and
// has no open timing, hence this program.)
import BenchSupport
import Foundation
import WattleKeychain

func percentile(_ sorted: [Double], _ fraction: Double) -> Double {
    sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]
}

func format(_ value: Double) -> String { String(format: "%.2f", value) }

let passphrase = "correct horse battery staple"

func store(_ dir: String, _ name: String, passphrase usePassphrase: Bool = false) throws -> KeychainStore {
    let folder = URL(fileURLWithPath: dir, isDirectory: true)
    let credential: KeychainCredential =
        usePassphrase
        ? .passphrase(passphrase) : .keyFile(folder.appendingPathComponent("\(name).key"))
    return try KeychainStore(fileURL: folder.appendingPathComponent("\(name).keychain"), credential: credential)
}

let arguments = CommandLine.arguments
guard arguments.count >= 4 else {
    Bench.fail("usage: bench-keychain fill DIR N | rw DIR N READS UPSERTS | open DIR keyfile|passphrase REPS")
}
let (mode, dir) = (arguments[1], arguments[2])

do {
    switch mode {
    case "fill":
        let count = Int(arguments[3]) ?? 0
        let keychain = Keychain(service: "bench", store: try store(dir, "bench"))
        let t0 = Bench.now()
        for index in 0..<count {
            try keychain.set("token-value-\(index)-0123456789abcdef", forKey: "key-\(index)")
        }
        Bench.say(
            "{\"tool\":\"wattle\",\"mode\":\"fill\",\"items\":\(count),\"seconds\":\(format(Bench.now() - t0))}")
    case "rw" where arguments.count >= 6:
        let (count, readCount, upsertCount) = (Int(arguments[3]) ?? 1, Int(arguments[4]) ?? 0, Int(arguments[5]) ?? 0)
        let keychain = Keychain(service: "bench", store: try store(dir, "bench"))
        var reads: [Double] = []
        reads.reserveCapacity(readCount)
        for _ in 0..<readCount {
            let key = "key-\(Int.random(in: 0..<count))"
            let t0 = Bench.now()
            let value = try keychain.data(forKey: key)
            reads.append((Bench.now() - t0) * 1e6)
            guard value != nil else { Bench.fail("bench-keychain: missing \(key)") }
        }
        var upserts: [Double] = []
        upserts.reserveCapacity(upsertCount)
        for _ in 0..<upsertCount {
            let key = "key-\(Int.random(in: 0..<count))"
            let t0 = Bench.now()
            try keychain.set("token-value-updated", forKey: key)
            upserts.append((Bench.now() - t0) * 1e6)
        }
        reads.sort()
        upserts.sort()
        Bench.say(
            "{\"tool\":\"wattle\",\"mode\":\"rw\",\"items\":\(count),\"reads\":\(readCount),\"upserts\":\(upsertCount),"
                + "\"read_p50_us\":\(format(percentile(reads, 0.5))),\"read_p99_us\":\(format(percentile(reads, 0.99))),"
                + "\"upsert_p50_us\":\(format(percentile(upserts, 0.5))),"
                + "\"upsert_p99_us\":\(format(percentile(upserts, 0.99)))}")
    case "open" where arguments.count >= 5:
        let usePassphrase = arguments[3] == "passphrase"
        let name = usePassphrase ? "open-passphrase" : "open-keyfile"
        let reps = Int(arguments[4]) ?? 1
        _ = try store(dir, name, passphrase: usePassphrase)  // creates it
        var times: [Double] = []
        for _ in 0..<reps {
            let t0 = Bench.now()
            let opened = try store(dir, name, passphrase: usePassphrase)
            times.append((Bench.now() - t0) * 1e6)
            withExtendedLifetime(opened) {}
        }
        times.sort()
        Bench.say(
            "{\"tool\":\"wattle\",\"mode\":\"open\",\"credential\":\"\(arguments[3])\",\"reps\":\(reps),"
                + "\"open_p50_us\":\(String(format: "%.1f", percentile(times, 0.5))),"
                + "\"open_min_us\":\(String(format: "%.1f", times.first ?? 0))}")
    default:
        Bench.fail("bench-keychain: bad arguments")
    }
} catch {
    Bench.fail("bench-keychain: \(error)")
}
