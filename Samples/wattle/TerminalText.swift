#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a server sends, made safe to show on a terminal: control characters are escape
/// sequences to a terminal (`ESC ] 52` writes the clipboard, others retitle the window or
/// move the cursor), so a body holding any is not printed there, and header values show them
/// escaped. Output to a file or a pipe is never changed.
enum TerminalText {
    /// Whether a body is not plain text for a terminal: not UTF-8, or holding a control
    /// character other than tab, line feed and carriage return (C0, DEL or C1).
    static func isBinary(_ data: Data) -> Bool {
        guard let text = String(validating: data, as: UTF8.self) else { return true }
        return text.unicodeScalars.contains(where: isUnsafe)
    }

    /// The line printed instead of a binary body.
    static func binaryNote(byteCount: Int) -> String {
        "[binary body: \(byteCount) bytes, not shown on a terminal; use -o FILE or redirect the output]"
    }

    /// `text` with every control character other than tab written as `\u{1B}` and the like.
    static func escaped(_ text: String) -> String {
        let escapes = { (scalar: Unicode.Scalar) in isUnsafe(scalar) || scalar == "\n" || scalar == "\r" }
        guard text.unicodeScalars.contains(where: escapes) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            if escapes(scalar) {
                result += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    private static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x09, 0x0A, 0x0D: false
        case 0x00..<0x20, 0x7F..<0xA0: true
        default: false
        }
    }
}
