import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Logging

/// `wattle`: httpie-style requests from a terminal, with tokens kept in a keychain.
@main
struct WattleCLI: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "wattle",
        abstract: "Send HTTP requests with Wattle, httpie-style, with tokens kept in a keychain.",
        discussion: """
            wattle [METHOD] URL [ITEM ...]
              name==value   query parameter         name=value   JSON string field
              name:=json    raw JSON field          Header:value request header
              name=@file    string field from file  name:=@file  JSON field from file
              name@file     file upload (--form)    @file        the body from a file (@-: stdin)
            METHOD defaults to GET, or POST when there are body items. With --form (-f),
            fields are sent URL-encoded, or multipart when a file is uploaded. A literal
            value that starts with @ is written name=\\@text.
            With METHOD given as POST, PUT or PATCH and no body items, a standard input
            redirected from a file or a pipe is read to its end and sent (typed JSON if it
            parses as JSON); --ignore-stdin turns that off (@- still reads it).

            Exit codes: 0 for 2xx, 3 for an unfollowed 3xx, 4 for 4xx, 5 for 5xx,
            2 for network, TLS and timeout errors, 1 for usage and other errors.
            """,
        subcommands: [RequestCommand.self, AuthCommand.self, DemoCommand.self, ServeCommand.self, PinCommand.self],
        defaultSubcommand: RequestCommand.self
    )

    /// Logs go to stderr, so stdout carries only bodies.
    static func main() async {
        let curlWarmUp = CurlWarmUp.start()
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = Environment["WATTLE_LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .error
            return handler
        }
        var failure: (any Error)?
        do {
            if let request = RequestInvocation(plainArguments: Array(CommandLine.arguments.dropFirst())) {
                try await request.run()
            } else {
                var command = try parseAsRoot()
                if var asyncCommand = command as? any AsyncParsableCommand {
                    try await asyncCommand.run()
                } else {
                    try command.run()
                }
            }
        } catch {
            failure = error
        }
        curlWarmUp?.wait()
        if let failure { exit(withError: failure) }
        // Done: flush and leave at once. Returning from an async main would hop to the main queue
        // on a new thread, and `exit` would run every library's exit handlers and stop the
        // engine in order, ~1 ms of a ~12 ms run for nothing: every file is already written
        // and closed or committed (keychain transactions, downloads renamed into place), and
        // the kernel closes sockets. Errors leave through `exit(withError:)` above.
        _exit(fflush(nil) == 0 ? ExitStatus.success : ExitStatus.usageOrOther)
    }
}
