#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Keeps credentials out of logs, descriptions and error messages (and the CLI's `-v` lines).
package enum Redaction {
    /// Header names whose values are credentials.
    static let sensitiveHeaderNames: Set<String> = [
        "authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key", "x-auth-token",
        "x-access-token", "x-csrf-token", "api-key",
    ]

    /// Standard fields whose names hold a credential-looking word and whose values are not
    /// credentials (`Accept-Encoding` holds "code", `WWW-Authenticate` "auth"), and
    /// `Idempotency-Key`, which must go with a request a redirect sends to another origin (the
    /// server there de-duplicates replays by it).
    static let plainHeaderNames: Set<String> = [
        "accept-encoding", "content-encoding", "transfer-encoding", "www-authenticate", "proxy-authenticate",
        "access-control-allow-credentials", "idempotency-key", "x-idempotency-key",
    ]

    /// Whether a header carries a credential, by its name: the known ones, and any whose name
    /// says it holds one (`PRIVATE-TOKEN`, `X-Vault-Token`, `X-Goog-Api-Key`, `X-Session-Id`),
    /// as ``isSensitiveName(_:)`` reads a query parameter's.
    static func isSensitiveHeader(_ name: String) -> Bool {
        let lower = name.lowercased()
        return sensitiveHeaderNames.contains(lower) || (isSensitiveName(lower) && !plainHeaderNames.contains(lower))
    }

    /// Whether a query parameter or JSON field name looks like it carries a credential.
    static func isSensitiveName(_ name: String) -> Bool {
        let lower = name.lowercased()
        // Short names only whole: "sig" is inside "design", "pass" inside "compass", "pin"
        // inside "shipping".
        if ["sig", "jwt", "sas", "pass", "pwd", "pin", "otp", "totp", "cvv", "cvc"].contains(lower) { return true }
        return [
            "token", "password", "passwd", "passphrase", "pass_phrase", "secret", "key", "signature", "auth",
            "session", "code", "credential", "assertion",
        ]
        .contains { lower.contains($0) }
    }

    /// The URL with user-info removed and the values of credential-looking query parameters
    /// replaced by `<redacted>`.
    static func url(_ string: String) -> String {
        let redacted = fullURL(string)
        return redacted.count > 300 ? String(redacted.prefix(300)) + "…" : redacted
    }

    /// ``url(_:)`` without its cut at 300 characters.
    package static func fullURL(_ string: String) -> String {
        // A URL the parser refuses as written (a space, a `|`) is redacted as form text: its
        // `name=value` pairs, wherever they stand. (Not parsed a second time percent-encoded:
        // that halved the fuzzer's rate on invalid URLs, whose errors describe them.)
        // User-info goes first, as text: written without a scheme (`alice:s3cret@host/me`, as a
        // CLI argument may be), the parser reads `alice` as a scheme and keeps the password in
        // the path.
        let string = withoutUserInfo(string)
        let asFormText = { escaped(redactFormSecrets(string)) }
        guard var components = URLComponents(string: string) else { return asFormText() }
        if components.user != nil || components.password != nil {
            components.user = nil
            components.password = nil
        }
        if let items = components.percentEncodedQueryItems {
            components.percentEncodedQueryItems = items.map { item in
                // Percent-encoded items must stay valid RFC 3986 text: `<` and `>` are not, and
                // Foundation traps on them (found by fuzzing), so the marker is plain letters.
                isSensitiveName(item.name) && item.value != nil
                    ? URLQueryItem(name: item.name, value: "REDACTED")
                    : URLQueryItem(name: item.name, value: item.value.map(redactingSemicolonPairs))
            }
        }
        // A fragment is never sent, but an OAuth implicit flow's redirect puts the token there
        // (`#access_token=…`): its pairs are redacted like the query's.
        let fragment = components.percentEncodedFragment
        components.percentEncodedFragment = nil
        guard let text = components.string else { return asFormText() }
        return fragment.map { text + "#" + escaped(redactFormSecrets($0)) } ?? text
    }

    /// A proxy URL for messages: `scheme://host:port` and nothing else. Everything before the
    /// last `@` is left out, wherever it is: a proxy URL has no path, so any `@` ends
    /// credentials, even ones with an unencoded `#`, `/` or `?` that make the URL parse wrong.
    static func proxyURL(_ text: String) -> String {
        let trimmed = text.trimmingWhitespace()
        var scheme = "http"
        var rest = Substring(trimmed)
        if let separator = trimmed.firstRange(of: "://"), isScheme(trimmed[..<separator.lowerBound]) {
            scheme = String(trimmed[..<separator.lowerBound])
            rest = trimmed[separator.upperBound...]
        }
        if let at = rest.lastIndex(of: "@") { rest = rest[rest.index(after: at)...] }
        return escaped(scheme + "://" + rest.prefix { !"/?#".contains($0) })
    }

    /// RFC 3986's `ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )`.
    private static func isScheme(_ text: Substring) -> Bool {
        guard let first = text.first, first.isASCII, first.isLetter else { return false }
        return text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }
    }

    /// A libcurl message without credentials. libcurl quotes a proxy URL it cannot read whole
    /// ("Unsupported proxy syntax in 'user:password@…'"), so a quoted part with an `@` is shown
    /// as ``proxyURL(_:)`` shows it; then anything between `://` and the last `@`, and anything
    /// before an `@` within a word, is left out.
    static func curlMessage(_ message: String) -> String {
        guard message.contains("@") else { return message }
        var text = message
        if let open = text.firstIndex(of: "'"), let close = text.lastIndex(of: "'"), open < close,
            text[text.index(after: open)..<close].contains("@")
        {
            text =
                String(text[...open]) + proxyURL(String(text[text.index(after: open)..<close])) + String(text[close...])
        }
        if let separator = text.firstRange(of: "://"), let at = text[separator.upperBound...].lastIndex(of: "@") {
            text = String(text[..<separator.upperBound]) + String(text[text.index(after: at)...])
        }
        return text.split(separator: " ", omittingEmptySubsequences: false).map { word -> String in
            guard let at = word.lastIndex(of: "@") else { return String(word) }
            let quote = word.prefix { $0 == "'" || $0 == "\"" }
            return String(quote + word[word.index(after: at)...])
        }.joined(separator: " ")
    }

    /// A query value with `;`-separated pairs (`a=1;token=abc`, which some servers read as two
    /// parameters, and the query parser as one), each credential-looking one's value replaced
    /// by `REDACTED` (plain letters: the value must stay valid percent-encoded text).
    private static func redactingSemicolonPairs(_ value: String) -> String {
        guard value.contains(";") else { return value }
        return value.split(separator: ";", omittingEmptySubsequences: false).map { pair -> String in
            guard let equals = pair.firstIndex(of: "="), isSensitiveName(String(pair[..<equals])),
                pair.index(after: equals) < pair.endIndex
            else { return String(pair) }
            return pair[...equals] + "REDACTED"
        }.joined(separator: ";")
    }

    /// A URL with anything before an `@` in its authority left out: after `scheme://`, or from
    /// the start when the text does not begin with a scheme and `//` and reads
    /// `user:password@…` (`alice:s3cret@host/me`), up to the first `/`, `?` or `#`. As text, so
    /// that a password shows neither because the rest of the URL is malformed nor because it is
    /// written without a scheme.
    static func withoutUserInfo(_ string: String) -> String {
        // A mistyped scheme (`https:/alice:pw@host`, `https:///alice:pw@host`,
        // `https//alice:pw@host`): credentials right after it.
        if let credentials = UserInfo.credentialsAfterMistypedScheme(in: string) {
            return String(Substring(string.utf8.prefix(credentials.lowerBound)))
                + String(Substring(string.utf8.dropFirst(credentials.upperBound)))
        }
        if let authority = UserInfo.authority(in: string) {
            guard let at = string[authority].lastIndex(of: "@") else { return string }
            return String(string[..<authority.lowerBound]) + String(string[string.index(after: at)...])
        }
        // No scheme: only `user:password@host…`, the form the parser misreads as scheme `user`
        // (`@types/node` and `alice@example.com` are paths, left as they are).
        guard let end = UserInfo.endOfSchemelessCredentials(in: string) else { return string }
        return String(Substring(string.utf8.dropFirst(end)))
    }

    /// The first `limit` characters of a body, with the string values of credential-looking
    /// JSON fields, and the values of credential-looking form fields (`access_token=...`, as
    /// OAuth servers may answer), replaced by `<redacted>`.
    static func bodyPrefix(_ data: Data, limit: Int = 120) -> String {
        let text = String(decoding: data.prefix(4096), as: UTF8.self)
        let redacted = redactFormSecrets(redactJSONSecrets(text))
        let prefix = String(redacted.prefix(limit))
        return escaped(prefix) + (redacted.count > limit || data.count > 4096 ? "…" : "")
    }

    /// Replaces `"name": "value"` where `name` looks sensitive.
    static func redactJSONSecrets(_ text: String) -> String {
        var output = ""
        var index = text.startIndex
        while index < text.endIndex {
            guard text[index] == "\"", let keyEnd = closingQuote(in: text, from: index) else {
                output.append(text[index])
                index = text.index(after: index)
                continue
            }
            let key = String(text[text.index(after: index)..<keyEnd])
            output += text[index...keyEnd]
            index = text.index(after: keyEnd)
            // Skip whitespace and a colon.
            var probe = index
            while probe < text.endIndex, text[probe].isWhitespace { probe = text.index(after: probe) }
            guard probe < text.endIndex, text[probe] == ":", isSensitiveName(key) else { continue }
            output += text[index...probe]
            probe = text.index(after: probe)
            while probe < text.endIndex, text[probe].isWhitespace {
                output.append(text[probe])
                probe = text.index(after: probe)
            }
            if probe < text.endIndex, text[probe] == "\"" {
                output += "\"<redacted>\""
                index = (closingQuote(in: text, from: probe)).map { text.index(after: $0) } ?? text.endIndex
            } else if probe < text.endIndex, text[probe] == "{" || text[probe] == "[" {
                // `"tokens": ["a", "b"]`, `"token": {"value": "…"}`: the whole value.
                output += "<redacted>"
                index = endOfContainer(in: text, from: probe)
            } else {
                // A number, `true`, `false` or `null`: `"pin": 123456`.
                var end = probe
                while end < text.endIndex, !",}]".contains(text[end]), !text[end].isWhitespace {
                    end = text.index(after: end)
                }
                if end > probe { output += "<redacted>" }
                index = end
            }
        }
        return output
    }

    /// The index after the `}` or `]` closing the object or array that starts at `start`
    /// (strings skipped, nesting counted), or the end of a text cut short.
    private static func endOfContainer(in text: String, from start: String.Index) -> String.Index {
        var depth = 0
        var index = start
        while index < text.endIndex {
            switch text[index] {
            case "\"":
                guard let end = closingQuote(in: text, from: index) else { return text.endIndex }
                index = end
            case "{", "[":
                depth += 1
            case "}", "]":
                depth -= 1
                if depth == 0 { return text.index(after: index) }
            default:
                break
            }
            index = text.index(after: index)
        }
        return text.endIndex
    }

    /// Replaces the value of each `name=value` whose name looks sensitive, in form-encoded text
    /// (`a=1&access_token=...&b=2`) or text that contains such pairs. A name is a run of letters,
    /// digits and `_ . - [ ] %` that starts the text or follows any other character; its value
    /// runs to the next `&`, white space, quote, `;` or `,`.
    static func redactFormSecrets(_ text: String) -> String {
        guard text.contains("=") else { return text }
        let scalars = Array(text.unicodeScalars)
        var output = String.UnicodeScalarView()
        var index = 0
        var atNameStart = true
        while index < scalars.count {
            let scalar = scalars[index]
            guard atNameStart, isFormNameScalar(scalar) else {
                output.append(scalar)
                // Any other character may start a name after it: form text also turns up
                // quoted in JSON, escaped (`\u0026`), in parentheses or in markup.
                atNameStart = !isFormNameScalar(scalar)
                index += 1
                continue
            }
            var end = index
            while end < scalars.count, isFormNameScalar(scalars[end]) { end += 1 }
            let name = String(String.UnicodeScalarView(scalars[index..<end]))
            output.append(contentsOf: scalars[index..<end])
            index = end
            atNameStart = false
            guard index < scalars.count, scalars[index] == "=", isSensitiveName(name) else { continue }
            output.append("=")
            index += 1
            var valueEnd = index
            while valueEnd < scalars.count, !isFormValueEnd(scalars[valueEnd]) { valueEnd += 1 }
            if valueEnd > index { output.append(contentsOf: "<redacted>".unicodeScalars) }
            index = valueEnd
        }
        return String(output)
    }

    private static func isFormNameScalar(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "a"..."z", "A"..."Z", "0"..."9", "_", ".", "-", "[", "]", "%": true
        default: false
        }
    }

    private static func isFormValueEnd(_ scalar: Unicode.Scalar) -> Bool {
        "&;,\"'".unicodeScalars.contains(scalar) || scalar.properties.isWhitespace
    }

    private static func closingQuote(in text: String, from start: String.Index) -> String.Index? {
        var index = text.index(after: start)
        while index < text.endIndex {
            if text[index] == "\\" {
                index = text.index(after: index)
                if index < text.endIndex { index = text.index(after: index) }
                continue
            }
            if text[index] == "\"" { return index }
            index = text.index(after: index)
        }
        return nil
    }

    /// Control characters made visible (`\r`, `\n`, `\0`, `\u{..}`).
    static func escaped(_ string: String) -> String {
        var result = ""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\r": result += "\\r"
            case "\n": result += "\\n"
            case "\0": result += "\\0"
            case "\t": result += "\\t"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    result += "\\u{\(String(scalar.value, radix: 16))}"
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result
    }

    /// A byte named for an error message.
    static func describe(byte: UInt8) -> String {
        switch byte {
        case 0x0D: "CR (\\r)"
        case 0x0A: "LF (\\n)"
        case 0x00: "NUL (\\0)"
        case 0x20: "a space"
        case 0x3A: "a colon"
        default:
            byte < 0x20 || byte >= 0x7F ? "byte 0x\(String(byte, radix: 16))" : "\"\(Character(UnicodeScalar(byte)))\""
        }
    }
}
