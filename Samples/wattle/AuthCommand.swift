import ArgumentParser
import Wattle

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `wattle auth login|set-token|set-basic|show|logout`: the token for an API's origin, in the keychain.
struct AuthCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "auth",
        abstract: "Manage the token kept in the keychain for an API's origin.",
        subcommands: [Login.self, SetToken.self, SetBasic.self, Show.self, Logout.self])

    /// Runs a step, mapping errors to one stderr line and an exit code.
    /// (As a request reports them: a library error with the CLI's option that acts on it, such
    /// as `--allow-self-signed` for an untrusted certificate, not the library's setting.)
    static func reporting(_ body: () async throws -> Void) async throws {
        do {
            try await body()
        } catch let error as ExitCode {
            throw error
        } catch {
            let reported = RequestInvocation.reported(error)
            if reported is ExitCode { throw reported }
            printError("\(error)")
            throw ExitCode(ExitStatus.usageOrOther)
        }
    }

    struct Login: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "login",
            abstract: "POST a username and password to a login URL and keep the token it returns.")

        @Argument(
            help:
                "The login endpoint, e.g. https://api.example.com/auth/login. The token is kept for the origin of --base-url (or WATTLE_BASE_URL) when given, else for this URL's."
        )
        var url: String

        @Option(help: "The username.")
        var username: String

        @Option(help: "The password (else WATTLE_PASSWORD, else asked on the terminal or read from stdin).")
        var password: String?

        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            try await AuthCommand.reporting {
                let secret =
                    try password
                    ?? PasswordPrompt.password(
                        readsStandardInput: true,
                        missing: "no password: pass --password, set WATTLE_PASSWORD or type it")
                let settings = connection.settings
                // The token is for the API: the base URL's origin when one is given (--base-url
                // or WATTLE_BASE_URL; a login served by another host, `auth.example.com`), else
                // the login URL's.
                let origin = try settings.resolvedBaseURL == nil ? settings.origin(of: url) : settings.origin(of: "/")
                let configuration = try settings.configuration(origin: origin)
                // signIn(at:) sends the login without the token kept from before: an expired
                // one would be refreshed first (failing the login when its refresh token was
                // revoked, the usual reason to sign in again), and a wrong password's 401
                // would be taken for a refused token instead of exiting 4.
                let token = try await Session(configuration: configuration).signIn(
                    at: url, parameters: ["username": username, "password": secret])
                print("Signed in to \(origin.absoluteString) as \(username): \(token)")
            }
        }
    }

    struct SetToken: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set-token", abstract: "Keep a token you already have for an API's origin.")

        @Argument(
            help: "The access token, or - to read it from standard input (out of the process list and shell history).")
        var token: String

        @Option(help: "The API's URL (else --base-url or WATTLE_BASE_URL).")
        var url: String?

        @Option(
            name: .customLong("refresh-token"),
            help:
                "A refresh token, or - to read it from standard input (after the access token's line when that is - too)."
        )
        var refreshToken: String?

        @Option(name: .customLong("expires-in"), help: "Seconds until the access token expires.")
        var expiresIn: Double?

        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            // The token is out of `ps` from here on (the other secrets, from the start).
            HiddenSecrets.hideArguments(equalTo: token)
            try await AuthCommand.reporting {
                try await AuthCommand.keep("Token", url: url, connection: connection) {
                    if let expiresIn, !expiresIn.isFinite {
                        throw CLIError.usage("--expires-in takes a number of seconds")
                    }
                    let accessToken = try token == "-" ? AuthCommand.readStandardInputToken() : token
                    let refresh =
                        try refreshToken == "-" ? AuthCommand.readStandardInputToken("refresh token") : refreshToken
                    return AuthToken(
                        accessToken: accessToken, refreshToken: refresh,
                        expiresAt: expiresIn.map { Date(timeIntervalSinceNow: $0) })
                }
            }
        }
    }

    struct SetBasic: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set-basic",
            abstract: "Keep HTTP Basic credentials for an API's origin, sent with every request to it.")

        @Argument(help: "The username (an API key, for APIs that take one as the username).")
        var username: String

        @Option(help: "The API's URL (else --base-url or WATTLE_BASE_URL).")
        var url: String?

        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            try await AuthCommand.reporting {
                try await AuthCommand.keep("Basic credentials", url: url, connection: connection) {
                    // Not an option: a password would show in the process list and shell history.
                    let password = try PasswordPrompt.password(
                        readsStandardInput: true, allowsEmpty: true,
                        missing:
                            "no password: set WATTLE_PASSWORD, type it, or give it as the first line of standard input (an empty line for none)"
                    )
                    return try AuthToken.basic(username: username, password: password)
                }
            }
        }
    }

    /// Keeps the token `make` gives in the keychain for the origin of `url` (else the base URL)
    /// and says so, the token redacted. The origin is checked first, so that nothing is asked
    /// for a command that cannot run.
    fileprivate static func keep(
        _ what: String, url: String?, connection: ConnectionOptions, make: () throws -> AuthToken
    ) async throws {
        let settings = connection.settings
        let origin = try settings.origin(of: url)
        let session = Session(configuration: try settings.configuration(origin: origin))
        let token = try make()
        try await session.signIn(with: token)
        print("\(what) kept for \(origin.absoluteString) (profile \(connection.profile)): \(token)")
    }

    /// `seconds` as a whole number within ±10^15, for an expiry far off ("never") or long past.
    fileprivate static func wholeSeconds(_ seconds: Double) -> Int {
        guard !seconds.isNaN else { return 0 }
        return Int(max(-1e15, min(1e15, seconds)))
    }

    /// A token given as `-`: the next line of standard input.
    fileprivate static func readStandardInputToken(_ what: String = "token") throws -> String {
        guard let read = Swift.readLine(strippingNewline: true) else {
            throw CLIError.usage("no \(what) on standard input")
        }
        let line = String(read.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
        guard !line.isEmpty else {
            throw CLIError.usage("no \(what) on standard input")
        }
        return line
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "show", abstract: "Show the kept token, redacted.")

        @Argument(help: "The API's URL (else --base-url or WATTLE_BASE_URL).")
        var url: String?

        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            try await AuthCommand.reporting {
                let settings = connection.settings
                let origin = try settings.origin(of: url)
                // A keychain that does not exist holds no token: none is made to say so (a
                // mistyped --keychain would leave an empty keychain and its key file behind).
                let configuration = try settings.configuration(origin: origin, createKeychain: false)
                // What is kept, whoever it is for (with --token-path, the client's view of the
                // store shows only a token bound to that client).
                let store = ConnectionSettings.keychainTokenStore(of: configuration)
                guard let token = try store?.loadNow() else {
                    printError(
                        "no token kept for \(origin.absoluteString) (profile \(connection.profile))"
                            + (settings.keychainFileExists ? "" : ": there is no keychain at \(settings.keychainPath)"))
                    throw ExitCode(ExitStatus.usageOrOther)
                }
                print("origin:  \(origin.absoluteString)")
                print("profile: \(connection.profile)")
                print("token:   \(token.tokenType) \(token.redactedAccessToken)")
                print("refresh: \(token.refreshToken.map { AuthToken.redact($0) } ?? "none")")
                if token.binding != nil { print("for:     a client (obtained with --token-path)") }
                if let expiresAt = token.expiresAt {
                    let seconds = AuthCommand.wholeSeconds(expiresAt.timeIntervalSinceNow)
                    print("expires: \(seconds >= 0 ? "in \(seconds) s" : "\(-seconds) s ago")")
                }
            }
        }
    }

    struct Logout: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "logout", abstract: "Forget the kept token.")

        @Argument(help: "The API's URL (else --base-url or WATTLE_BASE_URL).")
        var url: String?

        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            try await AuthCommand.reporting {
                let settings = connection.settings
                let origin = try settings.origin(of: url)
                // Nothing to forget in a keychain that does not exist, and none is made.
                guard settings.keychainFileExists else {
                    print(
                        "No token kept for \(origin.absoluteString) (profile \(connection.profile)): there is no keychain at \(settings.keychainPath)."
                    )
                    return
                }
                let session = Session(configuration: try settings.configuration(origin: origin))
                try await session.signOut()
                print("Signed out of \(origin.absoluteString) (profile \(connection.profile)).")
            }
        }
    }
}
