#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A key file: exactly 32 random bytes, mode 0600, read straight into guarded memory.
enum KeyFile {
    /// Reads a key file, refusing one the group or others may read or write, and removes the
    /// stale temporaries of its making (``removeStaleTemporaries(of:)``).
    static func read(_ url: URL) throws -> SecureBytes {
        removeStaleTemporaries(of: url.path)
        return try readKey(url)
    }

    /// Reads a key file, refusing one the group or others may read or write.
    private static func readKey(_ url: URL) throws -> SecureBytes {
        let path = url.path
        // Non-blocking: a FIFO in the key file's place would otherwise hold the open (and the
        // store's lock) until something writes to it; `fstat` then refuses it. (No effect on
        // a regular file's reads.)
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard descriptor >= 0 else {
            if errno == ENOENT { throw KeychainFileError(path: path, reason: .missingKeyFile) }
            throw KeychainFileError(path: path, reason: .cannotCreate, errno: errno)
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            throw KeychainFileError(path: path, reason: .cannotCreate, errno: errno)
        }
        try KeychainFiles.checkPrivate(info, path: path)
        guard info.st_size == Sodium.keyBytes else {
            throw KeychainFileError(path: path, reason: .invalidKeyFile, mode: UInt32(info.st_mode))
        }
        let key = try SecureBytes(count: Sodium.keyBytes)
        var total = 0
        while total < Sodium.keyBytes {
            let count = Glibc.read(descriptor, key.mutableBytes + total, Sodium.keyBytes - total)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw KeychainFileError(path: path, reason: .invalidKeyFile) }
            total += count
        }
        key.makeNoAccess()
        return key
    }

    /// Returns the key in the file, creating the file with 32 random bytes when missing.
    ///
    /// The bytes are written to a private temporary file, synced, then linked into place, so the
    /// key file appears whole or not at all, and two processes racing agree on one key. The
    /// temporary name is removed as soon as the link is made; one left by a process killed
    /// before that is removed by a later open (``removeStaleTemporaries(of:)``).
    static func readOrCreate(_ url: URL) throws -> SecureBytes {
        let path = url.path
        let exists = try KeychainFiles.checkPrivate(path)
        removeStaleTemporaries(of: path)
        if exists { return try readKey(url) }
        let temporary = path + temporaryMarker + "\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else {
            throw KeychainFileError(path: path, reason: .cannotCreate, errno: errno)
        }
        var removed = false
        defer { if !removed { unlink(temporary) } }
        var bytes = Sodium.randomBytes(Sodium.keyBytes)
        defer { Sodium.wipe(&bytes, count: bytes.count) }
        let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        let synced = fsync(descriptor) == 0
        close(descriptor)
        guard written == Sodium.keyBytes, synced else {
            throw KeychainFileError(path: path, reason: .cannotCreate, errno: errno)
        }
        let linkFailure = link(temporary, path) == 0 ? 0 : errno
        // At once, whether or not the link was made: a second name of the live key must not
        // outlive this call (a kill after this point leaves only the key file).
        unlink(temporary)
        removed = true
        if linkFailure != 0 && linkFailure != EEXIST {
            throw KeychainFileError(path: path, reason: .cannotCreate, errno: linkFailure)
        }
        // The keychain's header will need this file: its name must survive a power loss too.
        // (A failure leaves the file in place, for a later open to read.)
        let folder = url.deletingLastPathComponent().path
        if let code = FolderSync.failure(syncing: folder) {
            throw KeychainFileError(path: folder, reason: .cannotCreate, errno: code)
        }
        return try readKey(url)
    }

    /// What follows a key file's name in the name of its temporary: `<name>.tmp-<pid>-<random>`.
    static let temporaryMarker = ".tmp-"

    /// How old a temporary must be to be removed: another process may be between creating its
    /// temporary and linking it (a write, an fsync) right now, and that takes far less.
    static let staleTemporaryAge: time_t = 60

    /// Removes the temporaries of the key file at `path` that a process killed between creating
    /// and removing one left behind (each may hold a copy of the live key), when last changed
    /// more than ``staleTemporaryAge`` seconds ago. Only names of the exact form
    /// `<key file name>.tmp-<digits>-<digits>` and regular files are removed; best effort (an
    /// unreadable folder or a failed removal changes nothing else).
    static func removeStaleTemporaries(of path: String) {
        let slash = path.lastIndex(of: "/")
        let folder = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        let prefix = (slash.map { String(path[path.index(after: $0)...]) } ?? path) + temporaryMarker
        guard let directory = opendir(folder) else { return }
        defer { closedir(directory) }
        let descriptor = dirfd(directory)
        let now = time(nil)
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard name.hasPrefix(prefix), isTemporarySuffix(name.dropFirst(prefix.count)) else { continue }
            var info = stat()
            guard fstatat(descriptor, name, &info, AT_SYMLINK_NOFOLLOW) == 0, info.st_mode & S_IFMT == S_IFREG,
                now - info.st_mtim.tv_sec > staleTemporaryAge
            else { continue }
            unlinkat(descriptor, name, 0)
        }
    }

    /// Whether `suffix` is `<digits>-<digits>`, as ``readOrCreate(_:)`` names its temporaries.
    private static func isTemporarySuffix(_ suffix: Substring) -> Bool {
        let parts = suffix.split(separator: "-", omittingEmptySubsequences: false)
        return parts.count == 2 && parts.allSatisfy { !$0.isEmpty && $0.allSatisfy { $0.isASCII && $0.isNumber } }
    }
}
