#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// When and how a request is retried (opt-in: ``Configuration/retry``).
///
/// Only idempotent methods (GET, HEAD, PUT, DELETE, OPTIONS, TRACE) are retried, never POST or
/// PATCH; on the statuses in ``retryableStatuses`` (also when a proxy answers `CONNECT` with
/// one) and,
/// if ``retriesTransportErrors``, on timeouts, lost connections, refused connections and an
/// unreachable proxy. Waits grow exponentially with jitter; a
/// `Retry-After` header (seconds or an HTTP date) is honoured: a pause longer than
/// ``maximumDelay`` ends the retries, and the response is the error (retrying before the
/// server said to would most likely earn the same answer).
///
/// ```swift
/// config.retry = RetryPolicy(maximumAttempts: 4, baseDelay: .milliseconds(200))
/// ```
///
/// Apart from this policy, and whatever the method, libcurl sends a request once more on a
/// new connection when a kept-alive connection it reused closes before any byte of the answer
/// (the server's idle timeout meeting the request: what makes keep-alive usable, as browsers
/// do), and when an HTTP/2 server refuses a stream unprocessed (`REFUSED_STREAM`, `GOAWAY`).
/// A server that took a POST and then dropped the connection without a byte of answer may so
/// see it twice: make such endpoints idempotent (an `Idempotency-Key` header) where it matters.
public struct RetryPolicy: Sendable, Hashable {
    /// Attempts in all, the first included. Default 3.
    public var maximumAttempts: Int
    /// Statuses worth retrying. Default 408, 429, 502, 503, 504.
    public var retryableStatuses: Set<Int>
    /// Whether timeouts and connection failures are retried. Default true.
    public var retriesTransportErrors: Bool
    /// The first backoff; each further one doubles, with jitter. Default 250 ms; a negative
    /// one is read as zero.
    public var baseDelay: Duration
    /// The longest wait. A `Retry-After` asking for longer ends the retries. Default 30 s; at
    /// most a year is waited, whatever this says, and a negative one is read as zero.
    public var maximumDelay: Duration

    /// Creates a policy.
    public init(
        maximumAttempts: Int = 3, retryableStatuses: Set<Int> = [408, 429, 502, 503, 504],
        retriesTransportErrors: Bool = true, baseDelay: Duration = .milliseconds(250),
        maximumDelay: Duration = .seconds(30)
    ) {
        self.maximumAttempts = maximumAttempts
        self.retryableStatuses = retryableStatuses
        self.retriesTransportErrors = retriesTransportErrors
        self.baseDelay = baseDelay
        self.maximumDelay = maximumDelay
    }

    /// How long to wait before attempt `attempt + 1` after `error`, or nil to give up.
    func delay(after error: WattleError, attempt: Int, method: HTTPMethod) -> Duration? {
        guard method.isIdempotent, attempt < maximumAttempts else { return nil }
        // A negative delay is zero (`.seconds(Int64.min)` doubled would trap).
        let longest = max(.zero, min(maximumDelay, Self.longestWait))
        switch error {
        case .httpStatus(let response):
            guard retryableStatuses.contains(response.statusCode) else { return nil }
            if let retryAfter = response.headers["Retry-After"].flatMap(Self.parseRetryAfter) {
                return retryAfter <= longest ? retryAfter : nil
            }
        case .timedOut, .connectionLost, .cannotConnect, .proxyFailed(_, .unreachable):
            guard retriesTransportErrors else { return nil }
        case .proxyFailed(_, .refusedTunnel(let status, _)):
            guard retryableStatuses.contains(status) else { return nil }
        default:
            return nil
        }
        // Exponential backoff with "equal jitter": half fixed, half random.
        let exponential = max(.zero, min(baseDelay, Self.longestWait)) * (1 << min(attempt - 1, 20))
        let capped = min(exponential, longest)
        let half = capped / 2
        return half + half * Double.random(in: 0...1)
    }

    /// The longest wait between attempts, whatever ``maximumDelay`` says: a year. A server's
    /// `Retry-After` of more ends the retries even with `maximumDelay` set to `.seconds(Int64.max)`
    /// for "no limit" (`Task.sleep` traps on a deadline past what its clock holds, so one
    /// header would have stopped the process).
    static let longestWait = Duration.seconds(365 * 86_400)

    /// `Retry-After: 120` or `Retry-After: Fri, 31 Dec 1999 23:59:59 GMT`. A number of seconds
    /// too large for an `Int` is the longest wait there is (so it ends the retries), not
    /// unreadable (which would retry at once). Seconds are digits only (RFC 9110, section 10.2.3):
    /// `+5` or `-5` is no `Retry-After`.
    static func parseRetryAfter(_ value: String) -> Duration? {
        let trimmed = value.trimmingWhitespace()
        if !trimmed.isEmpty, trimmed.utf8.allSatisfy({ (0x30...0x39).contains($0) }) {
            return .seconds(Int(trimmed) ?? Int.max)
        }
        guard let date = HTTPDate.parse(trimmed) else { return nil }
        return .milliseconds(max(0, Int(date.timeIntervalSinceNow * 1000)))
    }
}
