public import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// glibc's `pipe2` and `posix_spawn_file_actions_addclosefrom_np` (2.34), which its Swift
/// module leaves out (they need `_GNU_SOURCE`): looked up by name.
private enum GNU {
    typealias Pipe2 = @convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32
    typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32

    static let pipe2: Pipe2 = unsafeBitCast(dlsym(UnsafeMutableRawPointer(bitPattern: 0), "pipe2"), to: Pipe2.self)
    static let addCloseFrom: AddCloseFrom = unsafeBitCast(
        dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np"),
        to: AddCloseFrom.self)
}

/// A child process started with `posix_spawn`, its standard output and error on pipes (or in a
/// file).
///
/// For the tests that start many processes: Foundation's `Process.run()` (Swift 6.3.1) reads
/// `/proc/self/fd` entries past their end (swift-corelibs-foundation PR 5472), which crashed a
/// `make test` run with a bad pointer in `memcpy`. Here every descriptor but the three standard
/// ones is closed in the child (`closefrom` as a file action), and reads retry on `EINTR`
/// (`FileHandle.readDataToEndOfFile` traps on it).
public final class ChildProcess: @unchecked Sendable {
    /// What the child reads.
    public enum Input: Sendable {
        /// `/dev/null`.
        case none
        /// These bytes, then end of file (at most a pipe's buffer, 64 KiB).
        case data(Data)
        /// The file at this path.
        case file(String)
        /// A pipe kept open for ``writeInput(_:)`` until ``closeInput()``.
        case pipe
    }

    /// Where the child's standard output and error go.
    public enum Output: Sendable {
        /// Two pipes, read with ``readToEnd()`` or ``collect()``.
        case pipes
        /// Both appended to the file at this path (created if missing): `/dev/null` drops them.
        case file(String)
    }

    /// The child's process identifier.
    public let pid: pid_t
    /// The read ends of the child's standard output and error (-1 once closed).
    private var output: Int32
    private var errors: Int32
    /// The write end of the child's standard input for `.pipe` (-1 otherwise or once closed).
    private var input: Int32
    /// The raw wait status, once the child has been waited for (-1 when it could not be).
    private var waited: Int32?
    /// Guards `waited`: ``isRunning`` may be polled while another thread waits.
    private let lock = NSLock()

    /// Starts `path` with `arguments` (without the program's name) and exactly `environment`.
    public init(
        _ path: String, _ arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment,
        input: Input = .none, output destination: Output = .pipes
    ) throws {
        var outputPipe: [Int32] = [-1, -1]
        var errorPipe: [Int32] = [-1, -1]
        var inputPipe: [Int32] = [-1, -1]
        // Every descriptor made here is closed on the way out, but the parent's ends kept on success.
        var started = false
        defer {
            for descriptor in [outputPipe[1], errorPipe[1], inputPipe[0]] where descriptor >= 0 {
                close(descriptor)
            }
            if !started {
                for descriptor in [outputPipe[0], errorPipe[0], inputPipe[1]] where descriptor >= 0 {
                    close(descriptor)
                }
            }
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        switch input {
        case .none:
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        case .file(let path):
            posix_spawn_file_actions_addopen(&actions, 0, path, O_RDONLY, 0)
        case .pipe:
            guard GNU.pipe2(&inputPipe, O_CLOEXEC) == 0 else { throw Self.failure("pipe2") }
            posix_spawn_file_actions_adddup2(&actions, inputPipe[0], 0)
        case .data(let data):
            precondition(data.count <= 65_536, "more than a pipe's buffer")
            guard GNU.pipe2(&inputPipe, O_CLOEXEC) == 0 else { throw Self.failure("pipe2") }
            // Written before the child starts: it fits the buffer, and no write meets a gone reader.
            let written = data.withUnsafeBytes { write(inputPipe[1], $0.baseAddress, $0.count) }
            close(inputPipe[1])
            inputPipe[1] = -1
            guard written == data.count else { throw Self.failure("write") }
            posix_spawn_file_actions_adddup2(&actions, inputPipe[0], 0)
        }
        switch destination {
        case .pipes:
            guard GNU.pipe2(&outputPipe, O_CLOEXEC) == 0, GNU.pipe2(&errorPipe, O_CLOEXEC) == 0 else {
                throw Self.failure("pipe2")
            }
            posix_spawn_file_actions_adddup2(&actions, outputPipe[1], 1)
            posix_spawn_file_actions_adddup2(&actions, errorPipe[1], 2)
        case .file(let path):
            posix_spawn_file_actions_addopen(&actions, 1, path, O_WRONLY | O_CREAT | O_APPEND, 0o644)
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        }
        _ = GNU.addCloseFrom(&actions, 3)
        // The child starts with no signal blocked and SIGPIPE as a shell would leave it.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGPIPE)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var child: pid_t = 0
        let spawned = posix_spawn(&child, path, &actions, &attributes, argv, envp)
        guard spawned == 0 else { throw Self.failure("posix_spawn \(path)", code: spawned) }
        started = true
        pid = child
        output = outputPipe[0]
        errors = errorPipe[0]
        self.input = inputPipe[1]
    }

    deinit {
        for descriptor in [output, errors, input] where descriptor >= 0 { close(descriptor) }
    }

    /// Writes `data` to the child's standard input (`.pipe`), waiting while the pipe is full.
    public func writeInput(_ data: Data) throws {
        precondition(input >= 0, "no input pipe, or it is closed")
        try data.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let count = write(input, bytes.baseAddress! + offset, bytes.count - offset)
                if count > 0 {
                    offset += count
                } else if count < 0, errno != EINTR {
                    throw Self.failure("write")
                }
            }
        }
    }

    /// Closes the child's standard input (`.pipe`): it reads end of file.
    public func closeInput() {
        if input >= 0 { close(input) }
        input = -1
    }

    /// Whether the child has not ended yet; never waits. (Once it has, its status is kept for
    /// ``waitForExit()``.)
    public var isRunning: Bool {
        lock.withLock {
            if waited != nil { return false }
            var raw: Int32 = 0
            while true {
                let found = waitpid(pid, &raw, WNOHANG)
                if found == 0 { return true }
                if found == pid {
                    waited = raw
                    return false
                }
                // ECHILD: a blocking wait elsewhere took the status, and keeps it.
                if errno != EINTR { return false }
            }
        }
    }

    /// Kills the child with SIGKILL and waits for it, unless it has ended already.
    public func killIfRunning() {
        guard isRunning else { return }
        Glibc.kill(pid, SIGKILL)
        waitForExit()
    }

    /// Whether a signal ended the child (false while it runs or when it exited).
    public var endedBySignal: Bool {
        lock.withLock { waited.map { $0 >= 0 && $0 & 0x7F != 0 } ?? false }
    }

    /// What the child has written to its standard output so far, waiting for the first bytes
    /// (empty at its end).
    public func availableOutput() -> Data {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = read(output, &buffer, buffer.count)
            if count >= 0 { return Data(buffer[..<count]) }
            if errno != EINTR { return Data() }
        }
    }

    /// Everything the child writes to its standard output and error until it closes both.
    public func readToEnd() -> (output: Data, errors: Data) {
        var collected = [Data(), Data()]
        var descriptors = [
            pollfd(fd: output, events: Int16(POLLIN), revents: 0),
            pollfd(fd: errors, events: Int16(POLLIN), revents: 0),
        ]
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while descriptors.contains(where: { $0.fd >= 0 }) {
            guard poll(&descriptors, nfds_t(descriptors.count), -1) >= 0 else {
                if errno == EINTR { continue }
                break
            }
            for index in descriptors.indices where descriptors[index].fd >= 0 && descriptors[index].revents != 0 {
                let count = read(descriptors[index].fd, &buffer, buffer.count)
                if count > 0 {
                    collected[index].append(contentsOf: buffer[..<count])
                } else if count == 0 || errno != EINTR {
                    close(descriptors[index].fd)
                    descriptors[index].fd = -1
                }
            }
        }
        output = -1
        errors = -1
        return (collected[0], collected[1])
    }

    /// Waits for the child to end: its exit status, or the signal that ended it (as
    /// `Process.terminationStatus` has it).
    @discardableResult
    public func waitForExit() -> Int32 {
        // Not under the lock: `isRunning` stays answerable while this blocks.
        var raw = lock.withLock { waited }
        if raw == nil {
            var status: Int32 = 0
            var found: pid_t
            repeat { found = waitpid(pid, &status, 0) } while found < 0 && errno == EINTR
            // Not ours to wait for (ECHILD): no status, rather than a made-up exit 0, and not
            // kept (`isRunning` or another thread's wait may have taken the real one).
            raw = lock.withLock {
                if waited == nil, found == pid { waited = status }
                return waited ?? -1
            }
        }
        guard let raw, raw >= 0 else { return -1 }
        // WIFEXITED: the low 7 bits are 0; then the status is the next byte, else the signal.
        return raw & 0x7F == 0 ? (raw >> 8) & 0xFF : raw & 0x7F
    }

    /// ``readToEnd()`` and ``waitForExit()``, on a thread of their own: a test that waits so on
    /// Swift's cooperative pool (two threads on two cores) holds back every other test.
    public func collect() async -> (output: Data, errors: Data, status: Int32) {
        await Self.onOwnThread {
            let (output, errors) = self.readToEnd()
            return (output, errors, self.waitForExit())
        }
    }

    /// Kills the child with SIGKILL `microseconds` after it has written `lines` whole lines to
    /// its standard output (at once when `lines` is 0), on a thread of its own, and returns all
    /// it wrote there.
    ///
    /// Anchoring the kill to what the child has done, not to a time since it started, keeps a
    /// test's kills landing where it means them to on a loaded or sanitized build, where the
    /// child runs several times slower than on an idle machine.
    public func kill(afterLines lines: Int, microseconds: UInt32) async -> Data {
        await Self.onOwnThread {
            var received = Data()
            while received.count(where: { $0 == UInt8(ascii: "\n") }) < lines {
                let more = self.availableOutput()
                if more.isEmpty { break }  // the child ended first
                received.append(more)
            }
            usleep(microseconds)
            Glibc.kill(self.pid, SIGKILL)
            self.waitForExit()
            received.append(self.readToEnd().output)
            return received
        }
    }

    /// Runs blocking `body` on a new thread and returns its result.
    public static func onOwnThread<Value: Sendable>(_ body: @escaping @Sendable () -> Value) async -> Value {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: body()) }.start()
        }
    }

    private static func failure(_ what: String, code: Int32 = errno) -> any Error {
        NSError(
            domain: NSPOSIXErrorDomain, code: Int(code),
            userInfo: [NSLocalizedDescriptionKey: "\(what): \(String(cString: strerror(code)))"])
    }
}
