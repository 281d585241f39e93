// libFuzzer target: header parsing and checking (the internal `HeaderLineParser` that reads
// the lines libcurl delivers, `HTTPHeaders.validate()` that every request passes, and the
// method check), through the package-only `FuzzEntryPoints`.
//
// Input: a mode byte, then either one raw header line, or 0xFF-separated header names and
// values (the first field is also tried as a method).
//
// Properties: never crashes; a status code has three digits; a parsed field has a non-empty
// name without a colon and a value without leading blanks or trailing whitespace and line
// endings;
// headers are refused exactly when a name is empty or not a token or a value holds a control
// character other than HTAB (CR, LF, NUL, ESC...) or DEL, and the error's description then holds
// no CR, LF or NUL; a method is accepted exactly
// when it is a non-empty token.

import Wattle
import WattleFuzzSupport

func isToken(_ text: String) -> Bool { !text.isEmpty && text.utf8.allSatisfy(FuzzEntryPoints.isTokenByte) }

func hasLineBreakOrNul(_ text: String) -> Bool { text.utf8.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 } }

/// RFC 9110's field-value, written out here rather than taken from the library: no control
/// character but HTAB, no DEL.
func hasControlCharacter(_ text: String) -> Bool { text.utf8.contains { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F } }

func check(_ headers: HTTPHeaders) {
    let error = FuzzEntryPoints.validateHeaders(headers)
    let valid = headers.allSatisfy { isToken($0.name) && !hasControlCharacter($0.value) }
    fuzzCheck(valid == (error == nil), "validate() said \(String(describing: error)) for \(Array(headers))")
    if let error {
        fuzzCheck(!hasLineBreakOrNul(error), "an error description with CR, LF or NUL: \(error.debugDescription)")
    }
}

func fuzzOne(_ bytes: UnsafeRawBufferPointer) {
    guard let mode = bytes.first else { return }
    let rest = UnsafeRawBufferPointer(rebasing: bytes[1...])
    if mode & 1 == 0 {
        let parsed = FuzzEntryPoints.parseHeaderLine(rest)
        if let code = parsed.statusCode { fuzzCheck((0...999).contains(code), "status code \(code)") }
        if let field = parsed.field {
            fuzzCheck(!field.name.isEmpty && !field.name.contains(":"), "field name \(field.name.debugDescription)")
            let blanks: Set<Character> = [" ", "\t"]
            let lineEnds: Set<Character> = [" ", "\t", "\r", "\n", "\r\n"]
            fuzzCheck(
                field.value.first.map { !blanks.contains($0) } ?? true
                    && field.value.last.map { !lineEnds.contains($0) } ?? true,
                "field value not trimmed: \(field.value.debugDescription)")
            check(HTTPHeaders([HTTPHeaders.Field(name: field.name, value: field.value)]))
        }
        if let continuation = parsed.continuation {
            fuzzCheck(!continuation.isEmpty, "an empty continuation")
        }
    } else {
        var input = FuzzInput(rest)
        var fields: [HTTPHeaders.Field] = []
        while !input.isAtEnd, fields.count < 16 {
            fields.append(HTTPHeaders.Field(name: input.text(), value: input.text()))
        }
        check(HTTPHeaders(fields))
        if let first = fields.first?.name {
            let accepted = FuzzEntryPoints.isValidMethod(HTTPMethod(rawValue: first))
            fuzzCheck(accepted == isToken(first), "method \(first.debugDescription) accepted: \(accepted)")
        }
    }
}

@main enum FuzzHeaderParsingMain {
    static func main() {
        FuzzMain.run(name: "FuzzHeaderParsing") { data, size in
            fuzzOne(UnsafeRawBufferPointer(start: data, count: size))
            return 0
        }
    }
}
