import Synchronization

/// A response's header section as libcurl handed it over, parsed into ``HTTPHeaders`` when a
/// caller first reads ``Response/headers``.
///
/// Most responses are decoded without a look at their headers (the session itself reads them
/// only for a redirect or a retry), and parsing makes a `String` for every name and value: ~5,000
/// instructions a response, about 4% of a whole GET's. The first read parses; concurrent first
/// reads of a shared `Response` may both parse, and one result is kept for every later read.
final class HeaderSection: Sendable {
    /// The lines after the status line, as received (``HeaderLineParser/fields(_:)``).
    let bytes: [UInt8]
    /// The parsed fields once a read made them: the address of a retained ``Parsed``, or 0 (an
    /// address as an integer, as `Atomic` of a pointer is not `Sendable`).
    private let parsed = Atomic<UInt>(0)

    /// The fields, boxed so that one atomic pointer publishes them.
    private final class Parsed: Sendable {
        let headers: HTTPHeaders
        init(_ headers: HTTPHeaders) { self.headers = headers }
    }

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    deinit {
        if let kept = UnsafeRawPointer(bitPattern: parsed.load(ordering: .acquiring)) {
            Unmanaged<Parsed>.fromOpaque(kept).release()
        }
    }

    /// Whether a read has parsed the section yet.
    var isParsed: Bool { parsed.load(ordering: .acquiring) != 0 }

    /// The fields, parsed on the first read.
    var headers: HTTPHeaders {
        if let kept = UnsafeRawPointer(bitPattern: parsed.load(ordering: .acquiring)) {
            return Unmanaged<Parsed>.fromOpaque(kept).takeUnretainedValue().headers
        }
        let made = Unmanaged.passRetained(Parsed(HeaderLineParser.fields(bytes)))
        let (stored, kept) = parsed.compareExchange(
            expected: 0, desired: UInt(bitPattern: made.toOpaque()), ordering: .acquiringAndReleasing)
        guard !stored, let other = UnsafeRawPointer(bitPattern: kept) else { return made.takeUnretainedValue().headers }
        // Another thread's parse was published first: keep that one.
        made.release()
        return Unmanaged<Parsed>.fromOpaque(other).takeUnretainedValue().headers
    }
}
