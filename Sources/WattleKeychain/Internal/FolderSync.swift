#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Flushes a folder's entries to disk, so that a file created or renamed into it is still
/// there after a power loss. Shared with the Wattle module (`package` access): a new key file
/// and a finished download both need it.
package enum FolderSync {
    /// Syncs the folder at `path`; the reason when that failed. A folder that cannot be opened
    /// for reading (one the process may write but not list) or a file system that cannot sync
    /// a folder (`EINVAL`, `EBADF`) is not a failure: there is nothing more to ask of it.
    package static func sync(_ path: String) -> String? {
        failure(syncing: path).map { String(cString: strerror($0)) }
    }

    /// ``sync(_:)``'s failure as an `errno` value, nil when it succeeded.
    package static func failure(syncing path: String) -> Int32? {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            return code == EACCES || code == EPERM ? nil : code
        }
        defer { close(descriptor) }
        guard fsync(descriptor) != 0 else { return nil }
        let code = errno
        return code == EINVAL || code == EBADF ? nil : code
    }
}
