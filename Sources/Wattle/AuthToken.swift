#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// An access token, with its refresh token and expiry, as an API hands them out.
///
/// Its descriptions never show a whole token:
///
/// ```swift
/// let token = AuthToken(accessToken: "eyJhbGciOiJIUzI1NiJ9.payload.sig", refreshToken: "rt_123",
///                       expiresAt: Date(timeIntervalSinceNow: 3600))
/// print(token)   // AuthToken(Bearer eyJh….sig, refresh token set, expires in 3599 s)
/// ```
public struct AuthToken: Codable, Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    /// The token sent as `Authorization: <type> <accessToken>`.
    public var accessToken: String
    /// The token that obtains a new access token, if the API issues one.
    public var refreshToken: String?
    /// When the access token expires, if known.
    public var expiresAt: Date?
    /// The scheme in the `Authorization` header. Default `Bearer`.
    public var tokenType: String
    /// The client a token was obtained for, when its authenticator binds its tokens
    /// (``Authenticator/clientCredentials(store:endpoint:clientID:clientSecret:scope:clientAuthentication:encoding:additionalParameters:)``):
    /// a hash of the client's token endpoint, identifier, scope and fields, never of its secret.
    /// Such an authenticator sends no stored token bound to another client, or to none; nil (the
    /// default) for any other token. Stored with the token; not part of ``description``.
    public var binding: String?

    /// Creates a token.
    public init(accessToken: String, refreshToken: String? = nil, expiresAt: Date? = nil, tokenType: String = "Bearer")
    {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.expiresAt = expiresAt
        self.tokenType = tokenType
    }

    /// Reads an OAuth 2 token response (RFC 6749 section 5.1): `access_token`,
    /// `refresh_token`, `expires_in` (seconds) and `token_type`, in JSON, or form-encoded when
    /// the response says `application/x-www-form-urlencoded` (as some servers answer, GitHub's
    /// among them, unless asked for JSON).
    ///
    /// - Parameter previous: the token being refreshed; its refresh token is kept when the
    ///   response carries none.
    /// - Throws: ``WattleError/decoding(type:underlying:bodyPrefix:)`` when the body has no
    ///   access token, or an empty one, or a `token_type` other than `Bearer` (in any case; none
    ///   is taken as Bearer), which RFC 6749 section 7.1 forbids using; the body's prefix in it
    ///   has credential-looking values redacted.
    public init(oauthResponse response: Response, previous: AuthToken? = nil) throws(WattleError) {
        struct Body: Decodable {
            var access_token: String
            var refresh_token: String?
            var expires_in: Seconds?
            var token_type: String?
        }
        /// A lifetime as a number, or as a string holding one (`"3599"`, as Azure AD's v1
        /// endpoint sends it); anything else is no lifetime rather than a failed sign-in (a
        /// refresh that failed here would lose the new refresh token the server just rotated).
        struct Seconds: Decodable {
            var value: Double?
            init(_ value: Double?) { self.value = value }
            init(from decoder: any Decoder) throws {
                let container = try decoder.singleValueContainer()
                if let number = try? container.decode(Double.self) {
                    value = number
                } else if let text = try? container.decode(String.self) {
                    value = Double(text)
                } else {
                    value = nil
                }
            }
        }
        var body: Body
        let contentType = response.headers["Content-Type"]?.lowercased() ?? ""
        if contentType.hasPrefix("application/x-www-form-urlencoded") {
            let fields = FormDecoding.fields(response.data)
            guard let access = fields["access_token"], !access.isEmpty else {
                throw .decoding(
                    type: "AuthToken", underlying: "the form-encoded response has no access_token",
                    bodyPrefix: Redaction.bodyPrefix(response.data))
            }
            // Text is not JSON: "nan", "inf" or "-5" would parse as a Double, none is a lifetime.
            let lifetime = fields["expires_in"].flatMap(Double.init).flatMap { $0.isFinite && $0 >= 0 ? $0 : nil }
            // (An empty refresh token or type is absent: the step below, for both forms.)
            body = Body(
                access_token: access, refresh_token: fields["refresh_token"], expires_in: Seconds(lifetime),
                token_type: fields["token_type"])
        } else {
            // As it is: not the session's decoder, whose key strategy could rename the fields.
            body = try response.decode(Body.self, decoder: JSONDecoder())
            if let lifetime = body.expires_in?.value, !(lifetime.isFinite && lifetime >= 0) {
                // A negative lifetime is no lifetime (as in the form-encoded branch); so is a
                // string that reads as NaN or infinity.
                body.expires_in = nil
            }
        }
        // The same rules for both forms: an empty access token is none, and an empty refresh
        // token or type is absent (an empty refresh token would replace the previous one, and
        // the next refresh would send "" and be refused).
        guard !body.access_token.isEmpty else {
            throw .decoding(
                type: "AuthToken", underlying: "the response's access_token is empty",
                bodyPrefix: Redaction.bodyPrefix(response.data))
        }
        let type = body.token_type.flatMap { $0.isEmpty ? nil : $0 } ?? "Bearer"
        // RFC 6749 section 7.1: a client must not use a token whose type it does not understand.
        // Sent as a Bearer token, a DPoP- or MAC-bound one is refused, and each refusal spends
        // a refresh.
        guard type.lowercased() == "bearer" else {
            throw .decoding(
                type: "AuthToken",
                underlying:
                    "the token_type is \"\(Redaction.escaped(String(type.prefix(40))))\", not Bearer: Wattle sends Bearer tokens only (RFC 6750)",
                bodyPrefix: Redaction.bodyPrefix(response.data))
        }
        self.init(
            accessToken: body.access_token,
            refreshToken: body.refresh_token.flatMap { $0.isEmpty ? nil : $0 } ?? previous?.refreshToken,
            expiresAt: body.expires_in?.value.map { Date(timeIntervalSinceNow: $0) }, tokenType: "Bearer")
        // A refreshed token is for the same client as the one it replaces.
        binding = previous?.binding
    }

    /// Whether `other` carries the same access and refresh token (expiry and type aside).
    func isSameCredential(as other: AuthToken) -> Bool {
        accessToken == other.accessToken && refreshToken == other.refreshToken
    }

    /// The `Authorization` header value.
    public var authorizationValue: String { "\(tokenType) \(accessToken)" }

    /// Whether the token expires within `leeway` from now (false when the expiry is unknown).
    public func isExpired(leeway: Duration = .zero) -> Bool {
        guard let expiresAt else { return false }
        let (seconds, attoseconds) = leeway.components
        return expiresAt.timeIntervalSinceNow <= Double(seconds) + Double(attoseconds) / 1e18
    }

    /// The first and last few characters of the access token, never the whole of it. For Basic
    /// credentials (``basic(username:password:)``), the username redacted so and nothing of the
    /// password: `sk_l…3xyz:…`, or `…:…` for a short username.
    public var redactedAccessToken: String {
        isBasic ? BasicCredentials.redacted(accessToken) : Self.redact(accessToken)
    }

    /// A redacted form of any secret, showing at most a quarter of it: `abcd…wxyz` from 32
    /// characters, `abcd…` (the start, often a kind such as `eyJh` or `gho_`) from 16, `…` below.
    public static func redact(_ secret: String) -> String {
        switch secret.count {
        case 32...: "\(secret.prefix(4))…\(secret.suffix(4))"
        case 16...: "\(secret.prefix(4))…"
        default: "…"
        }
    }

    /// `AuthToken(Bearer eyJh….sig, refresh token set, expires in 3599 s)`: no whole secret.
    public var description: String {
        var parts = ["\(tokenType) \(redactedAccessToken)"]
        parts.append(refreshToken == nil ? "no refresh token" : "refresh token set")
        if let expiresAt { parts.append("expires in \(Self.wholeSeconds(expiresAt.timeIntervalSinceNow)) s") }
        return "AuthToken(\(parts.joined(separator: ", ")))"
    }

    /// `seconds` as a whole number, within ±10^15 (an `expires_in` of `1e19`, which some
    /// servers send for "never", must not trap a description).
    static func wholeSeconds(_ seconds: Double) -> Int {
        guard seconds.isFinite else { return seconds > 0 ? 1_000_000_000_000_000 : -1_000_000_000_000_000 }
        return Int(max(-1e15, min(1e15, seconds)))
    }

    /// Same as ``description``.
    public var debugDescription: String { description }

    /// A mirror without the secrets, so `dump(token)` prints none.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "accessToken": redactedAccessToken, "refreshToken": refreshToken.map(Self.redact) as Any,
                "expiresAt": expiresAt as Any, "tokenType": tokenType, "binding": binding as Any,
            ])
    }
}
