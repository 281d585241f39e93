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

/// File-system rules: the default folder, private folders (0700) and files (0600), and the
/// refusal of files the group or others may read or write.
enum KeychainFiles {
    /// Mode bits that make a file readable or writable by the group or others.
    static let insecureBits: mode_t = 0o066

    /// `$XDG_DATA_HOME/wattle`, else `~/.local/share/wattle`; `variable` reads an environment
    /// variable (by default with `getenv`: `ProcessInfo`'s `environment` copies the whole
    /// environment into a dictionary, a measurable part of a one-shot CLI request).
    static func defaultDirectory(variable: (String) -> String? = environmentVariable) -> URL {
        if let data = variable("XDG_DATA_HOME"), data.hasPrefix("/") {
            return URL(fileURLWithPath: data, isDirectory: true).appendingPathComponent("wattle", isDirectory: true)
        }
        let home =
            variable("HOME").flatMap { $0.isEmpty ? nil : $0 } ?? FileManager.default.homeDirectoryForCurrentUser.path
        return URL(fileURLWithPath: home, isDirectory: true)
            .appendingPathComponent(".local/share/wattle", isDirectory: true)
    }

    /// The value of the environment variable `name`, or nil when it is not set.
    static func environmentVariable(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    /// Creates the folder (and missing parents) with mode 0700 when it does not exist, and
    /// checks that it is safe to keep a keychain in (``checkFolder(_:path:)``).
    static func ensureDirectory(_ url: URL) throws(KeychainFileError) {
        let path = url.path
        var info = stat()
        if stat(path, &info) == 0 { return try checkFolder(info, path: path) }
        do {
            try FileManager.default.createDirectory(
                at: url, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            // Created by someone else meanwhile: checked like any folder that was there.
            if stat(path, &info) == 0 { return try checkFolder(info, path: path) }
            throw KeychainFileError(path: path, reason: .cannotCreate, errno: errno)
        }
        _ = chmod(path, 0o700)
    }

    /// Refuses a folder others may write in, or that belongs to another user than the
    /// effective one (root's excepted, as OpenSSH does): whoever can write in it can replace
    /// the keychain, its key file or its journal with their own. The sticky bit does not make
    /// a shared folder safe: others can still create the files first.
    ///
    /// A folder its group may write in is refused too, unless that group is its owner's
    /// private group (named after the owner, the owner's primary group, no other member), as
    /// Debian's OpenSSH allows: with a umask of 002, usual where users have such groups,
    /// `mkdir` makes folders mode 775.
    static func checkFolder(_ info: stat, path: String) throws(KeychainFileError) {
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw KeychainFileError(path: path, reason: .cannotCreate, mode: UInt32(info.st_mode), errno: ENOTDIR)
        }
        let groupWritable = info.st_mode & 0o020 != 0
        guard info.st_uid == geteuid() || info.st_uid == 0, info.st_mode & 0o002 == 0,
            !groupWritable || isPrivateGroup(info.st_gid, of: info.st_uid)
        else {
            throw KeychainFileError(path: path, reason: .insecureFolder, mode: UInt32(info.st_mode))
        }
    }

    /// Whether `gid` is the private group of the user `uid`: that user's primary group, with
    /// the user's name, listing no other member.
    static func isPrivateGroup(_ gid: gid_t, of uid: uid_t) -> Bool {
        var user = passwd()
        var group = group()
        var userResult: UnsafeMutablePointer<passwd>?
        var groupResult: UnsafeMutablePointer<group>?
        var userBuffer = [CChar](repeating: 0, count: 4096)
        var groupBuffer = [CChar](repeating: 0, count: 16_384)
        // The names `getpwuid_r` and `getgrgid_r` return point into these buffers, so every
        // use stays inside their scopes (an `&array` argument lives for one call only).
        return userBuffer.withUnsafeMutableBufferPointer { userBytes in
            groupBuffer.withUnsafeMutableBufferPointer { groupBytes in
                guard let userBase = userBytes.baseAddress, let groupBase = groupBytes.baseAddress,
                    getpwuid_r(uid, &user, userBase, userBytes.count, &userResult) == 0,
                    userResult != nil,
                    getgrgid_r(gid, &group, groupBase, groupBytes.count, &groupResult) == 0,
                    groupResult != nil,
                    user.pw_gid == gid, let userName = user.pw_name, let groupName = group.gr_name,
                    strcmp(userName, groupName) == 0
                else { return false }
                var member = group.gr_mem
                while let name = member?.pointee {
                    if strcmp(name, userName) != 0 { return false }
                    member = member?.advanced(by: 1)
                }
                return true
            }
        }
    }

    /// Refuses a file that is not regular or that the group or others may read or write.
    /// Returns false when the file does not exist.
    @discardableResult
    static func checkPrivate(_ path: String) throws(KeychainFileError) -> Bool {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            if errno == ENOENT { return false }
            throw KeychainFileError(path: path, reason: .cannotCreate, errno: errno)
        }
        try checkPrivate(info, path: path)
        return true
    }

    /// Checks a file SQLite keeps beside the keychain (its `-wal` or `-shm`), if there is one:
    /// a regular file must be private, and a symbolic link is refused. Anything else there (a
    /// folder) SQLite cannot use, and its open fails naming the file.
    static func checkCompanion(_ path: String) throws(KeychainFileError) {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            if errno == ENOENT { return }
            throw KeychainFileError(path: path, reason: .cannotCreate, errno: errno)
        }
        let type = info.st_mode & S_IFMT
        if type == S_IFREG || type == S_IFLNK { try checkPrivate(info, path: path) }
    }

    static func checkPrivate(_ info: stat, path: String) throws(KeychainFileError) {
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw KeychainFileError(path: path, reason: .notARegularFile, mode: UInt32(info.st_mode))
        }
        guard info.st_mode & insecureBits == 0 else {
            throw KeychainFileError(path: path, reason: .insecurePermissions, mode: UInt32(info.st_mode))
        }
    }

    /// Creates an empty file with mode 0600 if missing, and checks it is private.
    ///
    /// An existing file is checked, never opened: closing any descriptor of a file drops every
    /// POSIX lock the process holds on it, SQLite's included (another store open on the same
    /// keychain in this process). The shared lock a connection in WAL mode holds on the file is
    /// how another process's last close knows it is not the last one; without it, that process
    /// checkpoints and deletes the write-ahead log under this one's connections, and their
    /// commits go to a log no other process reads. A missing file is made under a temporary
    /// name and linked into place, so the descriptor closed is never one of a file SQLite has
    /// open (a temporary a killed process left is removed by a later open, as the key file's).
    static func createPrivateFile(_ path: String) throws(KeychainFileError) {
        KeyFile.removeStaleTemporaries(of: path)
        if try checkPrivate(path) { return }
        let temporary = path + KeyFile.temporaryMarker + "\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let descriptor = open(temporary, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        var linkFailure: Int32
        if descriptor >= 0 {
            close(descriptor)
            linkFailure = link(temporary, path) == 0 ? 0 : errno
            unlink(temporary)
        } else {
            linkFailure = errno
        }
        if [ENAMETOOLONG, EPERM, ENOSYS, EOPNOTSUPP, EMLINK].contains(linkFailure) {
            // A name with no room for the temporary's suffix, or a file system without hard
            // links (vfat, some FUSE and SMB mounts): created in place. Its descriptor is
            // closed at once, on a file no SQLite connection can have open yet but one racing
            // this very moment.
            let created = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
            if created >= 0 {
                close(created)
                linkFailure = 0
            } else {
                linkFailure = errno
            }
        }
        if linkFailure != 0 && linkFailure != EEXIST {
            throw KeychainFileError(path: path, reason: .cannotCreate, errno: linkFailure)
        }
        // Made here or by another process meanwhile: private either way.
        guard try checkPrivate(path) else {
            throw KeychainFileError(path: path, reason: .cannotCreate, errno: ENOENT)
        }
    }
}
