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
        // Task code may run on the engine thread (Session.withNetworkThreadExecutor): give it
        // the stack of a main thread, whatever the C library's default (musl's is 128 KiB).
        if let failure = start(name: name, stackSize: 8 << 20, body) {
            fatalError("Wattle: cannot start the \(name) thread: \(failure)")
        }
    }

    /// Runs `body` on a new thread with a stack of `stackSize` bytes; the reason when no
    /// thread could be made (the caller then does the work another way).
    static func start(name: String, stackSize: Int, _ body: @escaping @Sendable () -> Void) -> String? {
        let box = Unmanaged.passRetained(Box(name: name, body: body)).toOpaque()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        pthread_attr_setstacksize(&attributes, stackSize)
        #if canImport(Darwin)
        var thread: pthread_t?
        #else
        var thread = pthread_t()
        #endif
        let result = pthread_create(
            &thread, &attributes,
            { raw in
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
            return String(cString: strerror(result))
        }
        return nil
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
