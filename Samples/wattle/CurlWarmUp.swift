import CCurl
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// libcurl's process-wide initialisation, run on its own thread while the arguments are parsed.
///
/// `curl_global_init` is most of the CPU a one-shot request spends in libcurl (OpenSSL reads
/// its configuration and sets up its providers): ~2 ms of a ~13 ms `wattle GET`. Nothing needs
/// it until the command makes a `Session`, so it overlaps the argument parsing on another core.
/// The library's own `curl_global_init` then only counts one more user: libcurl serialises
/// the two calls (its global init is thread-safe since 7.84.0, the `threadsafe` feature that
/// `start()` checks for; Debian 12 ships 7.88.1).
struct CurlWarmUp: ~Copyable {
    private let thread: pthread_t

    /// Starts `curl_global_init` on a new thread; nil (the library initialises libcurl when it
    /// first needs it, as without this) when the libcurl is older than 7.84.0 or no thread
    /// can be made.
    static func start() -> CurlWarmUp? {
        guard wattle_curl_global_init_is_threadsafe() != 0 else { return nil }
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { _ in
            _ = curl_global_init(wattle_curl_global_all)
            return nil
        }, nil)
        guard result == 0 else { return nil }
        return CurlWarmUp(thread: thread)
    }

    private init(thread: pthread_t) {
        self.thread = thread
    }

    /// Waits for the initialisation to end. Call it before `exit`: OpenSSL's exit handler
    /// must not run while another thread is still initialising it (`_exit` runs no handlers
    /// and needs no wait).
    consuming func wait() {
        pthread_join(thread, nil)
    }
}
