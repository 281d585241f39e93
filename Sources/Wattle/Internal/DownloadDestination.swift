#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// The file a download to a destination replaces (see
/// ``Session/download(_:to:durability:resumable:progress:)-(Request,_,_,_,_)``).
package enum DownloadDestination {
    /// The most links followed, as the kernel's `MAXSYMLINKS`.
    static let maximumLinks = 40

    /// `destination`, or the file a symbolic link there names, followed link by link (replaced
    /// in its place and the link kept, as `curl -o` writes through one). Refused, naming why:
    /// - what a rename would destroy: a device, a named pipe, a socket or a folder, there or at
    ///   the end of the links (as root, a download to `/dev/null` made it a plain file);
    /// - a link to nothing, a loop, a link into `/proc` or `/dev/fd` (an open file of a
    ///   process: `/dev/stdout` is the file the shell redirected to, which a rename would
    ///   replace rather than write to);
    /// - a link the kernel itself would not follow (`fs.protected_symlinks`): one in a folder
    ///   anyone may write to and only owners may delete from (`/tmp`), owned by another user
    ///   than this process's and the folder's, as another user may plant `/tmp/report.pdf`
    ///   pointing at this user's `~/.bashrc`. (The links are read one by one, so the
    ///   kernel's check would not apply unless it is made here.)
    static func replacedFile(at destination: URL) throws(WattleError) -> URL {
        var path = destination.path
        var info = stat()
        for hop in 0...maximumLinks {
            guard lstat(path, &info) == 0 else {
                // Nothing there: a new file, unless a link led here.
                if hop == 0 {
                    // (Another failure, say a file where a folder should be, is said as it is.)
                    guard errno == ENOENT else { throw refusal(destination, reason(errno)) }
                    return destination
                }
                throw refusal(destination, "it is a symbolic link to \(path), which \(reason(errno))")
            }
            guard info.st_mode & S_IFMT == S_IFLNK else { break }
            let folder = parent(of: path)
            // `/dev/fd/1`, `/proc/thread-self/fd/1`: a process's open file, whatever the text of
            // the path or of the link (procfs's links read as the file's own path).
            if isOnProcFS(folder) {
                throw refusal(
                    destination,
                    "\(path) is an open file of a process, which a download cannot replace; write to it directly")
            }
            if let owner = untrustedOwner(ofLink: info, in: folder) {
                throw refusal(
                    destination,
                    "\(path) is a symbolic link that user \(owner) made in \(folder), a folder anyone may write to: not followed, as the kernel would not"
                )
            }
            guard let target = readLink(path) else {
                throw refusal(destination, "its symbolic link \(path) cannot be read: \(reason(errno))")
            }
            if target.hasPrefix("/proc/") || target.hasPrefix("/dev/fd/") || target == "/dev/fd" {
                throw refusal(
                    destination,
                    "it leads to \(target), an open file of a process, which a download cannot replace; write to it directly"
                )
            }
            path = resolved(target, in: folder)
            if hop == maximumLinks {
                throw refusal(destination, "it is a loop of symbolic links, or more than \(maximumLinks) of them")
            }
        }
        let kind: String
        switch info.st_mode & S_IFMT {
        case S_IFREG: return path == destination.path ? destination : URL(fileURLWithPath: path)
        case S_IFDIR: kind = "a folder"
        case S_IFCHR, S_IFBLK: kind = "a device"
        case S_IFIFO: kind = "a named pipe"
        case S_IFSOCK: kind = "a socket"
        default: kind = "not a regular file"
        }
        throw refusal(
            destination,
            "it is \(kind)\(path == destination.path ? "" : " (\(path))"); a download is moved into place as a new file, which would replace it"
        )
    }

    private static func refusal(_ destination: URL, _ reason: String) -> WattleError {
        .fileError(path: destination.path, reason: reason)
    }

    private static func reason(_ code: Int32) -> String {
        code == ENOENT ? "does not exist" : String(cString: strerror(code))
    }

    /// The folder a path names its file in (`/` for a file at the root).
    package static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// Whether `folder` is on the file system mounted at `/proc` (`/dev/fd` is, through its
    /// link): the same device.
    private static func isOnProcFS(_ folder: String) -> Bool {
        var info = stat()
        var proc = stat()
        return stat(folder, &info) == 0 && stat("/proc", &proc) == 0 && info.st_dev == proc.st_dev
    }

    /// The owner of a link the kernel's `fs.protected_symlinks` would not follow: one in a
    /// sticky folder that everyone may write to, owned by neither this process's user nor the
    /// folder's. Nil when the link may be followed; a folder that cannot be looked at is not
    /// taken on trust.
    private static func untrustedOwner(ofLink link: stat, in folder: String) -> uid_t? {
        var folderInfo = stat()
        guard stat(folder, &folderInfo) == 0 else { return link.st_uid }
        let shared = folderInfo.st_mode & S_ISVTX != 0 && folderInfo.st_mode & S_IWOTH != 0
        guard shared, link.st_uid != geteuid(), link.st_uid != folderInfo.st_uid else { return nil }
        return link.st_uid
    }

    /// The path the symbolic link at `path` (in `folder`) leads to, one link on; nil with
    /// `errno` set when it cannot be read.
    package static func next(afterLink path: String, in folder: String) -> String? {
        readLink(path).map { resolved($0, in: folder) }
    }

    /// A link's text as a path: as it is when absolute, else under the link's folder.
    private static func resolved(_ target: String, in folder: String) -> String {
        target.hasPrefix("/") ? target : folder + (folder.hasSuffix("/") ? "" : "/") + target
    }

    /// The text of the symbolic link at `path`, or nil with `errno` set.
    private static func readLink(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count >= 0 else { return nil }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
