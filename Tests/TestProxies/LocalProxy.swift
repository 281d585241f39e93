import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A real proxy for the proxy tests, started on 127.0.0.1 and stopped by its pid:
/// - ``tinyproxy(credentials:)``: an HTTP proxy (Debian's `tinyproxy-bin`). It forwards plain
///   `http` requests, adding `Via: 1.1 wattle-test-proxy`, and tunnels `CONNECT`; its log holds
///   the request lines it saw.
/// - ``microsocks(credentials:)``: a SOCKS5 proxy (Debian's `microsocks`). Its log holds a line
///   per connection it made for a client.
///
/// `make test` installs both. Shared by the library's and the CLI's tests.
public final class LocalProxy: @unchecked Sendable {
    /// The name tinyproxy puts in the `Via` header of forwarded requests.
    public static let viaName = "wattle-test-proxy"

    /// The port it listens on, on 127.0.0.1.
    public let port: Int
    /// The scheme of its URL: `http` or `socks5h`.
    public let scheme: String
    private let process: ChildProcess
    private let folder: URL
    private let log: URL

    /// An HTTP proxy; with `credentials`, it demands them (`BasicAuth`).
    public static func tinyproxy(credentials: (user: String, password: String)? = nil) throws -> LocalProxy {
        try LocalProxy(executable: "/usr/bin/tinyproxy", package: "tinyproxy-bin", scheme: "http", log: "tinyproxy.log")
        {
            port, folder, log in
            var lines = [
                "Port \(port)", "Listen 127.0.0.1", "Timeout 30", "MaxClients 256", "Allow 127.0.0.1",
                "LogFile \"\(log.path)\"", "LogLevel Connect", "ViaProxyName \"\(viaName)\"",
            ]
            if let credentials { lines.append("BasicAuth \(credentials.user) \(credentials.password)") }
            let configuration = folder.appendingPathComponent("tinyproxy.conf")
            try (lines.joined(separator: "\n") + "\n").write(to: configuration, atomically: true, encoding: .utf8)
            return ["-d", "-c", configuration.path]
        }
    }

    /// A SOCKS5 proxy; with `credentials`, it demands them (user name and password).
    public static func microsocks(credentials: (user: String, password: String)? = nil) throws -> LocalProxy {
        try LocalProxy(executable: "/usr/bin/microsocks", package: "microsocks", scheme: "socks5h", log: "output.log") {
            port, _, _ in
            ["-i", "127.0.0.1", "-p", "\(port)"] + (credentials.map { ["-u", $0.user, "-P", $0.password] } ?? [])
        }
    }

    /// Starts `executable` with the arguments `arguments(port, folder, log)` gives, on a free
    /// port. Its standard output and error go to `output.log` in the folder; `log` names the
    /// file its log is read from (tinyproxy writes its own, given in its configuration).
    private init(
        executable: String, package: String, scheme: String, log logName: String,
        arguments: (Int, URL, URL) throws -> [String]
    ) throws {
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw LocalProxyError("\(executable) is missing: `make test` installs it (Debian package \(package))")
        }
        self.scheme = scheme
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("wattle-proxy-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        log = folder.appendingPathComponent(logName)
        let outputFile = folder.appendingPathComponent("output.log")
        // A free port can be taken between finding and binding it: try a few.
        for _ in 0..<5 {
            let port = try Self.freePort()
            // posix_spawn, not Foundation's Process (see ChildProcess).
            let process = try ChildProcess(
                executable, try arguments(port, folder, log), output: .file(outputFile.path))
            if Self.waitUntilListening(port: port, process: process) {
                self.port = port
                self.process = process
                return
            }
            process.killIfRunning()
        }
        throw LocalProxyError("\(executable) did not start listening; see \(outputFile.path)")
    }

    deinit { stop() }

    /// `scheme://127.0.0.1:port`, with `user:password@` when given.
    public func url(user: String? = nil, password: String? = nil) -> String {
        let credentials = user.map { "\($0):\(password ?? "")@" } ?? ""
        return "\(scheme)://\(credentials)127.0.0.1:\(port)"
    }

    /// tinyproxy's request lines, in order (`GET http://127.0.0.1:8080/echo HTTP/1.1`,
    /// `CONNECT 127.0.0.1:8443 HTTP/1.1`).
    public func requestLines() -> [String] {
        logLines().compactMap { line in
            guard line.contains("Request (file descriptor"), let colon = line.firstRange(of: "): ") else { return nil }
            return String(line[colon.upperBound...])
        }
    }

    /// microsocks's connections for clients, in order (`127.0.0.1:8443`).
    public func socksConnections() -> [String] {
        logLines().compactMap { line in
            guard let marker = line.firstRange(of: "connected to ") else { return nil }
            return String(line[marker.upperBound...])
        }
    }

    private func logLines() -> [String] {
        guard let text = try? String(contentsOf: log, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").map(String.init)
    }

    /// Stops the proxy (idempotent). `SIGKILL`, not `SIGTERM`: on `SIGTERM` tinyproxy waits for
    /// its open connections, which a session keeps alive, for up to its 30 s timeout.
    public func stop() {
        process.killIfRunning()
        try? FileManager.default.removeItem(at: folder)
    }

    private static func waitUntilListening(port: Int, process: ChildProcess) -> Bool {
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline, process.isRunning {
            // Still running after a connection: the listener is this proxy, not another's.
            if canConnect(port: port) { return process.isRunning }
            usleep(20_000)
        }
        return false
    }

    /// A port of 127.0.0.1 that nothing listens on: bound, read and closed.
    private static func freePort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw LocalProxyError("socket: \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard bound == 0, named == 0 else {
            throw LocalProxyError("cannot find a free port: \(String(cString: strerror(errno)))")
        }
        return Int(UInt16(bigEndian: address.sin_port))
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

/// A test proxy that could not start.
public struct LocalProxyError: Error, CustomStringConvertible {
    /// What went wrong, and what to install.
    public let description: String
    init(_ description: String) { self.description = description }
}
