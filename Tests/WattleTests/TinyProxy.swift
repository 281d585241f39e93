import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A real HTTP proxy for the proxy tests: tinyproxy (Debian's `tinyproxy-bin`, which `make test`
/// installs), started on 127.0.0.1 with its own configuration in a temporary folder, and stopped
/// by its pid. It forwards plain `http` requests (adding `Via: 1.1 wattle-test-proxy`) and
/// tunnels `CONNECT`; its log says which requests it saw.
final class TinyProxy: @unchecked Sendable {
    static let executable = "/usr/bin/tinyproxy"
    /// The name tinyproxy puts in the `Via` header of forwarded requests.
    static let viaName = "wattle-test-proxy"

    let port: Int
    private let process: Process
    private let folder: URL
    private let log: URL

    /// Starts a proxy; with `credentials`, it demands them (`BasicAuth`).
    init(credentials: (user: String, password: String)? = nil) throws {
        guard FileManager.default.isExecutableFile(atPath: Self.executable) else {
            throw TinyProxyError("\(Self.executable) is missing: `make test` installs it (Debian package tinyproxy-bin)")
        }
        folder = try temporaryFolder()
        log = folder.appendingPathComponent("tinyproxy.log")
        // A free port can be taken between finding and binding it: try a few.
        var lastError = TinyProxyError("tinyproxy did not start")
        for _ in 0..<5 {
            let port = try refusedPort()
            var lines = [
                "Port \(port)", "Listen 127.0.0.1", "Timeout 30", "MaxClients 256", "Allow 127.0.0.1",
                "LogFile \"\(log.path)\"", "LogLevel Connect", "ViaProxyName \"\(Self.viaName)\"",
            ]
            if let credentials { lines.append("BasicAuth \(credentials.user) \(credentials.password)") }
            let configuration = folder.appendingPathComponent("tinyproxy.conf")
            try (lines.joined(separator: "\n") + "\n").write(to: configuration, atomically: true, encoding: .utf8)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: Self.executable)
            process.arguments = ["-d", "-c", configuration.path]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            if Self.waitUntilListening(port: port, process: process) {
                self.port = port
                self.process = process
                return
            }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
            lastError = TinyProxyError("tinyproxy did not listen on port \(port): \(log.path)")
        }
        throw lastError
    }

    deinit { stop() }

    /// `http://127.0.0.1:port`, with `user:password@` when given.
    func url(user: String? = nil, password: String? = nil) -> String {
        let credentials = user.map { "\($0):\(password ?? "")@" } ?? ""
        return "http://\(credentials)127.0.0.1:\(port)"
    }

    /// The request lines the proxy received, in order (`GET http://127.0.0.1:8080/echo HTTP/1.1`,
    /// `CONNECT 127.0.0.1:8443 HTTP/1.1`).
    func requestLines() -> [String] {
        guard let text = try? String(contentsOf: log, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            guard line.contains("Request (file descriptor"), let colon = line.range(of: "): ") else { return nil }
            return String(line[colon.upperBound...])
        }
    }

    /// Stops the proxy (idempotent). `SIGKILL`, not `SIGTERM`: on `SIGTERM` tinyproxy waits for
    /// its open connections, which a session keeps alive, for up to its 30 s timeout.
    func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: folder)
    }

    private static func waitUntilListening(port: Int, process: Process) -> Bool {
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline, process.isRunning {
            // Still running after a connection: the listener is this proxy, not another's.
            if canConnect(port: port) { return process.isRunning }
            usleep(20_000)
        }
        return false
    }

    private static func canConnect(port: Int) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}

struct TinyProxyError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
