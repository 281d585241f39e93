import Synchronization
import Wattle

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#endif

/// Writing bodies and headers to the terminal.
enum FileHandleOutput {
    static func write(_ string: String, to descriptor: Int32) {
        write(Array(string.utf8), to: descriptor)
    }

    /// Set when a write failed (a full disk, a closed pipe): the run then exits 1, not 0.
    private static let writeFailed = Atomic<Bool>(false)

    /// Set when a write to standard output or a file failed (not standard error).
    private static let outputFailed = Atomic<Bool>(false)

    /// Whether a write failed, to any descriptor: the run exits 1, as what was asked for was
    /// not all written.
    static var hasWriteFailed: Bool { writeFailed.load(ordering: .relaxed) }

    /// Whether a write of the output (not of standard error) failed: a streamed body stops
    /// there. A full or closed standard error (`-v 2>/dev/full`) does not cut the body short.
    static var hasOutputFailed: Bool { outputFailed.load(ordering: .relaxed) }

    static func write(_ bytes: [UInt8], to descriptor: Int32) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if written > 0 {
                offset += written
                continue
            }
            let code = errno
            if written < 0, code == EINTR { continue }
            if written < 0, code == EAGAIN || code == EWOULDBLOCK {
                // A non-blocking descriptor inherited from the shell: wait until it takes more.
                var ready = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                _ = poll(&ready, 1, -1)
                continue
            }
            if descriptor != 2 { outputFailed.store(true, ordering: .relaxed) }
            // One line on stderr for the first failure (if stderr itself fails, there is no one to tell).
            if !writeFailed.exchange(true, ordering: .relaxed), descriptor != 2 {
                write("wattle: cannot write the output: \(String(cString: strerror(code)))\n", to: 2)
            }
            return
        }
    }

    /// Whether a descriptor is a terminal.
    static func isTerminal(_ descriptor: Int32) -> Bool { isatty(descriptor) == 1 }
}
