import CSodium
import WattleKeychain

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// A resumable download's partial file, beside its destination, and what the server said of
/// the bytes it holds (see ``Session/download(_:to:durability:resumable:progress:)-(Request,_,_,_,_)``).
///
/// Two files: `.NAME.wattle-partial`, the body so far, and `.NAME.wattle-partial-state`, lines
/// naming the format, a BLAKE2b hash of the URL without its user-info (never the URL: a
/// presigned one carries a credential), the validator (a strong `ETag`, or a `Last-Modified`
/// date that is strong) that goes in `If-Range`, and the body's length when it was announced.
/// A partial that holds the whole body (its process died before the download finished, or the
/// connection failed after the last byte) asks for its last byte again: a `206` for it shows
/// the file is still the same. A partial without a state file, or whose state
/// names another URL, is never resumed. Neither file is followed if it is a symbolic link.
///
/// **Consistency.** The state file describes only bytes of the body it names: the partial is
/// emptied, and that made durable, before a whole body is written to it (`restart()`, `claim`
/// and `prepareForRetry()`; a response that would write over bytes already there stops its
/// transfer and comes back here first), and the state is written before the body's first
/// byte. A `206` goes on only when it starts where the partial ends, runs to the end of the
/// file and names the same validator. After a process crash the pair is as the last write
/// left it; after a power loss on a journalling file system, bytes not yet on disk are missing
/// from the end, or the state file is, and the download continues from what is there or
/// starts over.
///
/// **One at a time.** The download holds an exclusive `flock` on the partial while it runs, and
/// its transfers write through that open file; a second download to the same destination, in
/// this or another process, is refused.
///
/// Claimed on the caller's task; `resumePoint()`, `requestRestart()`, `writeDescriptor()`,
/// `matches(_:)` and `begin(validator:length:)` run on the engine thread, the rest on the caller's
/// task between transfers. Its state is behind a lock.
final class PartialDownload: Sendable {
    /// The body so far.
    let file: URL
    /// The format line, the URL's hash, the validator and the length.
    let stateFile: URL
    /// Hex BLAKE2b-256 of the URL the download asks for.
    private let key: String
    private let state: PThreadLocked<State>

    private struct State {
        /// The open, locked partial (-1 once released).
        var lockDescriptor: Int32
        /// What the state file says of the partial's bytes; nil when they cannot be resumed.
        var validator: String?
        /// The whole body's length, when its answer announced it.
        var length: Int64?
        /// The offset the latest transfer asked for (0: the whole body).
        var requestedOffset: Int64 = 0
        /// The latest transfer stopped because its answer would have replaced the partial's
        /// bytes (or answered another range): `restart()` and send again.
        var restartNeeded = false
        /// This call has started over once: the rest of its attempts ask for whole bodies.
        var rangesRefused = false
    }

    static let formatLine = "wattle partial download 1"
    /// `sodium_init()`, before the first hash (idempotent).
    private static let sodiumReady: Bool = sodium_init() >= 0

    private init(file: URL, stateFile: URL, key: String, descriptor: Int32, validator: String?) {
        self.file = file
        self.stateFile = stateFile
        self.key = key
        state = PThreadLocked(State(lockDescriptor: descriptor, validator: validator))
    }

    deinit {
        state.withLock { state in
            if state.lockDescriptor >= 0 { close(state.lockDescriptor) }
        }
    }

    // MARK: Claiming (caller's task)

    /// Opens and locks the partial of `destination`, keeping what it holds when its state file
    /// names `url`, and emptying it (durably) otherwise; nil when another holds the lock.
    static func claim(destination: URL, url: URL) throws(WattleError) -> PartialDownload? {
        let file = DownloadFileNames.hidden(for: destination, suffix: ".wattle-partial")
        let stateFile = DownloadFileNames.hidden(for: destination, suffix: ".wattle-partial-state")
        guard let descriptor = try lock(file) else { return nil }
        let key = hash(identity(of: url))
        let partial = PartialDownload(
            file: file, stateFile: stateFile, key: key, descriptor: descriptor, validator: nil)
        let size = partial.size
        if size > 0, let (validator, length) = readState(stateFile, key: key) {
            partial.state.withLock { state in
                state.validator = validator
                state.length = length
            }
        } else if size > 0 || access(stateFile.path, F_OK) == 0 {
            try partial.restart(refusingRanges: false)
        }
        return partial
    }

    /// Opens `file` (created if missing) and takes its exclusive lock, checking that the path
    /// still names the locked file: another download may have renamed it into place (a
    /// finished partial becomes its destination) between the open and the lock. Nil when
    /// another open file holds the lock.
    private static func lock(_ file: URL) throws(WattleError) -> Int32? {
        for _ in 0..<3 {
            // Private until it is complete (it may be a private file's new contents); the
            // destination's permissions are given at the rename.
            let descriptor = open(file.path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
            guard descriptor >= 0 else {
                let reason = errno == ELOOP ? "it is a symbolic link" : String(cString: strerror(errno))
                throw .fileError(path: file.path, reason: "cannot open the partial download: \(reason)")
            }
            if flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
                let code = errno
                close(descriptor)
                if code == EWOULDBLOCK { return nil }
                throw .fileError(
                    path: file.path, reason: "cannot lock the partial download: \(String(cString: strerror(code)))")
            }
            var opened = stat()
            var named = stat()
            if fstat(descriptor, &opened) == 0, opened.st_mode & S_IFMT != S_IFREG {
                close(descriptor)
                throw .fileError(path: file.path, reason: "the partial download is not a regular file")
            }
            if fstat(descriptor, &opened) == 0, lstat(file.path, &named) == 0, opened.st_dev == named.st_dev,
                opened.st_ino == named.st_ino
            {
                return descriptor
            }
            close(descriptor)
        }
        throw .fileError(path: file.path, reason: "the partial download kept changing while it was being locked")
    }

    /// The validator a state file holds for `key`, with the body's length when it has one; nil
    /// when it is missing, unreadable, of another format or for another URL. (A file written
    /// before lengths were kept has three lines: read as no length.)
    private static func readState(_ stateFile: URL, key: String) -> (String, Int64?)? {
        let descriptor = open(stateFile.path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_size < 4096 else { return nil }
        var bytes = [UInt8](repeating: 0, count: 4096)
        let count = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        guard count > 0, let text = String(validating: bytes[..<count], as: UTF8.self) else { return nil }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.count >= 3, lines[0] == formatLine, lines[1] == "url \(key)", lines[2].hasPrefix("validator ")
        else {
            return nil
        }
        let validator = String(lines[2].dropFirst("validator ".count))
        guard isUsable(validator) else { return nil }
        let length = lines.count > 3 && lines[3].hasPrefix("length ") ? Int64(lines[3].dropFirst("length ".count)) : nil
        return (validator, length.flatMap { $0 > 0 ? $0 : nil })
    }

    /// What names the file a URL asks for: the URL without its user-info (credentials, not part
    /// of the resource).
    static func identity(of url: URL) -> String {
        guard var parts = URLComponents(url: url, resolvingAgainstBaseURL: false),
            parts.user != nil || parts.password != nil
        else { return url.absoluteString }
        parts.user = nil
        parts.password = nil
        return parts.string ?? url.absoluteString
    }

    /// Hex BLAKE2b-256 of `text`.
    static func hash(_ text: String) -> String {
        _ = sodiumReady
        var digest = [UInt8](repeating: 0, count: 32)
        let bytes = Array(text.utf8)
        _ = crypto_generichash(&digest, digest.count, bytes, UInt64(bytes.count), nil, 0)
        return digest.map { String($0, radix: 16).leftPadded(to: 2) }.joined()
    }

    /// The partial's size now (of the locked file, whatever its name has become).
    var size: Int64 {
        state.withLock { state in
            var info = stat()
            return state.lockDescriptor >= 0 && fstat(state.lockDescriptor, &info) == 0 ? Int64(info.st_size) : 0
        }
    }

    // MARK: Between transfers (caller's task)

    /// Empties the partial and forgets its state, durably, before anything new is written. With
    /// `refusingRanges`, the rest of this call's attempts ask for whole bodies (the server's
    /// answer to a range could not be used once already).
    func restart(refusingRanges: Bool = true) throws(WattleError) {
        unlink(stateFile.path)
        unlink(stateFile.path + ".tmp")
        let failure: String? = state.withLock { state in
            state.validator = nil
            state.length = nil
            state.restartNeeded = false
            state.requestedOffset = 0
            if refusingRanges { state.rangesRefused = true }
            guard ftruncate(state.lockDescriptor, 0) == 0, fsync(state.lockDescriptor) == 0 else {
                return String(cString: strerror(errno))
            }
            return nil
        }
        if let failure { throw .fileError(path: file.path, reason: "cannot empty the partial download: \(failure)") }
        _ = FolderSync.sync(file.deletingLastPathComponent().path)
    }

    /// Before the retry policy sends again: bytes the next attempt will not continue (no
    /// validator, or ranges refused for this call) are emptied, durably, so that a whole body
    /// is never written over them.
    func prepareForRetry() throws(WattleError) {
        let (continues, refused, restartNeeded) = state.withLock {
            ($0.validator != nil && !$0.rangesRefused, $0.rangesRefused, $0.restartNeeded)
        }
        if restartNeeded {
            // (Not reached today: a stopped transfer is not an error the policy retries.)
            try restart()
        } else if !continues, size > 0 {
            try restart(refusingRanges: refused)
        }
    }

    /// Whether `error` (the latest attempt's) asks for the download to start over: its answer
    /// would have replaced or misplaced the partial's bytes, or the server found the range it
    /// was asked for beyond the end (a 416: the partial is as long as the file, or longer).
    func needsRestart(after error: WattleError) -> Bool {
        state.withLock { state in
            if state.restartNeeded { return true }
            if case .httpStatus(let response) = error, response.statusCode == 416, state.requestedOffset > 0 {
                return true
            }
            return false
        }
    }

    /// Moves the finished partial to `destination`, forgets its state and lets go of the lock.
    func complete(into destination: URL) throws(WattleError) {
        // The state first: once renamed, the partial's name may be another download's.
        unlink(stateFile.path)
        if rename(file.path, destination.path) != 0 {
            let reason = String(cString: strerror(errno))
            // Still the whole body of its validator: kept for the next call to find whole.
            let (validator, length) = state.withLock { ($0.validator, $0.length) }
            begin(validator: validator, length: length)
            release()
            throw .fileError(path: destination.path, reason: "cannot move the download into place: \(reason)")
        }
        state.withLock { state in
            close(state.lockDescriptor)
            state.lockDescriptor = -1
        }
    }

    /// Forgets what the partial's bytes are, so that ``release()`` removes them: after a write,
    /// flush or sync of them failed, they may not be what was written (the kernel reports a
    /// failed writeback once, to that open file, and a later one would sync clean).
    func discard() {
        state.withLock { state in
            state.validator = nil
            state.length = nil
        }
    }

    /// Lets go of the lock, keeping the partial only when it can be resumed: bytes that a
    /// validator describes. Otherwise both files go.
    func release() {
        let keep = state.withLock { $0.validator != nil } && size > 0
        if !keep {
            unlink(file.path)
            unlink(stateFile.path)
        }
        state.withLock { state in
            if state.lockDescriptor >= 0 { close(state.lockDescriptor) }
            state.lockDescriptor = -1
        }
    }

    // MARK: Transfers (engine thread)

    /// Where the next transfer resumes, with the validator for `If-Range`; nil to ask for the
    /// whole body. Recorded as the transfer's requested offset. A partial that holds the whole
    /// body is cut to all but its last byte, which is asked for again: a range starting at the
    /// end would be answered `416`, which cannot tell a whole file from a changed one.
    func resumePoint() -> (offset: Int64, validator: String)? {
        let size = size
        return state.withLock { state in
            state.restartNeeded = false
            guard size > 0, let validator = state.validator, !state.rangesRefused else {
                state.requestedOffset = 0
                return nil
            }
            // (Exactly the length: more bytes than it says show it wrong. A 1-byte body is not cut
            // to nothing: its 416 starts over, the partial emptied durably first.)
            var offset = size
            if let length = state.length, length > 1, size == length,
                ftruncate(state.lockDescriptor, off_t(length - 1)) == 0
            {
                offset = length - 1
            }
            state.requestedOffset = offset
            return (offset, validator)
        }
    }

    /// A transfer's answer cannot be written to the partial as it is: the session empties it
    /// and sends again.
    func requestRestart() {
        state.withLock { $0.restartNeeded = true }
    }

    /// A descriptor of the locked partial for a transfer to write through (its own, closed by
    /// the transfer), or -1 with `errno` set.
    func writeDescriptor() -> Int32 {
        state.withLock { state in
            state.lockDescriptor >= 0 ? fcntl(state.lockDescriptor, F_DUPFD_CLOEXEC, 0) : -1
        }
    }

    /// Whether a `206` continues the file the partial was written from: one that names another
    /// `ETag` or date, or whose `Content-Range` gives another total length, is a changed file,
    /// from a server or cache that ignored `If-Range`. RFC 9110, 15.3.7: a `206` carries the
    /// `ETag` a `200` would, so one without it is not taken for the same file (a cache that
    /// drops it could be serving another); `Last-Modified` is not required there.
    func matches(_ headers: HTTPHeaders) -> Bool {
        let (validator, length) = state.withLock { ($0.validator, $0.length) }
        guard let validator else { return false }
        if let length, let total = Self.rangeTotal(of: headers), total != length { return false }
        if validator.hasPrefix("\"") {
            return headers["ETag"] == validator
        }
        return headers["Last-Modified"].map { $0 == validator } ?? true
    }

    /// Records the validator of a whole body about to be written from the start (nil: the body
    /// cannot be resumed) and its announced length, and writes the state file (or removes it)
    /// before any of its bytes. The partial is empty here (see the type's comment), so the
    /// state describes no other bytes. A state file that cannot be written leaves the download
    /// going, not resumable.
    func begin(validator: String?, length: Int64?) {
        let length = length.flatMap { $0 > 0 ? $0 : nil }
        state.withLock { state in
            state.validator = validator
            state.length = length
        }
        guard let validator else {
            unlink(stateFile.path)
            return
        }
        let text = "\(Self.formatLine)\nurl \(key)\nvalidator \(validator)\n" + (length.map { "length \($0)\n" } ?? "")
        let temporary = stateFile.path + ".tmp"
        unlink(temporary)
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o644)
        var written = false
        if descriptor >= 0 {
            let bytes = Array(text.utf8)
            written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) } == bytes.count
            close(descriptor)
            written = written && rename(temporary, stateFile.path) == 0
        }
        if !written {
            unlink(temporary)
            unlink(stateFile.path)
            state.withLock { state in
                state.validator = nil
                state.length = nil
            }
        }
    }

    // MARK: Reading a response's head

    /// The validator of a whole body that `If-Range` may name later: a strong `ETag`, or, with
    /// none, a `Last-Modified` date at least a second before the response's `Date` (RFC 9110,
    /// 13.1.5 and 8.8.2.2). Nil for an encoded body (ranges count its encoded bytes, and Wattle
    /// writes decoded ones), a weak `ETag`, or no strong validator.
    static func validator(of headers: HTTPHeaders) -> String? {
        if let encoding = headers["Content-Encoding"], !encoding.isEmpty, !encoding.caseInsensitiveEquals("identity") {
            return nil
        }
        if let tag = headers["ETag"] {
            // (With an entity tag, RFC 9110 forbids `If-Range` with a date.)
            guard tag.count >= 2, tag.hasPrefix("\""), tag.hasSuffix("\""), isUsable(tag) else { return nil }
            return tag
        }
        guard let modified = headers["Last-Modified"], isUsable(modified),
            let modifiedDate = HTTPDate.parseIMFFixdate(modified),
            let date = headers["Date"].flatMap({ HTTPDate.parse($0) }), date.timeIntervalSince(modifiedDate) >= 1
        else { return nil }
        return modified
    }

    /// A validator fit for a header and a line of the state file: visible ASCII and spaces.
    private static func isUsable(_ validator: String) -> Bool {
        !validator.isEmpty && validator.utf8.count <= 1024 && validator.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7F }
    }

    /// The first byte a `206` answer's `Content-Range` says it holds (`bytes FIRST-LAST/LENGTH`),
    /// when the range runs to the end of the file (LAST is LENGTH - 1); nil when the field is
    /// missing, not one range, stops short (a server may cap an open range: what it holds is
    /// not the whole rest), or gives no length (`/*`: nothing shows it reaches the end).
    static func rangeStart(of headers: HTTPHeaders) -> Int64? {
        range(of: headers)?.first
    }

    /// The total length a `206` answer's `Content-Range` gives, under the same conditions as
    /// ``rangeStart(of:)``.
    static func rangeTotal(of headers: HTTPHeaders) -> Int64? {
        range(of: headers)?.length
    }

    /// `FIRST` and `LENGTH` of `Content-Range: bytes FIRST-LAST/LENGTH` with LAST = LENGTH - 1.
    private static func range(of headers: HTTPHeaders) -> (first: Int64, length: Int64)? {
        guard let value = headers["Content-Range"] else { return nil }
        let text = String(value.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
        guard text.lowercased().hasPrefix("bytes ") else { return nil }
        let spec = text.dropFirst("bytes ".count)
        let parts = spec.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        let bounds = parts[0].split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard bounds.count == 2, let first = Int64(bounds[0]), let last = Int64(bounds[1]), first >= 0, last >= first
        else {
            return nil
        }
        // (LAST at Int64.max has no length after it: `last + 1` would trap on a server's say-so.)
        guard let length = Int64(parts[1]), last < Int64.max, length == last + 1 else { return nil }
        return (first, length)
    }
}

extension String {
    /// The string with `"0"`s before it up to `width` characters.
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
