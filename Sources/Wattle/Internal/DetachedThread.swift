import CCurl
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Starts a named, detached POSIX thread: what the library needed from Foundation's `Thread`,
/// without linking Foundation (the library uses `FoundationEssentials` only).
enum DetachedThread {
    /// Runs `body` on a new thread named `name` (at most 15 bytes show in `ps` and `top`).
    ///
    /// A thread that cannot be created is a resource exhaustion the caller cannot recover from
    /// (the engine would never run): it traps with the reason.
    static func start(name: String, _ body: @escaping @Sendable () -> Void) {
        let box = Unmanaged.passRetained(Box(name: name, body: body)).toOpaque()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        // Task code may run on the engine thread (Session.withNetworkThreadExecutor): give it
        // the stack of a main thread, whatever the C library's default (musl's is 128 KiB).
        pthread_attr_setstacksize(&attributes, 8 << 20)
        #if canImport(Darwin)
        var thread: pthread_t?
        #else
        var thread = pthread_t()
        #endif
        let result = pthread_create(&thread, &attributes, { raw in
            #if canImport(Darwin)
            let box = Unmanaged<Box>.fromOpaque(raw).takeRetainedValue()
            #else
            let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
            #endif
            wattle_set_current_thread_name(String(decoding: box.name.utf8.prefix(15), as: UTF8.self))
            box.body()
            return nil
        }, box)
        guard result == 0 else {
            Unmanaged<Box>.fromOpaque(box).release()
            fatalError("Wattle: cannot start the \(name) thread: \(String(cString: strerror(result)))")
        }
    }

    private final class Box {
        let name: String
        let body: @Sendable () -> Void
        init(name: String, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }
}
