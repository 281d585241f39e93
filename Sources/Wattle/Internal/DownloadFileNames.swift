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
    /// The longest suffix put after the name: `.wattle-partial-state.tmp`, the state file as it
    /// is written before its rename (`.wattle-XXXXXXXX.part` and `.wattle-partial-state` are
    /// shorter).
    static let longestSuffix = 25

    /// `.NAME` + `suffix` in `destination`'s folder. A `NAME` too long to leave room for the
    /// dot and the longest suffix (a valid 240-byte destination made a 262-byte one, which
    /// failed with `ENAMETOOLONG` at the first byte of the body) is cut at a character and
    /// followed by `~` and 16 hexadecimal digits of a hash of the whole name, so the names of two destinations that
    /// begin alike stay apart and the partial and its state stay a pair across runs.
    static func hidden(for destination: URL, suffix: String) -> URL {
        let name = destination.lastPathComponent
        let folder = destination.deletingLastPathComponent()
        guard 1 + name.utf8.count + longestSuffix > maximumLength else {
            return folder.appendingPathComponent(".\(name)\(suffix)")
        }
        let tag = "~" + PartialDownload.hash(name).prefix(16)
        let room = maximumLength - 1 - longestSuffix - tag.utf8.count
        var kept = Substring(name)
        while kept.utf8.count > room { kept = kept.dropLast() }
        return folder.appendingPathComponent(".\(kept)\(tag)\(suffix)")
    }
}
