public import Wattle
public import WattleKeychain

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// A typed client for the demo API, as a library user would write one on Wattle: Codable
/// models, one method per endpoint, tokens kept in a keychain and refreshed by Wattle.
///
/// ```swift
/// let client = DemoClient(baseURL: URL(string: "https://127.0.0.1:8443/")!, keychain: store) {
///     $0.trust.selfSignedHosts = ["127.0.0.1"]
/// }
/// try await client.logIn(username: "demo", password: "wattle")
/// let users = try await client.users()
/// ```
public final class DemoClient: Sendable {
    /// The session: base URL, trust, and an authenticator refreshing through `api/refresh`.
    public let session: Session
    /// Where the token is kept.
    public let tokens: any TokenStore

    /// A client for the demo API at `baseURL`, keeping its token in `keychain`.
    public init(
        baseURL: URL, keychain: KeychainStore, profile: String = "default",
        configure: (inout Configuration) -> Void = { _ in }
    ) {
        let tokens = KeychainTokenStore(origin: baseURL, profile: profile, store: keychain)
        self.tokens = tokens
        session = Session(
            configuration: Configuration {
                $0.baseURL = baseURL
                $0.defaultHeaders["Accept"] = "application/json"
                $0.authenticator = Authenticator(
                    store: tokens, refresh: Authenticator.postRefreshToken(to: "api/refresh"))
                configure(&$0)
            })
    }

    /// Logs in and keeps the token.
    public func logIn(username: String, password: String) async throws(WattleError) {
        try await session.signIn(at: "api/login", parameters: ["username": username, "password": password])
    }

    /// Forgets the token.
    public func logOut() async throws(WattleError) { try await session.signOut() }

    /// Every user.
    public func users() async throws(WattleError) -> [User] {
        try await session.get("api/users").decode([User].self)
    }

    /// One user.
    public func user(id: Int) async throws(WattleError) -> User {
        try await session.get("api/users/\(id)").decode(User.self)
    }

    /// The emojis, by name.
    public func emojis() async throws(WattleError) -> [String: String] {
        try await session.get("api/emojis").decode([String: String].self)
    }

    /// Server facts and the number of changes since a date.
    public func meta(since: Date) async throws(WattleError) -> Meta {
        try await session.get("api/meta", parameters: ["since": since]).decode(Meta.self)
    }

    /// Who the token belongs to.
    public func whoAmI() async throws(WattleError) -> String {
        try await session.get("api/whoami").decode([String: String].self)["user"] ?? ""
    }
}

/// A user of the demo API.
public struct User: Codable, Sendable, Hashable {
    /// The id.
    public var id: Int
    /// The full name.
    public var name: String
    /// The e-mail address.
    public var email: String
}

/// What `GET /api/meta` answers.
public struct Meta: Codable, Sendable, Hashable {
    /// The server's name.
    public var server: String
    /// The API version.
    public var version: String
    /// The date asked about, as sent.
    public var since: String
    /// Changes since that date.
    public var changes: Int
}
