#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The process's environment variables, read one at a time.
///
/// `ProcessInfo.processInfo.environment` copies the whole environment into a dictionary on every
/// call, a measurable part of a one-shot `wattle GET` when it is read three or four times.
enum Environment {
    /// The value of the variable `name`, or nil when it is not set.
    static subscript(name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }
}
