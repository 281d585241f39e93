import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Ctrl-C (SIGINT) or SIGTERM while `-o` downloads: the first cancels the download, so that the
/// library removes its hidden temporary file (or, with `--continue`, keeps what arrived to go on
/// from), and the run leaves with 128 plus the signal's number, as a shell reports a process the
/// signal ended (130 for Ctrl-C); a second leaves at once. Without it the signal ended the
/// process on the spot, and a download's temporary file, hundreds of megabytes perhaps, stayed
/// in the folder, hidden.
///
/// Only a download watches: anything else has nothing to clean up, and the signals keep their
/// default (the one-shot GET's start-up pays nothing for this). A signal the process was started
/// with ignored (`nohup`, a script's background job) stays ignored.
final class Interruption: @unchecked Sendable {
    // @unchecked: `watched` is written in `init` only; the dispatch sources are thread-safe.
    /// The first signal received, 0 for none.
    private static let received = Atomic<Int32>(0)
    private var watched: [(number: Int32, source: any DispatchSourceSignal)] = []

    /// Watches SIGINT and SIGTERM until ``stop()``: the first calls `cancel` (at most once, on
    /// a queue of libdispatch's). Returns once both are watched: a signal from then on is seen.
    init(cancel: @escaping @Sendable () -> Void) {
        let registered = DispatchSemaphore(value: 0)
        for number in [SIGINT, SIGTERM] {
            // Ignored by the process, seen by the source (a handler would have to be
            // async-signal-safe; the source's runs on a queue). One ignored from the start is
            // left so.
            let previous = signal(number, SIG_IGN)
            if unsafeBitCast(previous, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self) { continue }
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                if Interruption.received.compareExchange(expected: 0, desired: number, ordering: .relaxed).exchanged {
                    cancel()
                } else {
                    _exit(128 + Interruption.received.load(ordering: .relaxed))
                }
            }
            // libdispatch installs its own handling on its manager thread, after `resume`;
            // until then an ignored signal is lost.
            source.setRegistrationHandler { registered.signal() }
            source.resume()
            watched.append((number, source))
        }
        for _ in watched { registered.wait() }
    }

    /// Stops watching; the signals end the process again.
    func stop() {
        for (number, source) in watched {
            source.cancel()
            signal(number, SIG_DFL)
        }
    }

    /// 128 plus the number of the signal that interrupted the run, or nil.
    static var exitStatus: Int32? {
        let number = received.load(ordering: .relaxed)
        return number == 0 ? nil : 128 + number
    }
}
