#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A keychain file or key file that Wattle refuses to use, with the path and the reason.
///
/// Wattle refuses a keychain file or key file that is readable or writable by the group or by
/// others (any of the mode bits `0o066`), because a file that others can read gives them the
/// sealed items and, for a key file, the key that opens them. It refuses a keychain's folder
/// that others may write in (`0o002`), or its group (`0o020`) unless it is the owner's private
/// group, or that belongs to another user (root's folders excepted), because whoever can
/// write in the folder can replace the keychain's files with their own.
///
/// ```swift
/// do {
///     let store = try KeychainStore(directory: folder)
/// } catch let error as KeychainFileError where error.reason == .insecurePermissions {
///     print(error)  // says which file and to run chmod 600 on it
/// }
/// ```
public struct KeychainFileError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Why a file was refused.
    public enum Reason: Sendable, Hashable {
        /// The file is readable or writable by the group or by others.
        case insecurePermissions
        /// The keychain's folder is writable by others, or by a group other than its owner's
        /// private group, or belongs to another user than the one running (or root).
        case insecureFolder
        /// The path exists but is not a regular file.
        case notARegularFile
        /// The key file does not hold exactly 32 bytes.
        case invalidKeyFile
        /// The keychain exists but its key file is missing.
        case missingKeyFile
        /// A file or folder could not be created or opened (see ``KeychainFileError/errno``).
        case cannotCreate
    }

    /// The path of the file or folder.
    public let path: String
    /// Why it was refused.
    public let reason: Reason
    /// The file's permission bits when known (for example `0o644`).
    public let mode: UInt32?
    /// The system error number when one applies.
    public let errno: Int32?

    /// Creates a file error.
    public init(path: String, reason: Reason, mode: UInt32? = nil, errno: Int32? = nil) {
        self.path = path
        self.reason = reason
        self.mode = mode
        self.errno = errno
    }

    /// What happened, to which file, and what to do.
    public var description: String {
        switch reason {
        case .insecurePermissions:
            let shown = mode.map { String($0 & 0o777, radix: 8) } ?? "?"
            return "Refusing \(path): its mode \(shown) lets the group or others read or write it; "
                + "run `chmod 600 \(path)` if you trust the file, or remove it."
        case .insecureFolder:
            let why =
                if let mode, mode & 0o022 != 0 {
                    "its mode \(String(mode & 0o777, radix: 8)) lets the group or others write in it"
                } else {
                    "it belongs to another user"
                }
            // A shared folder (sticky, as /tmp is) is meant for everyone: never advise closing it.
            if let mode, mode & 0o022 != 0, mode & 0o1000 != 0 {
                return "Refusing the keychain folder \(path): \(why), so they could replace the keychain's files; "
                    + "it is a shared folder (like /tmp): keep the keychain in a folder of your own, "
                    + "such as ~/.local/share/wattle."
            }
            return "Refusing the keychain folder \(path): \(why), so they could replace the keychain's files; "
                + "make it yours and private (`chmod 700 \(path)`) if you trust what is in it, or use another folder."
        case .notARegularFile:
            return "Refusing \(path): it is not a regular file."
        case .invalidKeyFile:
            return "Refusing key file \(path): it must hold exactly 32 bytes."
        case .missingKeyFile:
            return "The key file \(path) is missing, so the keychain next to it cannot be opened; "
                + "restore the key file (a new one would not open the existing items)."
        case .cannotCreate:
            let code = errno.map { " (\(String(cString: strerror($0))), errno \($0))" } ?? ""
            return "Cannot create or open \(path)\(code); check that its folder exists and is writable."
        }
    }
}
