import Synchronization
import Wattle
import WattleCLIKit

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// Prints a request's head and body: on stderr for `-v`, on stdout for `--print H`/`B` and
/// `--offline`. Credentials are redacted as in the session's logs (a token, `-a`'s Basic value,
/// a header whose name says it holds one, credential-looking query values); a body is shown as
/// a response's is on a terminal: pretty JSON, text, or a note for binary bytes.
enum RequestPrinter {
    /// Prints a request as the session sends it (from a `willSend` hook or a transport).
    static func print(_ request: TransportRequest, head: Bool, body: Bool, to descriptor: Int32) {
        print(
            method: request.method, url: request.url.absoluteString, headers: request.headers,
            body: body
                ? bodyBytes(data: request.body, file: request.bodyFile, segments: request.bodySegments, to: descriptor)
                : nil,
            head: head, to: descriptor)
    }

    /// Prints a request as built, before the session adds its headers (for a request the
    /// `willSend` hook does not see: another origin than the base URL's).
    static func print(_ request: Request, baseURL: URL?, head: Bool, body: Bool, to descriptor: Int32) {
        let url = (try? request.url(relativeTo: baseURL))?.absoluteString ?? request.endpoint
        let shown = bodyBytes(
            data: request.body.data, file: request.body.file, segments: request.body.segments, to: descriptor)
        print(
            method: request.method, url: url, headers: request.headers, body: body ? shown : nil,
            head: head, to: descriptor)
    }

    private static func print(
        method: HTTPMethod, url: String, headers: HTTPHeaders, body: [UInt8]?, head: Bool, to descriptor: Int32
    ) {
        var bytes: [UInt8] = []
        if head {
            // The URL as the session's logs show it: no user-info, credential-looking query
            // values redacted.
            var lines = ["\(method) \(Redaction.fullURL(url))"]
            if headers.count > 0 {
                let shown = headers.description.split(separator: "\n", omittingEmptySubsequences: false).map(
                    String.init)
                lines += FileHandleOutput.isTerminal(descriptor) ? shown.map(TerminalText.escaped) : shown
            }
            bytes += Array((lines.joined(separator: "\n") + "\n\n").utf8)
        }
        if let body, !body.isEmpty {
            bytes += body
            bytes += Array((body.last == UInt8(ascii: "\n") ? "\n" : "\n\n").utf8)
        }
        if !bytes.isEmpty { FileHandleOutput.write(bytes, to: descriptor) }
    }

    /// The body as shown: its bytes as they are to a file or a pipe; on a terminal pretty JSON,
    /// text, or a note for bytes a terminal should not get. A file's bytes (read only as they
    /// are sent) are a note. Nil for no body.
    static func bodyBytes(data: Data?, file: URL?, segments: [RequestBody.Segment], to descriptor: Int32) -> [UInt8]? {
        if let file { return Array(fileNote(file).utf8) }
        if !segments.isEmpty {
            return segments.flatMap { segment in
                switch segment {
                case .data(let bytes): shown(bytes, to: descriptor, pretty: false)
                case .file(let url): Array(fileNote(url).utf8)
                }
            }
        }
        guard let data, !data.isEmpty else { return nil }
        return shown(data, to: descriptor, pretty: true)
    }

    private static func shown(_ data: Data, to descriptor: Int32, pretty: Bool) -> [UInt8] {
        guard FileHandleOutput.isTerminal(descriptor) else { return Array(data) }
        if TerminalText.isBinary(data) {
            return Array("[binary body: \(data.count) bytes, not shown on a terminal]".utf8)
        }
        if pretty, let json = JSONPrinter.pretty(data, colours: true) { return Array(json.utf8) }
        return Array(data)
    }

    /// What stands for a file's bytes: its path and size now.
    private static func fileNote(_ url: URL) -> String {
        var info = stat()
        let size = stat(url.path, &info) == 0 ? " (\(info.st_size) bytes)" : ""
        return "[the contents of \(url.path)\(size)]"
    }
}

/// True the first time it is asked, then false: something done once from a hook that may run
/// more than once.
final class FirstTime: Sendable {
    private let claimed = Atomic<Bool>(false)

    /// Whether this is the first call.
    func claim() -> Bool { !claimed.exchange(true, ordering: .relaxed) }
}

/// The request a run was asked to send, told from the session's own token calls (a refresh, a
/// client's token request), which a `willSend` hook sees too: by its method, URL and body.
struct AskedRequest: Sendable {
    let method: HTTPMethod
    let url: String?
    let body: RequestBody

    init(_ request: Request, url: URL?) {
        method = request.method
        self.url = url?.absoluteString
        body = request.body
    }

    /// Whether `sent` is this request.
    func matches(_ sent: TransportRequest) -> Bool {
        sent.method == method && sent.url.absoluteString == url && (sent.body ?? Data()) == body.data
            && sent.bodyFile == body.file && sent.bodySegments == body.segments
    }
}
