// What every Swift benchmark program shares: the command line, the measured loops, and the
// JSON line each run prints (the same fields as Benchmarks/C/bench-curl.c).
//
//   <program> seq      URL N [h1|h2] [CAFILE]    N sequential GETs, one kept-alive connection
//   <program> conc     URL N C [h1|h2] [CAFILE]  N GETs, C in flight at once
//   <program> download URL FILE [h1|h2] [CAFILE] streams the body to FILE
//   <program> flat     URL N [h1|h2] [CAFILE]    like seq; RSS after warm-up (N/10) and at end
//
// Timing starts after a warm-up of 200 requests (connections open, caches warm) and covers the
// requests only; CPU is user+sys from getrusage over the same span; peak RSS is VmHWM.
//
// Only the C library and the standard library here, not Foundation: what a program's memory
// holds at start is then what the client under test brings in.

import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Options of one run.
public struct Options: Sendable {
    public var mode: String
    public var url: String
    public var count = 1
    public var concurrency = 1
    public var file = ""
    /// Whether HTTP/2 is asked for (over TLS).
    public var http2 = false
    /// A CA file that makes the server's self-signed certificate trusted, when the tool can use one.
    public var caFile: String?

    public var isTLS: Bool { url.hasPrefix("https:") }

    static func parse(_ arguments: [String]) -> Options? {
        guard arguments.count >= 4 else { return nil }
        var options = Options(mode: arguments[1], url: arguments[2])
        var rest: ArraySlice<String>
        switch options.mode {
        case "seq", "flat":
            guard let n = Int(arguments[3]) else { return nil }
            options.count = n
            rest = arguments.dropFirst(4)
        case "conc":
            guard arguments.count >= 5, let n = Int(arguments[3]), let c = Int(arguments[4]) else { return nil }
            options.count = n
            options.concurrency = c
            rest = arguments.dropFirst(5)
        case "download":
            options.file = arguments[3]
            rest = arguments.dropFirst(4)
        default:
            return nil
        }
        if let version = rest.first {
            options.http2 = version == "h2"
            rest = rest.dropFirst()
        }
        if let ca = rest.first, !ca.isEmpty { options.caFile = ca }
        return options
    }
}

/// One HTTP client under test.
public protocol BenchClient: Sendable {
    /// GETs `url`; returns the number of body bytes, or throws.
    func get(_ url: String) async throws -> Int
    /// Streams `url` to `path`; returns the number of bytes written, or throws.
    func download(_ url: String, to path: String) async throws -> Int
    /// Releases the client.
    func shutdown() async
    /// Runs the whole measurement (warm-up included); a client may run it on an executor of
    /// its own (Wattle's network-thread executor). By default, as is.
    func run(_ measurement: () async -> Int) async -> Int
}

extension BenchClient {
    public func shutdown() async {}
    public func run(_ measurement: () async -> Int) async -> Int { await measurement() }
}

public enum Bench {
    public static let warmup = 200

    public static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// User + system CPU seconds of the process so far.
    public static func cpu() -> Double {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6 + Double(usage.ru_stime.tv_sec)
            + Double(usage.ru_stime.tv_usec) / 1e6
    }

    /// A `kB` line of /proc/self/status (`VmHWM`, `VmRSS`).
    public static func statusKB(_ field: String) -> Int {
        guard let file = fopen("/proc/self/status", "r") else { return -1 }
        defer { fclose(file) }
        var buffer = [CChar](repeating: 0, count: 256)
        while fgets(&buffer, Int32(buffer.count), file) != nil {
            let line = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            guard line.hasPrefix(field + ":") else { continue }
            return Int(String(line.dropFirst(field.count + 1).filter(\.isNumber))) ?? -1
        }
        return -1
    }

    /// `value` with `digits` decimals (printf's %.Nf).
    public static func decimal(_ value: Double, _ digits: Int) -> String {
        var buffer = [CChar](repeating: 0, count: 64)
        _ = withVaList([value]) { vsnprintf(&buffer, buffer.count, "%.\(digits)f", $0) }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Writes a line to a file descriptor (1 stdout, 2 stderr), unbuffered.
    public static func writeLine(_ line: String, to descriptor: Int32) {
        var bytes = Array((line + "\n").utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes { write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if written <= 0 { return }
            offset += written
        }
    }

    public static func say(_ line: String) { writeLine(line, to: 1) }

    public static func fail(_ message: String) -> Never {
        writeLine(message, to: 2)
        exit(1)
    }

    /// Prints the result line.
    public static func report(
        tool: String, mode: String, requests: Int, seconds: Double, cpu: Double, bytes: Int, errors: Int,
        extra: [(String, Int)] = []
    ) {
        var line =
            "{\"tool\":\"\(tool)\",\"mode\":\"\(mode)\",\"requests\":\(requests),"
            + "\"seconds\":\(decimal(seconds, 6)),\"cpu\":\(decimal(cpu, 6)),"
            + "\"maxrss_kb\":\(statusKB("VmHWM")),\"rss_start_kb\":\(rssAtStart),"
            + "\"bytes\":\(bytes),\"errors\":\(errors)"
        for (key, value) in extra { line += ",\"\(key)\":\(value)" }
        say(line + "}")
    }

    /// Parses the command line, makes the client, runs the mode, prints the line, exits.
    /// VmRSS when the program started, before the client was made: the Swift runtime and the
    /// libraries the program links (for bench-wattle, what Wattle brings in).
    nonisolated(unsafe) static var rssAtStart = -1

    public static func main(tool: String, makeClient: (Options) throws -> any BenchClient) async {
        rssAtStart = statusKB("VmRSS")
        guard let options = Options.parse(CommandLine.arguments) else {
            fail(
                "usage: \(tool) seq|flat URL N [h1|h2] [CAFILE] | conc URL N C [h1|h2] [CAFILE] | download URL FILE [h1|h2] [CAFILE]"
            )
        }
        let client: any BenchClient
        do {
            client = try makeClient(options)
        } catch {
            fail("\(tool): \(error)")
        }
        let errors = await client.run {
            switch options.mode {
            case "seq", "flat": await sequential(tool: tool, client, options)
            case "conc": await concurrent(tool: tool, client, options)
            default: await download(tool: tool, client, options)
            }
        }
        await client.shutdown()
        exit(errors == 0 ? 0 : 1)
    }

    final class ErrorLog: Sendable {
        private let count = Mutex(0)
        func record(_ tool: String, _ error: any Error) {
            let shown = count.withLock {
                $0 += 1
                return $0 <= 3
            }
            if shown { writeLine("\(tool): \(error)", to: 2) }
        }
        var total: Int { count.withLock { $0 } }
    }

    struct EmptyBody: Error, CustomStringConvertible {
        var description: String { "empty body" }
    }

    static func once(_ client: any BenchClient, _ url: String, _ log: ErrorLog, _ tool: String) async -> Int {
        do {
            let bytes = try await client.get(url)
            if bytes == 0 { throw EmptyBody() }
            return bytes
        } catch {
            log.record(tool, error)
            return 0
        }
    }

    static func sequential(tool: String, _ client: any BenchClient, _ options: Options) async -> Int {
        let log = ErrorLog()
        for _ in 0..<warmup { _ = await once(client, options.url, log, tool) }
        let flat = options.mode == "flat"
        let warm = flat ? options.count / 10 : -1
        var rssWarm = -1
        var bytes = 0
        let (t0, c0) = (now(), cpu())
        for index in 0..<options.count {
            bytes += await once(client, options.url, log, tool)
            if index + 1 == warm { rssWarm = statusKB("VmRSS") }
        }
        let (t1, c1) = (now(), cpu())
        report(
            tool: tool, mode: options.mode, requests: options.count, seconds: t1 - t0, cpu: c1 - c0, bytes: bytes,
            errors: log.total,
            extra: flat ? [("rss_warm_kb", rssWarm), ("rss_end_kb", statusKB("VmRSS"))] : [])
        return log.total
    }

    /// `concurrency` workers, each sending its share of the requests one after another, so that
    /// `concurrency` requests are in flight at all times.
    static func concurrent(tool: String, _ client: any BenchClient, _ options: Options) async -> Int {
        let log = ErrorLog()
        func batch(_ total: Int) async -> Int {
            let workers = options.concurrency
            return await withTaskGroup(of: Int.self) { group in
                for worker in 0..<workers {
                    let share = total / workers + (worker < total % workers ? 1 : 0)
                    group.addTask {
                        var bytes = 0
                        for _ in 0..<share { bytes += await once(client, options.url, log, tool) }
                        return bytes
                    }
                }
                return await group.reduce(0, +)
            }
        }
        _ = await batch(max(warmup, options.concurrency * 4))
        let (t0, c0) = (now(), cpu())
        let bytes = await batch(options.count)
        let (t1, c1) = (now(), cpu())
        report(
            tool: tool, mode: "conc", requests: options.count, seconds: t1 - t0, cpu: c1 - c0, bytes: bytes,
            errors: log.total)
        return log.total
    }

    static func download(tool: String, _ client: any BenchClient, _ options: Options) async -> Int {
        let log = ErrorLog()
        var bytes = 0
        let (t0, c0) = (now(), cpu())
        do {
            bytes = try await client.download(options.url, to: options.file)
        } catch {
            log.record(tool, error)
        }
        let (t1, c1) = (now(), cpu())
        report(
            tool: tool, mode: "download", requests: 1, seconds: t1 - t0, cpu: c1 - c0, bytes: bytes, errors: log.total)
        return log.total
    }
}
