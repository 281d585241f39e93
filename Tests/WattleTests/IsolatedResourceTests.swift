import Foundation
import Testing
import Wattle
import WattleDemoServer

/// Resource counts are process-wide, so these run alone: `make test` runs them in a second
/// `swift test` invocation with `--filter IsolatedResourceTests` (and skips them in the first).
@Suite("Isolated: no leaks under faults, flat memory under load", .serialized)
struct IsolatedResourceTests {
    static var isolated: Bool { ProcessInfo.processInfo.environment["WATTLE_ISOLATED"] == "1" }

    @Test("1,000 faulty requests leak no file descriptors, threads or memory", .enabled(if: isolated))
    func noLeaksUnderFaults() async throws {
        let server = try await Faults.server.value
        let session = Faults.session {
            $0.timeouts = Timeouts(connect: .seconds(5), total: .milliseconds(500), stall: nil)
        }
        let paths = Faults.cases.map(\.path).filter { $0 != "never" } + ["never"]
        // Warm up: the engine thread, the handle pool, the server's threads.
        for path in paths { _ = try? await session.get(server.url(path).absoluteString) }
        let descriptors = openFileDescriptorCount()
        let threads = threadCount()
        let memory = residentMemory()
        var failures = 0
        try await withThrowingTaskGroup(of: Int.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    var failed = 0
                    for index in 0..<125 {
                        let path = paths[(worker + index) % (paths.count - 1)]  // "never" costs 300 ms: once per worker
                        do { _ = try await session.get(server.url(index == 0 ? "never" : path).absoluteString) } catch {
                            failed += 1
                        }
                    }
                    return failed
                }
            }
            for try await failed in group { failures += failed }
        }
        #expect(failures == 1000)
        try await Task.sleep(for: .milliseconds(200))
        let descriptorGrowth = openFileDescriptorCount() - descriptors
        let threadGrowth = threadCount() - threads
        let memoryGrowth = residentMemory() - memory
        print(
            "faults: 1000 requests, fd growth \(descriptorGrowth), thread growth \(threadGrowth), RSS growth \(memoryGrowth / 1024) KB"
        )
        #expect(descriptorGrowth <= 2, "file descriptors grew by \(descriptorGrowth)")
        #expect(threadGrowth <= 0, "threads grew by \(threadGrowth)")
        #expect(memoryGrowth < 10 * 1024 * 1024, "RSS grew by \(memoryGrowth / 1024) KB")
    }

    @Test(
        "10,000 requests at 64 concurrent on one session: every response matched, no error, memory flat",
        .enabled(if: isolated))
    func loadTenThousand() async throws {
        let server = try await TestServer.shared()
        let session = makeSession(server)
        func batch(_ range: Range<Int>) async throws -> Int {
            try await withThrowingTaskGroup(of: Bool.self) { group in
                var iterator = range.makeIterator()
                var matched = 0
                for _ in 0..<64 {
                    guard let index = iterator.next() else { break }
                    group.addTask {
                        try await session.get("echo", parameters: ["id": index]).decode(Echo.self).query
                            == "id=\(index)"
                    }
                }
                while let ok = try await group.next() {
                    if ok { matched += 1 }
                    if let index = iterator.next() {
                        group.addTask {
                            try await session.get("echo", parameters: ["id": index]).decode(Echo.self).query
                                == "id=\(index)"
                        }
                    }
                }
                return matched
            }
        }
        let start = ContinuousClock.now
        var matched = try await batch(0..<2_000)  // warm-up
        let afterWarmUp = residentMemory()
        matched += try await batch(2_000..<10_000)
        let growth = residentMemory() - afterWarmUp
        let elapsed = ContinuousClock.now - start
        print("load: 10000 requests at 64 concurrent in \(elapsed), RSS growth after warm-up \(growth / 1024) KB")
        #expect(matched == 10_000)
        #expect(growth < 20 * 1024 * 1024, "RSS grew by \(growth / 1024) KB after warm-up")
    }

    @Test("a 200 MB download arrives intact while resident memory stays flat", .enabled(if: isolated))
    func twoHundredMegabytes() async throws {
        let server = try await TestServer.shared()
        let session = makeSession(server)
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appendingPathComponent("big.bin")
        let size = 200 * 1024 * 1024

        let baseline = residentMemory()
        let sampler = Task.detached {
            var peak = 0
            while !Task.isCancelled {
                peak = max(peak, residentMemory())
                try? await Task.sleep(for: .milliseconds(20))
            }
            return peak
        }
        let reports = ProgressLog()
        let response = try await session.download("bytes/\(size)", to: destination) { reports.record($0) }
        sampler.cancel()
        let peak = await sampler.value

        #expect(response.fileURL == destination)
        #expect(response.data.isEmpty)
        #expect(response.metrics.bytesReceived == Int64(size))
        let attributes = try FileManager.default.attributesOfItem(atPath: destination.path)
        #expect((attributes[.size] as? Int) == size)
        try expectPattern(in: destination, count: size)
        // Run alone (this suite), so the process's RSS is the download's: a few MB, where a body
        // kept in memory would be 200 MB. (Among the parallel tests it once grew by 105 MB.)
        let growth = peak - baseline
        print("download: 200 MB, peak RSS growth \(growth / 1024) KB")
        #expect(growth < 16 * 1024 * 1024, "peak resident memory grew by \(growth / 1024 / 1024) MB")
        #expect(reports.last?.receivedBytes == Int64(size))
        #expect(reports.last?.expectedBytes == Int64(size))
        #expect(reports.count > 1)
    }
}

func threadCount() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Threads:") })
    else { return -1 }
    return Int(line.split(separator: "\t").last?.trimmingCharacters(in: .whitespaces) ?? "") ?? -1
}
