import WattleKeychain

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// The hidden file a download that is not resumable writes before renaming it into place
/// (`.NAME.wattle-XXXXXXXX.part`, beside the destination), and the sweep of those that killed
/// processes left behind.
///
/// The file is created empty and private, and an exclusive `flock` on it is held until this is
/// released: a download that is running holds it, one whose process died (`SIGKILL`, a crash,
/// a power loss) does not. The first download of a process into a folder removes the
/// temporaries there that nothing holds and that were last written more than
/// ``staleAge`` seconds ago (a file just created, whose creator has not locked it yet, is
/// younger). A resumable download's partial is kept on purpose and never swept.
final class DownloadTemporary: Sendable {
    /// The temporary's path.
    let file: URL
    /// An open descriptor holding the lock, closed on release.
    private let lock: Int32

    /// How long an unlocked temporary must have gone unwritten before a sweep removes it.
    static let staleAge: time_t = 60

    private init(file: URL, lock: Int32) {
        self.file = file
        self.lock = lock
    }

    deinit { close(lock) }

    /// Creates and locks a new temporary for `destination`, after sweeping the folder's stale
    /// ones (once per folder in this process).
    static func create(for destination: URL) throws(WattleError) -> DownloadTemporary {
        let folder = destination.deletingLastPathComponent()
        sweepOnce(folder)
        for _ in 0..<3 {
            let file = DownloadFileNames.hidden(
                for: destination, suffix: ".wattle-\(UUID().uuidString.prefix(Self.tagLength)).part")
            let descriptor = open(file.path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
            if descriptor < 0 {
                if errno == EEXIST { continue }
                throw .fileError(
                    path: file.path, reason: "cannot create the download's file: \(String(cString: strerror(errno)))")
            }
            // A new file with a name of its own: only a sweep may hold its lock, for a moment
            // (it checks a file's age before locking it, so not even that): wait for it.
            while flock(descriptor, LOCK_EX) != 0 {
                // A file system without locks (NFS without lockd): on without one, as before
                // there was one; a sweep elsewhere cannot lock such a file either.
                if errno == ENOLCK || errno == EINVAL || errno == EOPNOTSUPP { break }
                guard errno == EINTR else {
                    let reason = String(cString: strerror(errno))
                    close(descriptor)
                    unlink(file.path)
                    throw .fileError(path: file.path, reason: "cannot lock the download's file: \(reason)")
                }
            }
            return DownloadTemporary(file: file, lock: descriptor)
        }
        throw .fileError(path: folder.path, reason: "cannot create the download's file: its names are taken")
    }

    // MARK: The sweep

    /// The length of the random tag in a temporary's name.
    static let tagLength = 8

    /// Folders this process has swept.
    private static let swept = PThreadLocked(Set<String>())

    private static func sweepOnce(_ folder: URL) {
        let first = swept.withLock { folders in
            if folders.count >= 1024 { folders.removeAll() }
            return folders.insert(folder.path).inserted
        }
        if first { sweep(folder, now: time(nil)) }
    }

    /// Removes the stale temporaries in `folder`: named as ``create(for:)`` names them, not
    /// locked, and last written more than ``staleAge`` seconds before `now`. Returns their names.
    @discardableResult
    static func sweep(_ folder: URL, now: time_t) -> [String] {
        guard let directory = opendir(folder.path) else { return [] }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if isTemporaryName(name) { names.append(name) }
        }
        closedir(directory)
        return names.filter { removeIfStale(folder.appendingPathComponent($0).path, now: now) }
    }

    /// `.NAME.wattle-XXXXXXXX.part`, the tag of hexadecimal digits.
    static func isTemporaryName(_ name: String) -> Bool {
        let suffix = ".part"
        let marker = ".wattle-"
        let bytes = Array(name.utf8)
        let tagEnd = bytes.count - suffix.utf8.count
        let tagStart = tagEnd - tagLength
        let markerStart = tagStart - marker.utf8.count
        guard markerStart > 1, bytes.first == UInt8(ascii: "."), name.hasSuffix(suffix),
            bytes[markerStart..<tagStart].elementsEqual(marker.utf8)
        else { return false }
        return bytes[tagStart..<tagEnd].allSatisfy {
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains($0)
        }
    }

    /// Removes the regular file at `path` when no one holds its lock and it was last written
    /// more than ``staleAge`` seconds before `now`, checking under the lock that the path still
    /// names the file (a download may have renamed it into place meanwhile).
    private static func removeIfStale(_ path: String, now: time_t) -> Bool {
        // The age first: a file just created is never locked here, where its creator would
        // find it held.
        var named = stat()
        guard lstat(path, &named) == 0, named.st_mode & S_IFMT == S_IFREG, now - named.st_mtim.tv_sec > staleAge
        else { return false }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else { return false }
        var opened = stat()
        guard fstat(descriptor, &opened) == 0, opened.st_mode & S_IFMT == S_IFREG,
            now - opened.st_mtim.tv_sec > staleAge,
            lstat(path, &named) == 0, named.st_dev == opened.st_dev, named.st_ino == opened.st_ino
        else { return false }
        return unlink(path) == 0
    }
}
