/// An ordered list of HTTP header fields with case-insensitive lookup.
///
/// ```swift
/// var headers: HTTPHeaders = ["Accept": "application/json"]
/// headers["X-Request-ID"] = "42"
/// headers["accept"]  // "application/json"
/// ```
///
/// Names and values are checked when a request is sent: a name that is not an RFC 9110 token,
/// or a value containing a control character (CR, LF, NUL or any other but HTAB, and DEL), is
/// refused with ``WattleError/invalidHeader(name:reason:)`` and never sent.
public struct HTTPHeaders: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral, CustomStringConvertible {
    /// One header field.
    public struct Field: Sendable, Hashable {
        /// The field name, as given.
        public var name: String
        /// The field value.
        public var value: String
        /// Creates a field.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// The fields in order.
    public private(set) var fields: [Field]

    /// Creates an empty header list.
    public init() { fields = [] }

    /// Creates headers from fields, keeping their order (and repeated names).
    public init(_ fields: [Field]) { self.fields = fields }

    /// Creates headers from `name: value` pairs, keeping their order.
    public init(dictionaryLiteral elements: (String, String)...) {
        fields = elements.map { Field(name: $0.0, value: $0.1) }
    }

    /// The first value of the named field, compared case-insensitively; setting replaces every
    /// field of that name (or removes them all when set to `nil`).
    public subscript(name: String) -> String? {
        get { fields.first { $0.name.caseInsensitiveEquals(name) }?.value }
        set {
            if let newValue {
                if let index = fields.firstIndex(where: { $0.name.caseInsensitiveEquals(name) }) {
                    fields[index].value = newValue
                    // Keep the first occurrence only.
                    var position = fields.index(after: index)
                    while position < fields.endIndex {
                        if fields[position].name.caseInsensitiveEquals(name) {
                            fields.remove(at: position)
                        } else {
                            position += 1
                        }
                    }
                } else {
                    fields.append(Field(name: name, value: newValue))
                }
            } else {
                fields.removeAll { $0.name.caseInsensitiveEquals(name) }
            }
        }
    }

    /// Every value of the named field, in order.
    public func values(for name: String) -> [String] {
        fields.filter { $0.name.caseInsensitiveEquals(name) }.map(\.value)
    }

    /// Whether a field of this name is present.
    public func contains(_ name: String) -> Bool { fields.contains { $0.name.caseInsensitiveEquals(name) } }

    /// Appends a field, keeping any existing field of the same name (for repeated fields).
    public mutating func add(name: String, value: String) { fields.append(Field(name: name, value: value)) }

    /// Removes every field of this name.
    public mutating func remove(_ name: String) { self[name] = nil }

    /// Returns these headers with `other`'s fields replacing those of the same names.
    public func merging(_ other: HTTPHeaders) -> HTTPHeaders {
        if other.fields.isEmpty { return self }
        if fields.isEmpty { return other }
        var result = self
        for name in Set(other.fields.map { $0.name.lowercased() }) { result.remove(name) }
        result.fields.append(contentsOf: other.fields)
        return result
    }

    /// Removes `Content-Length` and `Transfer-Encoding`: how a body is framed is the body's to
    /// say (libcurl sends what it has whatever a `Content-Length` claims, so one that disagrees
    /// left the rest of the body to be read as the next request on a kept-alive connection, and
    /// one on a GET left the server waiting for a body). AsyncHTTPClient does the same.
    mutating func removeFraming() {
        guard hasFraming else { return }
        fields.removeAll { Self.isFraming($0.name) }
    }

    /// Whether a `Content-Length` or `Transfer-Encoding` is among the fields.
    var hasFraming: Bool { fields.contains { Self.isFraming($0.name) } }

    private static func isFraming(_ name: String) -> Bool {
        name.caseInsensitiveEquals("Content-Length") || name.caseInsensitiveEquals("Transfer-Encoding")
    }

    /// The number of fields.
    public var count: Int { fields.count }

    /// Iterates over the fields in order.
    public func makeIterator() -> IndexingIterator<[Field]> { fields.makeIterator() }

    /// The fields one per line, with the values of credential-bearing fields redacted.
    public var description: String { redactedLines.joined(separator: "\n") }

    /// Each field as `Name: value`, with the values of credential-bearing fields redacted.
    private var redactedLines: [String] { redactedLines(isSensitive: Redaction.isSensitiveHeader) }

    /// Each field as `Name: value`, with the values of the fields `isSensitive` names redacted.
    /// A URL-valued field (`Location`, `Content-Location`) shows as ``Redaction/fullURL(_:)``
    /// shows a URL, whole: an OAuth redirect's `?code=…` or `#access_token=…`, and user-info,
    /// redacted.
    private func redactedLines(isSensitive: (String) -> Bool) -> [String] {
        fields.map { field in
            if isSensitive(field.name) { return "\(field.name): <redacted>" }
            if Self.isURLValued(field.name) { return "\(field.name): \(Redaction.fullURL(field.value))" }
            if let redacted = Self.withURLsRedacted(field) { return "\(field.name): \(redacted)" }
            return "\(field.name): \(field.value)"
        }
    }

    /// The value of a field that holds URLs among other text, each URL shown as
    /// ``Redaction/fullURL(_:)`` shows one: `Link` (`<https://…?access_token=…>; rel="next"`, as
    /// some APIs echo a token into their paging links) and `Refresh` (`0; url=…`). Nil for
    /// other fields.
    private static func withURLsRedacted(_ field: Field) -> String? {
        if field.name.caseInsensitiveEquals("Link") {
            // Each `<URI-Reference>` (RFC 8288); parameters between them stand.
            var text = ""
            var rest = Substring(field.value)
            while let open = rest.firstIndex(of: "<"), let close = rest[open...].firstIndex(of: ">") {
                text += rest[...open] + Redaction.fullURL(String(rest[rest.index(after: open)..<close])) + ">"
                rest = rest[rest.index(after: close)...]
            }
            return text + rest
        }
        if field.name.caseInsensitiveEquals("Refresh") {
            // `url=` in any case; the bytes before it are ASCII, so the offsets are the string's.
            let bytes = Array(field.value.utf8)
            let marker = Array("url=".utf8)
            guard bytes.count >= marker.count,
                let start = (0...(bytes.count - marker.count)).first(where: { index in
                    zip(bytes[index...], marker).allSatisfy { $0 | 0x20 == $1 | 0x20 }
                })
            else { return nil }
            let split = start + marker.count
            return String(decoding: bytes[..<split], as: UTF8.self)
                + Redaction.fullURL(String(decoding: bytes[split...], as: UTF8.self))
        }
        return nil
    }

    /// `Location` or `Content-Location`, in any case.
    private static func isURLValued(_ name: String) -> Bool {
        let lower = name.lowercased()
        return lower == "location" || lower == "content-location"
    }

    /// The fields one per line, with the values redacted of the built-in credential headers and
    /// of the configuration's ``Configuration/sensitiveHeaders``: for the session's logs.
    func redactedDescription(for configuration: Configuration) -> String {
        redactedLines(isSensitive: configuration.isSensitiveHeader).joined(separator: "\n")
    }

    /// Checks every name and value, throwing ``WattleError/invalidHeader(name:reason:)`` for the first bad one.
    func validate() throws(WattleError) {
        for field in fields { try Self.validate(field) }
    }

    /// Checks one field's name and value.
    static func validate(_ field: Field) throws(WattleError) {
        if field.name.isEmpty {
            throw .invalidHeader(name: "", reason: "the header name is empty")
        }
        if let bad = field.name.utf8.firstIndex(where: { !isTokenByte($0) }) {
            // A name is shown only when it is the part before a colon or a space, up to 64
            // bytes (`Authorization` of `Authorization: Bearer …` written as a name): a name
            // that is itself a token or key (`dXNlcjpzM2NyZXQ=`, `sk-proj-abc/def`) is not shown.
            let badByte = field.name.utf8[bad]
            let prefix = field.name.utf8[..<bad]
            let shown =
                (badByte == UInt8(ascii: ":") || badByte == UInt8(ascii: " ")) && prefix.count <= 64
                ? Redaction.escaped(String(decoding: prefix, as: UTF8.self)) : ""
            throw .invalidHeader(
                name: shown,
                reason:
                    "the header name contains \(Redaction.describe(byte: badByte))\(shown.isEmpty ? " (the name is not shown: it may be a credential)" : ""), which is not allowed in a name"
            )
        }
        if field.name.utf8.count + field.value.utf8.count > maximumFieldSize {
            throw .invalidHeader(
                name: String(Redaction.escaped(field.name).prefix(100)),
                reason:
                    "the field is \(field.name.utf8.count + field.value.utf8.count) bytes, over the limit of \(maximumFieldSize) bytes that servers accept"
            )
        }
        if let bad = field.value.utf8.first(where: isControlByte) {
            throw .invalidHeader(
                name: field.name,
                reason: bad == 0x0D || bad == 0x0A || bad == 0x00
                    ? "the value contains \(Redaction.describe(byte: bad)); CR, LF and NUL are refused to prevent header injection"
                    : "the value contains \(Redaction.describe(byte: bad)), a control character, which is not allowed in a value"
            )
        }
    }

    /// The longest header field sent, name and value together (servers commonly refuse more
    /// than 8 to 80 KB; libcurl refuses a request head over 1 MB).
    static let maximumFieldSize = 100_000

    /// A byte RFC 9110's `field-value` does not allow: a control character other than HTAB
    /// (0x00-0x08, 0x0A-0x1F) or DEL. Strict servers answer 400 to one (llhttp does), and CR, LF
    /// and NUL would end the field. Bytes from 0x80 (UTF-8, `obs-text`) are allowed.
    static func isControlByte(_ byte: UInt8) -> Bool {
        (byte < 0x20 && byte != 0x09) || byte == 0x7F
    }

    /// RFC 9110 `tchar`.
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }
}

extension String {
    /// Runs `body` on the string's UTF-8 bytes, contiguous: a native string's own storage, with
    /// no copy (any other string is copied into one first). Scanning them is several times
    /// cheaper than iterating `utf8`, which showed in request profiles (~1,000 instructions for
    /// each scan of a 40-byte URL; iterating two `UTF8View`s in step to compare header names).
    func withUTF8Bytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result {
        if let result = try utf8.withContiguousStorageIfAvailable(body) { return result }
        var copy = self
        return try copy.withUTF8(body)
    }

    /// ASCII case-insensitive comparison, without allocating for native strings.
    func caseInsensitiveEquals(_ other: String) -> Bool {
        guard utf8.count == other.utf8.count else { return false }
        return withUTF8Bytes { x in other.withUTF8Bytes { y in Self.equalIgnoringASCIICase(x, y) } }
    }

    private static func equalIgnoringASCIICase(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool
    {
        for index in 0..<a.count where a[index] != b[index] {
            if lowercasedASCII(a[index]) != lowercasedASCII(b[index]) { return false }
        }
        return true
    }

    private static func lowercasedASCII(_ byte: UInt8) -> UInt8 {
        byte >= 65 && byte <= 90 ? byte + 32 : byte
    }
}

extension HTTPHeaders: CustomReflectable {
    /// The fields as `Name: value` lines, credentials redacted as in ``description``: `dump`
    /// and debuggers show these instead of the stored values.
    public var customMirror: Mirror { Mirror(self, unlabeledChildren: redactedLines, displayStyle: .collection) }
}
