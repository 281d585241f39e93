import Crypto
import Foundation

/// The routes Wattle's tests use.
///
/// | route | answer |
/// | --- | --- |
/// | `/echo` (any method) | JSON: method, path, raw query, headers, body (as UTF-8 text, its length, and in base64) |
/// | `/status/{code}` | that status (200 to 599, else 400), with a JSON body naming it |
/// | `/redirect/{code}?to=URL` | that status with `Location: URL` (default `/echo`) |
/// | `/redirect-chain/{n}?delay=MS` | `n` redirects, each after `delay` milliseconds (default 0), then `/echo` |
/// | `/redirect-loop` | a redirect to itself, forever |
/// | `/delay/{ms}` | `/echo` after `ms` milliseconds |
/// | `/stall` | headers and 10 bytes of 1,000, then silence |
/// | `/bytes/{n}` | `n` bytes of ``Pattern``, streamed |
/// | `/events?count=N&interval=MS&delay=MS` | the head, then `N` server-sent events, the first after `delay`, then one every `interval` milliseconds, chunked |
/// | `/drop-once/{id}` | the first time `/drop`'s answer (100,000 bytes promised, 1,000 sent), then `/bytes/100000` |
/// | `/drop` | 1,000 bytes of a promised 100,000, then the connection closes |
/// | `/close` | the connection closes without an answer |
/// | `/gzip` | a gzip-encoded JSON body |
/// | `/response-headers?name=value` | those headers, repeated names kept |
/// | `/flaky/{id}?failures=N&status=S&retry_after=T` | status S (with `Retry-After: T`) N times, then 200 |
/// | `/digest` (any method) | JSON: method, the body's length and SHA-256 (hex), its `Content-Type` |
/// | `/etag/{tag}` | 304 with no body when `If-None-Match` names `"tag"`, else 200 with that `ETag` and a text body |
/// | `/basic-auth/{user}/{password}` | 200 with JSON `authenticated` and `user` when `Authorization` is Basic with those credentials (percent-decoded, UTF-8), else 401 with a `WWW-Authenticate: Basic` challenge |
/// | `/cookies/set?name=value` | 302 to `/echo`, with `Set-Cookie: name=value; Path=/` for each query item |
/// | `/resource/{n}?...` | an `n`-byte file with ranges, validators and faults: see ``RangeResource`` |
/// | `/user` | a fixed JSON user |
/// | `/text` | a plain-text body |
/// | `/latin1` | `café crème` and a newline, in ISO-8859-1, saying so in its `Content-Type` |
enum TestRoutes {
    @Sendable static func route(_ request: RouteRequest) -> RouteOutcome {
        let parts = request.path.split(separator: "/").map(String.init)
        switch (parts.first ?? "", parts.count) {
        case ("echo", _):
            return echo(request)
        case ("status", 2):
            // A final answer's status: 200 to 599 (NIO traps on writing a 1xx as one).
            guard let code = Int(parts[1]), (200...599).contains(code) else {
                return json(400, ["error": "/status/{code} takes a code from 200 to 599"])
            }
            return json(code, ["status": code, "path": request.path])
        case ("redirect", 2):
            let code = Int(parts[1]) ?? 302
            let target = request.queryValue("to") ?? "/echo"
            return .respond(
                status: code, headers: [("Location", target), ("Content-Type", "text/plain")],
                body: Array("redirecting".utf8))
        case ("redirect-loop", _):
            return .respond(status: 302, headers: [("Location", "/redirect-loop")], body: [])
        case ("redirect-chain", 2):
            let remaining = Int(parts[1]) ?? 0
            let delay = request.queryValue("delay").flatMap { Int($0) } ?? 0
            let next =
                delay > 0 ? "/redirect-chain/\(remaining - 1)?delay=\(delay)" : "/redirect-chain/\(remaining - 1)"
            let redirect = RouteOutcome.respond(
                status: 302, headers: [("Location", remaining <= 1 ? "/echo" : next)], body: [])
            return delay > 0 ? .delayed(milliseconds: delay, redirect) : redirect
        case ("delay", 2):
            return .delayed(milliseconds: Int(parts[1]) ?? 0, echo(request))
        case ("stall", _):
            return .stall(declaredLength: 1000, sentBytes: 10)
        case ("bytes", 2):
            return .stream(
                status: 200, headers: [("Content-Type", "application/octet-stream")], totalBytes: Int(parts[1]) ?? 0)
        case ("events", _):
            let count = Int(request.queryValue("count") ?? "3") ?? 3
            let interval = Int(request.queryValue("interval") ?? "10") ?? 10
            let delay = Int(request.queryValue("delay") ?? "0") ?? 0
            return .events(count: count, intervalMilliseconds: interval, delayMilliseconds: delay)
        case ("drop-once", 2):
            if request.hitCount == 1 { return .truncated(declaredLength: 100_000, sentBytes: 1000) }
            return .stream(status: 200, headers: [("Content-Type", "application/octet-stream")], totalBytes: 100_000)
        case ("drop", _):
            return .truncated(declaredLength: 100_000, sentBytes: 1000)
        case ("close", _):
            return .close
        case ("gzip", _):
            let body = Array(#"{"compressed":true,"message":"hello from gzip"}"#.utf8)
            return .respond(
                status: 200, headers: [("Content-Type", "application/json"), ("Content-Encoding", "gzip")],
                body: Gzip.stored(body))
        case ("response-headers", _):
            return .respond(
                status: 200, headers: request.queryItems + [("Content-Type", "text/plain")], body: Array("ok".utf8))
        case ("flaky", 2):
            // The first `failures` requests to this path fail with `status` and `Retry-After`.
            let failures = Int(request.queryValue("failures") ?? "1") ?? 1
            if request.hitCount <= failures {
                let status = Int(request.queryValue("status") ?? "503") ?? 503
                var headers = [("Content-Type", "application/json")]
                if let retryAfter = request.queryValue("retry_after") { headers.append(("Retry-After", retryAfter)) }
                return .respond(status: status, headers: headers, body: Array(#"{"error":"try again"}"#.utf8))
            }
            return json(
                200, ["attempt": request.hitCount, "bodyLength": request.body.count, "sha256": sha256(request.body)])
        case ("digest", _):
            let type = request.headers.first { $0.0.lowercased() == "content-type" }?.1 ?? ""
            return json(
                200,
                [
                    "method": request.method, "length": request.body.count, "sha256": sha256(request.body),
                    "contentType": type,
                ])
        case ("etag", 2):
            let tag = "\"\(parts[1])\""
            let asked = request.headers.first { $0.0.lowercased() == "if-none-match" }?.1
            if asked?.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == tag }) == true
            {
                return .respond(status: 304, headers: [("ETag", tag)], body: [])
            }
            return .respond(
                status: 200, headers: [("ETag", tag), ("Content-Type", "text/plain")],
                body: Array("version \(parts[1])".utf8))
        case ("basic-auth", 3):
            return basicAuth(request, user: parts[1], password: parts[2])
        case ("cookies", 2) where parts[1] == "set":
            let cookies = request.queryItems.map { ("Set-Cookie", "\($0.0)=\($0.1); Path=/") }
            return .respond(status: 302, headers: [("Location", "/echo")] + cookies, body: [])
        case ("resource", 2):
            return RangeResource.route(request, length: min(Int(parts[1]) ?? 0, 64 * 1024 * 1024))
        case ("user", _):
            return json(200, ["id": 42, "name": "Ada Lovelace", "email": "ada@example.test", "admin": true])
        case ("text", _):
            return .respond(
                status: 200, headers: [("Content-Type", "text/plain; charset=utf-8")],
                body: Array("plain text, not JSON".utf8))
        case ("latin1", _):
            return .respond(
                status: 200, headers: [("Content-Type", "text/plain; charset=iso-8859-1")],
                body: [0x63, 0x61, 0x66, 0xE9, 0x20, 0x63, 0x72, 0xE8, 0x6D, 0x65, 0x0A])
        default:
            return json(404, ["error": "no route for \(request.path)"])
        }
    }

    /// `/basic-auth/{user}/{password}`: checks the request's Basic credentials as a server does,
    /// decoding the header (any case of the scheme, RFC 7617) and comparing the bytes.
    static func basicAuth(_ request: RouteRequest, user: String, password: String) -> RouteOutcome {
        let user = user.removingPercentEncoding ?? user
        let expected = Array("\(user):\(password.removingPercentEncoding ?? password)".utf8)
        let header = request.headers.first { $0.0.lowercased() == "authorization" }?.1 ?? ""
        let words = header.split(separator: " ", maxSplits: 1)
        if words.count == 2, words[0].lowercased() == "basic", let sent = Data(base64Encoded: String(words[1])),
            Array(sent) == expected
        {
            return json(200, ["authenticated": true, "user": user])
        }
        return json(
            401, ["authenticated": false],
            headers: [("WWW-Authenticate", #"Basic realm="wattle-test", charset="UTF-8""#)])
    }

    /// `/echo`'s answer, written with `JSONEncoder` rather than ``json(_:_:headers:)``.
    ///
    /// Tests echo bodies of megabytes, and Foundation's `JSONSerialization` took 0.63 s to
    /// write a 2 MB binary body's answer (as text and in base64), on the event loop every server
    /// shares: meanwhile no other test's connection was accepted. `JSONEncoder` takes 0.04 s.
    static func echo(_ request: RouteRequest) -> RouteOutcome {
        let answer = EchoAnswer(
            method: request.method, path: request.path, query: request.query,
            headers: request.headers.map { [$0.0, $0.1] }, body: text(request.body),
            bodyLength: request.body.count, bodyBase64: Data(request.body).base64EncodedString())
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data = (try? encoder.encode(answer)) ?? Data("{}".utf8)
        return .respond(status: 200, headers: [("Content-Type", "application/json")], body: Array(data))
    }

    /// The bytes as UTF-8 text, each ill-formed sequence shown as U+FFFD: what
    /// `String(decoding:as:)` returns, without its cost in a test process.
    ///
    /// That initializer repairs by throwing and catching an error at each ill-formed sequence,
    /// and swift-testing captures a backtrace at every throw in the process: 256 KB of binary
    /// took 1.05 s to decode under `swift test` (0.011 s without the capture). On an event loop
    /// every server shares, a 2 MB binary upload to `/echo` left the other tests' connections
    /// unanswered for 8 s and more.
    static func text(_ bytes: [UInt8]) -> String {
        if let valid = String(validating: bytes, as: UTF8.self) { return valid }
        // Each ill-formed sequence's maximal subpart becomes one U+FFFD (Unicode 15, 3.9, as the
        // standard library repairs): a lead byte and those of its continuation bytes that fit.
        var repaired: [UInt8] = []
        repaired.reserveCapacity(bytes.count + bytes.count / 2)
        bytes.withUnsafeBufferPointer { input in
            var index = 0
            while index < input.count {
                let lead = input[index]
                if lead < 0x80 {
                    repaired.append(lead)
                    index += 1
                    continue
                }
                // The sequence's length, and the bounds of its second byte (Table 3-7).
                let count: Int
                let low: UInt8
                let high: UInt8
                switch lead {
                case 0xC2...0xDF: (count, low, high) = (2, 0x80, 0xBF)
                case 0xE0: (count, low, high) = (3, 0xA0, 0xBF)
                case 0xE1...0xEC, 0xEE...0xEF: (count, low, high) = (3, 0x80, 0xBF)
                case 0xED: (count, low, high) = (3, 0x80, 0x9F)
                case 0xF0: (count, low, high) = (4, 0x90, 0xBF)
                case 0xF1...0xF3: (count, low, high) = (4, 0x80, 0xBF)
                case 0xF4: (count, low, high) = (4, 0x80, 0x8F)
                default: (count, low, high) = (1, 0, 0)  // never a lead byte
                }
                var length = 1
                while length < count, index + length < input.count {
                    let byte = input[index + length]
                    guard length == 1 ? byte >= low && byte <= high : byte >= 0x80 && byte <= 0xBF else { break }
                    length += 1
                }
                if length == count && count > 1 {
                    repaired.append(contentsOf: UnsafeBufferPointer(rebasing: input[index..<index + count]))
                } else {
                    repaired.append(contentsOf: [0xEF, 0xBF, 0xBD])
                }
                index += length
            }
        }
        return String(decoding: repaired, as: UTF8.self)
    }

    /// The SHA-256 of bytes, in lowercase hex.
    static func sha256(_ bytes: [UInt8]) -> String {
        SHA256.hash(data: bytes).map { byte in
            let digits = String(byte, radix: 16)
            return digits.count == 1 ? "0" + digits : digits
        }.joined()
    }

    static func json(_ status: Int, _ object: [String: any Sendable], headers: [(String, String)] = []) -> RouteOutcome
    {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return .respond(status: status, headers: [("Content-Type", "application/json")] + headers, body: Array(data))
    }
}

/// A gzip stream with "stored" (uncompressed) deflate blocks: a real gzip body any client
/// must decode, without a compression library.
enum Gzip {
    static func stored(_ data: [UInt8]) -> [UInt8] {
        var output: [UInt8] = [0x1F, 0x8B, 0x08, 0x00, 0, 0, 0, 0, 0x00, 0xFF]
        var offset = 0
        repeat {
            let count = min(65_535, data.count - offset)
            let final: UInt8 = offset + count >= data.count ? 1 : 0
            output.append(final)
            output.append(UInt8(count & 0xFF))
            output.append(UInt8(count >> 8))
            output.append(UInt8(~count & 0xFF))
            output.append(UInt8((~count >> 8) & 0xFF))
            output.append(contentsOf: data[offset..<(offset + count)])
            offset += count
        } while offset < data.count
        let crc = crc32(data)
        for shift in stride(from: 0, to: 32, by: 8) { output.append(UInt8((crc >> UInt32(shift)) & 0xFF)) }
        let size = UInt32(truncatingIfNeeded: data.count)
        for shift in stride(from: 0, to: 32, by: 8) { output.append(UInt8((size >> UInt32(shift)) & 0xFF)) }
        return output
    }

    static func crc32(_ data: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in data {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = (crc >> 1) ^ (0xEDB8_8320 & (0 &- (crc & 1))) }
        }
        return ~crc
    }
}
