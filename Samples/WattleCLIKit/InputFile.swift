#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Reading the files that command-line items name (`@file`, `name=@file`, `name@file`), and
/// standard input (`-`), whole.
public enum InputFile {
    /// The bytes of the file at `path`, or of standard input for `-`.
    public static func read(_ path: String) throws(InputFileError) -> [UInt8] {
        if path == "-" { return try readAll(descriptor: 0, name: "standard input") }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw InputFileError(path: path, reason: lastError()) }
        defer { close(descriptor) }
        var status = stat()
        if fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFDIR {
            throw InputFileError(path: path, reason: "it is a folder")
        }
        return try readAll(descriptor: descriptor, name: path)
    }

    /// Whether `path` names a regular file that can be opened for reading (what can be streamed
    /// as a body: not a folder, a pipe or a device).
    public static func isRegularFile(_ path: String) -> Bool {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var status = stat()
        return fstat(descriptor, &status) == 0 && status.st_mode & S_IFMT == S_IFREG
    }

    /// Whether standard input is redirected from a file or a pipe (not a terminal, not
    /// `/dev/null` or another device), so that reading it ends with the data.
    public static var standardInputHasData: Bool {
        var status = stat()
        guard fstat(0, &status) == 0 else { return false }
        let type = status.st_mode & S_IFMT
        return type == S_IFREG || type == S_IFIFO || type == S_IFSOCK
    }

    /// Whether standard input already holds bytes to read, without reading them: a regular
    /// file with bytes past the current offset, or a pipe or socket with bytes waiting
    /// (`FIONREAD`). A pipe its writer has not written to yet, or an empty one, holds none.
    public static var standardInputHasPendingBytes: Bool {
        var status = stat()
        guard fstat(0, &status) == 0 else { return false }
        switch status.st_mode & S_IFMT {
        case S_IFREG:
            let offset = lseek(0, 0, SEEK_CUR)
            return status.st_size > max(0, offset)
        case S_IFIFO, S_IFSOCK:
            var waiting: Int32 = 0
            return ioctl(0, UInt(FIONREAD), &waiting) == 0 && waiting > 0
        default:
            return false
        }
    }

    private static func readAll(descriptor: Int32, name: String) throws(InputFileError) -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count == 0 { return bytes }
            if count < 0 {
                if errno == EINTR { continue }
                throw InputFileError(path: name, reason: lastError())
            }
            bytes.append(contentsOf: chunk[..<count])
        }
    }

    private static func lastError() -> String { String(cString: strerror(errno)) }

    /// The media type for a file's name, by its extension, as a `Content-Type` (a body file's,
    /// a form part's); `application/octet-stream` when unknown.
    public static func mediaType(forFileName name: String) -> String {
        let base = name.split(separator: "/").last.map(String.init) ?? name
        guard let dot = base.lastIndex(of: "."), dot != base.startIndex else { return "application/octet-stream" }
        switch base[base.index(after: dot)...].lowercased() {
        case "json": return "application/json"
        case "xml": return "application/xml"
        case "txt", "text": return "text/plain; charset=utf-8"
        case "html", "htm": return "text/html; charset=utf-8"
        case "csv": return "text/csv; charset=utf-8"
        case "yaml", "yml": return "application/yaml"
        case "pdf": return "application/pdf"
        case "png": return "image/png"
        case "jpg", "jpeg": return "image/jpeg"
        case "gif": return "image/gif"
        case "svg": return "image/svg+xml"
        case "webp": return "image/webp"
        case "zip": return "application/zip"
        case "gz": return "application/gzip"
        case "mp4": return "video/mp4"
        default: return "application/octet-stream"
        }
    }
}

/// A file named on the command line that cannot be read.
public struct InputFileError: Error, Sendable, CustomStringConvertible {
    /// The path as given (or "standard input").
    public let path: String
    /// Why, from the system.
    public let reason: String
    /// One line for stderr.
    public var description: String { "cannot read \(path == "standard input" ? path : "\"\(path)\""): \(reason)" }
}
