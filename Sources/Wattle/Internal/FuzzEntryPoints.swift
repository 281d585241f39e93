/// Entry points for the libFuzzer targets under `Fuzz/` (`make fuzz`). Package access only:
/// not part of the public API, and nothing in the library calls them.
package enum FuzzEntryPoints {
    /// What the header parser made of one raw line, as libcurl hands it to the header callback.
    package struct ParsedHeaderLine {
        package var statusCode: Int?
        package var field: (name: String, value: String)?
        package var continuation: String?
    }

    /// Runs the status-line, field and continuation parsers on one raw header line.
    package static func parseHeaderLine(_ line: UnsafeRawBufferPointer) -> ParsedHeaderLine {
        ParsedHeaderLine(
            statusCode: HeaderLineParser.statusCode(line), field: HeaderLineParser.field(line),
            continuation: HeaderLineParser.continuation(line))
    }

    /// The check a request's headers pass before they are sent: nil when valid, else the
    /// error's description.
    package static func validateHeaders(_ headers: HTTPHeaders) -> String? {
        do {
            try headers.validate()
            return nil
        } catch {
            return error.description
        }
    }

    /// Whether a byte is an RFC 9110 `tchar`, the rule header names and methods must follow.
    package static func isTokenByte(_ byte: UInt8) -> Bool { HTTPHeaders.isTokenByte(byte) }

    /// Whether a method would be accepted when a request is sent.
    package static func isValidMethod(_ method: HTTPMethod) -> Bool { method.isValidToken }
}
