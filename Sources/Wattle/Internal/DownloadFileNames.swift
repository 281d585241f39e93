#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The hidden files a download keeps beside its destination (`.NAME.wattle-….part`, the
/// partial and its state): named after the destination, and short enough for the file system.
enum DownloadFileNames {
    /// The longest file name Linux file systems take, in bytes (`NAME_MAX`).
    static let maximumLength = 255
    /// The longest suffix put after the name (`.wattle-partial-state`, `.wattle-XXXXXXXX.part`).
    static let longestSuffix = 21

    /// `.NAME` + `suffix` in `destination`'s folder. A `NAME` too long to leave room for the
    /// dot and the longest suffix (a valid 240-byte destination made a 262-byte one, which
    /// failed with `ENAMETOOLONG` at the first byte of the body) is cut at a character and
    /// followed by `~` and a hash of the whole name, so the names of two destinations that
    /// begin alike stay apart and the partial and its state stay a pair across runs.
    static func hidden(for destination: URL, suffix: String) -> URL {
        let name = destination.lastPathComponent
        let folder = destination.deletingLastPathComponent()
        guard 1 + name.utf8.count + longestSuffix > maximumLength else {
            return folder.appendingPathComponent(".\(name)\(suffix)")
        }
        let tag = "~" + hexadecimal(fnv1a(name.utf8))
        let room = maximumLength - 1 - longestSuffix - tag.utf8.count
        var kept = Substring(name)
        while kept.utf8.count > room { kept = kept.dropLast() }
        return folder.appendingPathComponent(".\(kept)\(tag)\(suffix)")
    }

    /// FNV-1a, 64 bits: to tell names apart, not a secret.
    private static func fnv1a(_ bytes: String.UTF8View) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01B3
        }
        return hash
    }

    private static func hexadecimal(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
