/// `/resource/{n}`: a file of `n` bytes served as a static file server serves one, with
/// `Accept-Ranges`, validators and single byte ranges (`Range: bytes=FIRST-`, with `If-Range`),
/// and the faults a resumable download must survive. Query parameters:
///
/// | parameter | effect |
/// | --- | --- |
/// | `cut=K`, `cuts=C` | the first `C` requests (default 1) get `K` bytes of their body, then the connection closes |
/// | `stall=1` | with `cut`, the connection stays open after the `K` bytes instead, silent |
/// | `extra=E` | with `cut`, the head announces `E` bytes more than there are |
/// | `change_after=H` | after `H` requests the file changes: other bytes, another `ETag` and date |
/// | `shrink_after=H` | after `H` requests the file changes to its first `n / 2` bytes of version 2 |
/// | `validator=etag\|date\|weak\|none` | what the head carries: `ETag` and `Last-Modified` (default), `Last-Modified` only, a weak `ETag` only, or neither |
/// | `ranges=no\|wrong\|capped` | ranges are ignored (always `200`), answered from one byte later than asked, or cut to 10,000 bytes |
/// | `if_range=ignore` | `If-Range` is ignored: a range is served from whatever the file is now |
/// | `range_length=L` | a `206`'s head announces `L` bytes (a server's mistake), sends what it has, then closes |
/// | `strip206=1` | a `206` carries no `ETag` or `Last-Modified` (a cache that drops them) |
/// | `range_cut=K` | a `206` sends at most `K` bytes of its range, in an HTTP/1.0 answer without a length, then closes |
/// | `range_overrun=E` | a `206` sends its range and `E` bytes more, in an HTTP/1.0 answer without a length, then closes |
///
/// Byte `i` of version 1 is `i % 251`; of version 2, `(i + 100) % 251`. Every answer echoes what
/// it was asked in `X-Range-Received`, `X-If-Range-Received` and `X-Accept-Encoding-Received`
/// (`none` when absent).
public enum RangeResource {
    /// The bytes of `version` of an `n`-byte file.
    public static func content(length: Int, version: Int) -> [UInt8] {
        let shift = version == 1 ? 0 : 100
        // One period, repeated (a byte at a time was seconds for 8 MB in a debug build).
        let period = (0..<251).map { UInt8(($0 + shift) % 251) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(length)
        while bytes.count < length { bytes.append(contentsOf: period.prefix(length - bytes.count)) }
        return bytes
    }

    static func route(_ request: RouteRequest, length fullLength: Int) -> RouteOutcome {
        let changeAfter = request.queryValue("change_after").flatMap { Int($0) }
        let shrinkAfter = request.queryValue("shrink_after").flatMap { Int($0) }
        let shrunk = shrinkAfter.map { request.hitCount > $0 } ?? false
        let version = shrunk ? 2 : changeAfter.map { request.hitCount > $0 ? 2 : 1 } ?? 1
        let length = shrunk ? fullLength / 2 : fullLength
        let tag = "\"res-\(length)-v\(version)\""
        let modified = version == 1 ? "Mon, 02 Nov 2026 10:00:00 GMT" : "Tue, 03 Nov 2026 10:00:00 GMT"
        let mode = request.queryValue("validator") ?? "etag"
        var headers: [(String, String)] = [
            ("Content-Type", "application/octet-stream"), ("Accept-Ranges", "bytes"),
            ("Date", "Wed, 25 Nov 2026 10:00:00 GMT"),
            ("X-Range-Received", request.header("Range") ?? "none"),
            ("X-If-Range-Received", request.header("If-Range") ?? "none"),
            ("X-Accept-Encoding-Received", request.header("Accept-Encoding") ?? "none"),
        ]
        switch mode {
        case "date": headers.append(("Last-Modified", modified))
        case "weak": headers.append(("ETag", "W/\(tag)"))
        case "none": break
        default: headers += [("ETag", tag), ("Last-Modified", modified)]
        }
        let body = content(length: length, version: version)

        // A range is served when asked for and `If-Range` (if sent) matches strongly.
        var first: Int?
        if request.queryValue("ranges") != "no", let range = request.header("Range"), range.hasPrefix("bytes="),
            range.hasSuffix("-"), let start = Int(range.dropFirst("bytes=".count).dropLast())
        {
            let ifRange = request.queryValue("if_range") == "ignore" ? nil : request.header("If-Range")
            let matches =
                switch mode {
                case "etag": ifRange == nil || ifRange == tag
                case "date": ifRange == nil || ifRange == modified
                default: ifRange == nil
                }
            if matches { first = start }
        }
        var status = 200
        var sent = body[...]
        if let asked = first {
            guard asked < length else {
                return .respond(status: 416, headers: headers + [("Content-Range", "bytes */\(length)")], body: [])
            }
            let start = request.queryValue("ranges") == "wrong" ? min(asked + 1, length - 1) : asked
            let end = request.queryValue("ranges") == "capped" ? min(start + 10_000, length) : length
            status = 206
            sent = body[start..<end]
            headers.append(("Content-Range", "bytes \(start)-\(end - 1)/\(length)"))
            if request.queryValue("strip206") == "1" {
                headers.removeAll { $0.0 == "ETag" || $0.0 == "Last-Modified" }
            }
        }
        if status == 206, let most = request.queryValue("range_cut").flatMap({ Int($0) }) {
            return .cut(
                status: status, headers: headers, body: Array(sent.prefix(most)), declaredLength: nil, stall: false)
        }
        if status == 206, let extra = request.queryValue("range_overrun").flatMap({ Int($0) }) {
            let more = [UInt8](repeating: 0x2A, count: max(0, extra))
            return .cut(status: status, headers: headers, body: Array(sent) + more, declaredLength: nil, stall: false)
        }
        if status == 206, let claimed = request.queryValue("range_length").flatMap({ Int($0) }) {
            return .cut(status: status, headers: headers, body: Array(sent), declaredLength: claimed, stall: false)
        }
        let cuts = Int(request.queryValue("cuts") ?? "1") ?? 1
        if let cut = request.queryValue("cut").flatMap({ Int($0) }), request.hitCount <= cuts {
            let extra = Int(request.queryValue("extra") ?? "0") ?? 0
            return .cut(
                status: status, headers: headers, body: Array(sent.prefix(cut)), declaredLength: sent.count + extra,
                stall: request.queryValue("stall") == "1")
        }
        return .respond(status: status, headers: headers, body: Array(sent))
    }
}
