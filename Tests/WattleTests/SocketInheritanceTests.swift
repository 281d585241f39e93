import Foundation
import Testing
import Wattle
import WattleDemoServer

#if os(Linux)
import Glibc

@Suite("Connections are not inherited by processes the program starts")
struct SocketInheritanceTests {
    /// The socket inodes a child started with plain `posix_spawn` (no descriptor closed, as
    /// `system()` or a library's fork and exec start one) holds.
    private func inheritedSockets() throws -> Set<String> {
        let listing = FileManager.default.temporaryDirectory.appendingPathComponent("wattle-fds-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: listing) }
        let script = "ls -l /proc/$$/fd > '\(listing.path)'"
        var pid: pid_t = 0
        let words: [String] = ["/bin/sh", "-c", script]
        let arguments: [UnsafeMutablePointer<CChar>?] = words.map { strdup($0) } + [nil]
        defer { for argument in arguments { free(argument) } }
        let status = posix_spawn(&pid, "/bin/sh", nil, nil, arguments, environ)
        try #require(status == 0, "posix_spawn: \(status)")
        var raw: Int32 = 0
        while waitpid(pid, &raw, 0) < 0 && errno == EINTR {}
        let text = try String(contentsOf: listing, encoding: .utf8)
        return Set(
            text.split(separator: "\n").compactMap { line in
                guard let start = line.range(of: "socket:["), let end = line[start.upperBound...].firstIndex(of: "]")
                else { return nil }
                return String(line[start.upperBound..<end])
            })
    }

    /// A file of /proc read to its end. (Not `String(contentsOfFile:)`: it sizes its read by
    /// `stat`, which gives /proc files no size, and took only the first part of a table with
    /// many sockets.)
    private static func readWhole(_ path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = read(descriptor, &chunk, chunk.count)
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            bytes.append(contentsOf: chunk[..<count])
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The inodes of this machine's TCP sockets connected to `port` (the client sides).
    private func clientSockets(toPort port: Int) throws -> Set<String> {
        var inodes: Set<String> = []
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            guard let text = Self.readWhole(table) else { continue }
            for line in text.split(separator: "\n").dropFirst() {
                let columns = line.split(separator: " ", omittingEmptySubsequences: true)
                guard columns.count > 9, let remotePort = columns[2].split(separator: ":").last,
                    Int(remotePort, radix: 16) == port
                else { continue }
                inodes.insert(String(columns[9]))
            }
        }
        return inodes
    }

    @Test("a child started while a connection is kept alive does not get it (close-on-exec)")
    func childDoesNotInheritConnections() async throws {
        let server = try await DemoServer.start()
        let session = makeSession(server)
        #expect(try await session.get("echo").statusCode == 200)
        // The session is held to the end: released after its last use, it would close the
        // connection before it is looked for.
        try withExtendedLifetime(session) {
            let connections = try clientSockets(toPort: server.port)
            try #require(!connections.isEmpty, "the kept-alive connection is not in /proc/net/tcp")
            let inherited = try inheritedSockets()
            #expect(inherited.isDisjoint(with: connections), "inherited: \(inherited.intersection(connections))")
        }
        try await server.stop()
    }
}
#endif
