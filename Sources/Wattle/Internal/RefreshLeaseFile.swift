#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// Refresh leases for the token items of one keychain file, across processes: a lock on one
/// byte of a file beside the keychain (`NAME.keychain-leases`, mode 0600, empty), the byte
/// chosen by the item's service and key, so that refreshes of different tokens do not wait
/// for each other.
///
/// The locks are Linux's open-file-description locks (`F_OFD_SETLK`): they belong to one
/// `open` of the file, so two sessions of one process exclude each other as two processes do,
/// and the kernel gives one back when its process ends, however it ends. Where the file cannot
/// be made or locked (a read-only folder, a file system without locks), there is no lease: the
/// refresh goes on as it would without one.
enum RefreshLeaseFile {
    /// `F_OFD_SETLK` (Linux 3.15), which Glibc's module does not export.
    private static let setLock: Int32 = 37

    /// The lease file of a keychain file.
    static func path(for keychainFile: URL) -> String { keychainFile.path + "-leases" }

    /// Waits for the lease on `item` of the keychain at `keychainFile`, polling every 5 to 50 ms,
    /// for at most `timeout` (a refresh that another process holds longer than its renewal can
    /// take has hung: this one then goes on without the lease). Nil without a lease: none
    /// could be had, the wait ran out, or the task was cancelled.
    static func acquire(keychainFile: URL, item: String, timeout: Duration) async -> TokenStoreLease? {
        let path = path(for: keychainFile)
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else { return nil }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            close(descriptor)
            return nil
        }
        var lock = flock()
        lock.l_type = Int16(F_WRLCK)
        lock.l_whence = Int16(SEEK_SET)
        lock.l_start = off_t(offset(of: item))
        lock.l_len = 1
        let deadline = ContinuousClock.now + timeout
        var pause = Duration.milliseconds(5)
        while true {
            if fcntl(descriptor, setLock, &lock) == 0 {
                return TokenStoreLease { close(descriptor) }
            }
            let code = errno
            guard code == EAGAIN || code == EACCES || code == EINTR, ContinuousClock.now < deadline else {
                close(descriptor)
                return nil
            }
            do {
                try await Task.sleep(for: pause)
            } catch {
                close(descriptor)
                return nil
            }
            pause = min(pause * 2, .milliseconds(50))
        }
    }

    /// The byte locked for `item`: FNV-1a of its UTF-8, kept below 2^62 (any offset may be
    /// locked; the file stays empty).
    static func offset(of item: String) -> Int64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in item.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
        return Int64(hash >> 2)
    }
}
