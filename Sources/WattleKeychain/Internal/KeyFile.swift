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
    /// Reads a key file, refusing one the group or others may read or write.
    static func read(_ url: URL) throws -> SecureBytes {
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
    /// key file appears whole or not at all, and two processes racing agree on one key.
    static func readOrCreate(_ url: URL) throws -> SecureBytes {
        let path = url.path
        if try KeychainFiles.checkPrivate(path) { return try read(url) }
        let temporary = path + ".tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else {
            throw KeychainFileError(path: path, reason: .cannotCreate, errno: errno)
        }
        defer { unlink(temporary) }
        var bytes = Sodium.randomBytes(Sodium.keyBytes)
        defer { Sodium.wipe(&bytes, count: bytes.count) }
        let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        let synced = fsync(descriptor) == 0
        close(descriptor)
        guard written == Sodium.keyBytes, synced else {
            throw KeychainFileError(path: path, reason: .cannotCreate, errno: errno)
        }
        if link(temporary, path) != 0 && errno != EEXIST {
            throw KeychainFileError(path: path, reason: .cannotCreate, errno: errno)
        }
        // The keychain's header will need this file: its name must survive a power loss too.
        // (A failure leaves the file in place, for a later open to read.)
        let folder = url.deletingLastPathComponent().path
        if let code = FolderSync.failure(syncing: folder) {
            throw KeychainFileError(path: folder, reason: .cannotCreate, errno: code)
        }
        return try read(url)
    }
}
