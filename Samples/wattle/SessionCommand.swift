import ArgumentParser
import Wattle

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `wattle session show|clear NAME [URL]`: the cookie jar `--session NAME` keeps for an origin.
struct SessionCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "session",
        abstract: "Show or forget the cookies --session NAME keeps for an API's origin.",
        subcommands: [Show.self, Clear.self])

    /// A session on the jar of `name` for the origin of `url` (else the base URL), and the
    /// jar's name for messages; no session when there is no keychain file (so no cookies).
    static func jarSession(_ name: String, url: String?, connection: ConnectionOptions) throws -> (Session?, String) {
        let settings = connection.settings
        let origin = try settings.origin(of: url)
        let what = "session \(name) of \(origin.absoluteString)"
        guard settings.keychainFileExists else { return (nil, what) }
        var configuration = try settings.configuration(origin: origin)
        configuration.cookies = .keychain(
            try settings.cookieJar(named: name, origin: origin, configuration: configuration))
        return (Session(configuration: configuration), what)
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show", abstract: "List the session's cookies, without their values.")

        @Argument(help: "The session's name.")
        var name: String

        @Argument(help: "The API's URL (else --base-url or WATTLE_BASE_URL).")
        var url: String?

        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            try await AuthCommand.reporting {
                let (session, what) = try SessionCommand.jarSession(name, url: url, connection: connection)
                let cookies = try await session?.cookies() ?? []
                guard !cookies.isEmpty else {
                    printError("no cookies kept for the \(what)")
                    throw ExitCode(ExitStatus.usageOrOther)
                }
                for cookie in cookies.sorted(by: { ($0.domain, $0.path, $0.name) < ($1.domain, $1.path, $1.name) }) {
                    print(cookie)
                }
            }
        }
    }

    struct Clear: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "clear", abstract: "Forget the session's cookies.")

        @Argument(help: "The session's name.")
        var name: String

        @Argument(help: "The API's URL (else --base-url or WATTLE_BASE_URL).")
        var url: String?

        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            try await AuthCommand.reporting {
                let (session, what) = try SessionCommand.jarSession(name, url: url, connection: connection)
                try await session?.removeAllCookies()
                print("Forgot the cookies of the \(what).")
            }
        }
    }
}
