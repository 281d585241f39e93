import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A TCP listener on 127.0.0.1 that never accepts and never answers: connections complete
/// in the kernel's backlog, then nothing happens (a TLS handshake gets no reply, as from a
/// host behind a black hole). Shared by the library's and the CLI's tests; the socket is
/// closed when this is released, so keep it alive (`withExtendedLifetime`) while it is used.
public final class SilentServer: @unchecked Sendable {
    /// The port it is bound to.
    public let port: Int
    private var descriptor: Int32

    /// - Parameter listening: false for a port that is only bound, where connections are refused.
    public init(listening: Bool = true) throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw Self.failure() }
        self.descriptor = descriptor
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        guard bound == 0, !listening || listen(descriptor, 16) == 0 else {
            let error = Self.failure()
            close(descriptor)
            throw error
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        self.port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { if descriptor >= 0 { close(descriptor) } }

    /// The listening socket, now the caller's to accept on and close.
    public func takeDescriptor() -> Int32 {
        defer { descriptor = -1 }
        return descriptor
    }

    /// A port on 127.0.0.1 where a connection is refused: bound without `listen`, and held for
    /// the rest of the run. (Bound and released, it once went to another test's server
    /// meanwhile, which then reset the connection instead of refusing it.)
    public static func refusedPort() throws -> Int {
        let bound = try SilentServer(listening: false)
        heldRefusedPorts.withLock { $0.append(bound.takeDescriptor()) }
        return bound.port
    }

    /// The sockets behind ``refusedPort()``, open until the test process ends.
    private static let heldRefusedPorts = Mutex<[Int32]>([])

    /// The error in `errno`.
    private static func failure() -> POSIXError {
        POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
    }
}
