#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Wattle

#if canImport(Glibc)
    import Glibc
#endif

/// Writing bodies and headers to the terminal.
enum FileHandleOutput {
    static func write(_ string: String, to descriptor: Int32) {
        write(Array(string.utf8), to: descriptor)
    }

    static func write(_ bytes: [UInt8], to descriptor: Int32) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if written <= 0 { return }
            offset += written
        }
    }

    /// Whether a descriptor is a terminal.
    static func isTerminal(_ descriptor: Int32) -> Bool { isatty(descriptor) == 1 }
}

