import CCurl

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// libcurl's process-wide initialisation, run on its own thread while ArgumentParser parses.
///
/// `curl_global_init` is the largest single step of a one-shot request inside libcurl (OpenSSL
/// reads its configuration and sets up its providers): ~0.6-0.8 ms. No command needs it before
/// it makes a `Session` (or `wattle pin` reads a certificate), so it overlaps ArgumentParser's
/// parse (~1.5 ms) on another core. A plain request, which skips ArgumentParser, makes its
/// `Session` at once and does without: the overlap would be too short to gain anything, and the
/// `Session` would spin on libcurl's lock until the warm-up ends (measured: the same wall time,
/// 0.16 ms more CPU with the warm-up).
///
/// The library's own `curl_global_init` then only counts one more user: libcurl serialises
/// the two calls (its global init is thread-safe since 7.84.0, the `threadsafe` feature that
/// `start()` checks for; Debian 12 ships 7.88.1) with a spin lock.
struct CurlWarmUp: ~Copyable {
    private let thread: pthread_t

    /// Starts `curl_global_init` on a new thread; nil (the library initialises libcurl when it
    /// first needs it, as without this) when the libcurl's global init is not thread-safe
    /// (before 7.84.0, or built without atomics) or no thread can be made.
    static func start() -> CurlWarmUp? {
        guard wattle_curl_global_init_is_threadsafe() != 0 else { return nil }
        var thread = pthread_t()
        let result = pthread_create(
            &thread, nil,
            { _ in
                _ = curl_global_init(wattle_curl_global_all)
                return nil
            }, nil)
        guard result == 0 else { return nil }
        return CurlWarmUp(thread: thread)
    }

    private init(thread: pthread_t) {
        self.thread = thread
    }

    /// Waits for the initialisation to end and joins the thread. Call it before the process
    /// leaves, whichever way: before `exit`, OpenSSL's exit handler must not run while another
    /// thread is still initialising it; before `_exit`, a thread never joined is a leak to
    /// ThreadSanitizer (once a `Session` exists the init is over, so the join is immediate).
    consuming func wait() {
        pthread_join(thread, nil)
    }
}
