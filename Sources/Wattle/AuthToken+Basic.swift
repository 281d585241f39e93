#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension AuthToken {
    /// HTTP Basic credentials (RFC 7617) as a token, sent as `Authorization: Basic <base64>`.
    ///
    /// It is kept in a ``TokenStore`` and applied by an ``Authenticator`` like any other token.
    /// It goes only to the base URL's origin, and is dropped when a redirect leaves that origin.
    /// ``KeychainTokenStore`` keeps it sealed in the keychain. There is nothing to refresh, so a
    /// 401 is the request's error.
    ///
    /// ```swift
    /// let basic = try AuthToken.basic(username: user, password: password)
    /// // For every request to the API, kept in memory:
    /// let session = Session(configuration: Configuration {
    ///     $0.baseURL = URL(string: "https://api.example.com/v1/")
    ///     $0.authenticator = Authenticator(store: InMemoryTokenStore(basic))
    /// })
    /// // Or kept in the session's token store (sealed in the keychain by KeychainTokenStore):
    /// try await session.signIn(with: basic)
    /// // Or for one request, which then sends no stored token:
    /// let report = try await session.send(Request("report", headers: ["Authorization": basic.authorizationValue]))
    /// ```
    ///
    /// The username and password are sent as UTF-8, byte for byte as they are given. RFC 7617's
    /// `charset="UTF-8"` has the server expect them in Unicode Normalization Form C, which is
    /// not applied here (FoundationEssentials has no normalization): pass NFC strings, as text
    /// typed or read from a file almost always is. Basic credentials are encoded, not
    /// encrypted: send them over `https` only. A token's descriptions show none of the password,
    /// and the username only as ``redact(_:)`` shows a secret: with an API key as the username,
    /// as some APIs take it, the key is not shown either.
    ///
    /// - Throws: ``WattleError/invalidHeader(name:reason:)`` naming `Authorization` when the
    ///   username contains a colon (the server would take the first colon as the username's end),
    ///   or when either contains a control character, which RFC 7617 forbids. The reason names
    ///   the character's code, never the password.
    public static func basic(username: String, password: String) throws(WattleError) -> AuthToken {
        // By scalar: a colon followed by a combining mark is another `Character`, yet the
        // server splits at the byte.
        if username.unicodeScalars.contains(":") {
            throw .invalidHeader(
                name: "Authorization",
                reason:
                    "the Basic username contains a colon, which the server would take as the end of the username (RFC 7617)"
            )
        }
        try BasicCredentials.checkNoControlCharacters(username, in: "username")
        try BasicCredentials.checkNoControlCharacters(password, in: "password")
        let encoded = Data("\(username):\(password)".utf8).base64EncodedString()
        return AuthToken(accessToken: encoded, tokenType: BasicCredentials.scheme)
    }

    /// Whether this token is Basic credentials: its scheme is `Basic`, in any case.
    var isBasic: Bool { tokenType.caseInsensitiveEquals(BasicCredentials.scheme) }
}

/// The checks and the redaction of Basic credentials.
enum BasicCredentials {
    /// The `Authorization` scheme.
    static let scheme = "Basic"

    /// Throws when `value` contains a control character (Unicode category Cc: C0, DEL and C1).
    static func checkNoControlCharacters(_ value: String, in part: String) throws(WattleError) {
        guard let scalar = value.unicodeScalars.first(where: { $0.properties.generalCategory == .control }) else {
            return
        }
        var reason = "the Basic \(part) contains the control character \(codePoint(scalar)), which RFC 7617 forbids"
        if scalar == "\n" || scalar == "\r", value.unicodeScalars.last == scalar {
            reason += " (a line read with its newline?)"
        }
        throw .invalidHeader(name: "Authorization", reason: reason)
    }

    /// `U+000A`.
    private static func codePoint(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }

    /// The credentials of a Basic token's access token, redacted: the username as
    /// ``AuthToken/redact(_:)`` shows a secret, and nothing of the password (`…:…` for a short
    /// username). Nothing at all when the value is not base64 of `username:password`.
    static func redacted(_ encoded: String) -> String {
        guard let data = Data(base64Encoded: encoded), let text = String(data: data, encoding: .utf8),
            let colon = text.unicodeScalars.firstIndex(of: ":")
        else { return "…" }
        return "\(AuthToken.redact(String(text.unicodeScalars[..<colon]))):…"
    }
}
