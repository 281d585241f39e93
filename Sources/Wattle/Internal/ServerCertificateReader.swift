import CCurl
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Reads the certificate a TLS server presents, with a handshake and no request.
///
/// The blocking `curl_easy_perform` runs on a thread of its own, never on Swift's cooperative pool.
enum ServerCertificateReader {
    static func leafCertificatePEM(host: String, port: Int, timeout: Duration) async throws(WattleError) -> String {
        precondition(CurlGlobal.initialized)
        try check(host: host, port: port)
        // Set when the caller is cancelled; libcurl's progress callback, called at least once
        // a second while it connects, then aborts the handshake.
        let cancelled = CancelFlag()
        let result: Result<String, WattleError> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                DetachedThread.start(name: "wattle-cert") {
                    continuation.resume(returning: read(host: host, port: port, timeout: timeout, cancelled: cancelled))
                }
            }
        } onCancel: {
            cancelled.set()
        }
        return try result.get()
    }

    /// Refuses what is not a bare host name, IPv4 address or IPv6 literal, and a port outside
    /// 1...65535: the host goes into a URL, where `good.test@evil.test` would read evil.test's
    /// certificate (the text before `@` taken as user-info) and `h/x` or `h:1` would ignore
    /// the port.
    static func check(host: String, port: Int) throws(WattleError) {
        guard (1...65_535).contains(port) else {
            throw .invalidRequest(reason: "\(port) is not a TCP port (1 to 65535)")
        }
        let bracketed = host.hasPrefix("[") && host.hasSuffix("]")
        let bare = bracketed ? host.dropFirst().dropLast() : Substring(host)
        // Brackets hold an IPv6 literal only (`[example.com]` made a URL libcurl refused).
        let isName =
            !bracketed && !bare.isEmpty && !bare.hasPrefix(".") && !bare.hasPrefix("-")
            && bare.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"):
                    true
                default: byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_")
                }
            }
        var address = in6_addr()
        let isIPv6 = bare.contains(":") && inet_pton(AF_INET6, String(bare), &address) == 1
        guard isName || isIPv6 else {
            throw .invalidRequest(
                reason:
                    "\"\(Redaction.escaped(host))\" is not a host name or IP address (an internationalized name goes in its xn-- form)"
            )
        }
    }

    /// A flag set once, read from libcurl's callback on the reading thread.
    private final class CancelFlag: Sendable {
        private let flag = Atomic<Bool>(false)
        func set() { flag.store(true, ordering: .relaxed) }
        var isSet: Bool { flag.load(ordering: .relaxed) }
    }

    private static let abortIfCancelled: wattle_curl_xferinfo_callback = { userdata, _, _, _, _ in
        guard let userdata else { return 0 }
        return Unmanaged<CancelFlag>.fromOpaque(userdata).takeUnretainedValue().isSet ? 1 : 0
    }

    private static func read(
        host: String, port: Int, timeout: Duration, cancelled: CancelFlag
    ) -> Result<String, WattleError> {
        guard let easy = curl_easy_init() else {
            return .failure(.transport(code: -1, message: "cannot create a curl handle"))
        }
        let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: wattle_curl_error_size)
        errorBuffer.initialize(repeating: 0, count: wattle_curl_error_size)
        // The handle refers to the buffer until it is cleaned up: free it after.
        defer {
            curl_easy_cleanup(easy)
            errorBuffer.deallocate()
        }
        let hostPart = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        _ = wattle_curl_easy_setopt_string(easy, CURLOPT_URL, "https://\(hostPart):\(port)/")
        _ = wattle_curl_easy_setopt_long(easy, CURLOPT_CONNECT_ONLY, 1)
        _ = wattle_curl_easy_setopt_long(easy, CURLOPT_CERTINFO, 1)
        _ = wattle_curl_easy_setopt_long(easy, CURLOPT_NOSIGNAL, 1)
        _ = wattle_curl_easy_setopt_string(easy, CURLOPT_PROXY, "")
        _ = wattle_curl_easy_setopt_pointer(easy, CURLOPT_ERRORBUFFER, errorBuffer)
        // Read, not trust: the chain is not verified, the host name still is.
        _ = wattle_curl_easy_setopt_long(easy, CURLOPT_SSL_VERIFYPEER, 0)
        _ = wattle_curl_easy_setopt_long(easy, CURLOPT_SSL_VERIFYHOST, 2)
        _ = wattle_curl_easy_setopt_long(easy, CURLOPT_CONNECTTIMEOUT_MS, max(1, CurlTransfer.milliseconds(timeout)))
        // `cancelled` outlives the perform: the caller holds it until this returns.
        _ = wattle_curl_easy_setopt_xferinfo_function(easy, abortIfCancelled)
        _ = wattle_curl_easy_setopt_pointer(easy, CURLOPT_XFERINFODATA, Unmanaged.passUnretained(cancelled).toOpaque())
        _ = wattle_curl_easy_setopt_long(easy, CURLOPT_NOPROGRESS, 0)
        let code = curl_easy_perform(easy)
        guard code == CURLE_OK else {
            if cancelled.isSet { return .failure(.cancelled) }
            let message =
                errorBuffer.pointee != 0 ? String(cString: errorBuffer) : String(cString: curl_easy_strerror(code))
            switch code {
            case CURLE_COULDNT_RESOLVE_HOST: return .failure(.cannotResolveHost(host))
            case CURLE_COULDNT_CONNECT: return .failure(.cannotConnect(host: host, port: port, reason: message))
            case CURLE_PEER_FAILED_VERIFICATION:
                return .failure(.untrustedCertificate(host: host, reason: CurlTransfer.certificateReason(message)))
            case CURLE_OPERATION_TIMEDOUT:
                let url = URL(string: "https://\(hostPart):\(port)/") ?? URL(string: "https://invalid/")!
                return .failure(.timedOut(phase: .connect, after: timeout, url: url))
            default: return .failure(.transport(code: Int(code.rawValue), message: message))
            }
        }
        var raw: UnsafeMutableRawPointer?
        guard wattle_curl_easy_getinfo_pointer(easy, CURLINFO_CERTINFO, &raw) == CURLE_OK, let raw else {
            return .failure(.transport(code: -1, message: "the server presented no certificate"))
        }
        let info = raw.assumingMemoryBound(to: curl_certinfo.self)
        guard wattle_curl_certinfo_count(info) > 0 else {
            return .failure(.transport(code: -1, message: "the server presented no certificate"))
        }
        var line = wattle_curl_certinfo_at(info, 0)
        while let current = line {
            let text = String(cString: current.pointee.data)
            if text.hasPrefix("Cert:") { return .success(String(text.dropFirst(5))) }
            line = UnsafePointer(current.pointee.next)
        }
        return .failure(.transport(code: -1, message: "the server's certificate was not reported"))
    }
}
