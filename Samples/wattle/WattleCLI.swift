import ArgumentParser
import Logging
import Wattle
import WattleCLIKit

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

/// `wattle`: httpie-style requests from a terminal, with tokens kept in a keychain.
///
/// The process starts in ``WattleMain``: a plain request runs directly, anything else through
/// ``run(arguments:)``.
struct WattleCLI: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "wattle",
        abstract: "Send HTTP requests with Wattle, httpie-style, with tokens kept in a keychain.",
        discussion: """
            wattle [METHOD] URL [ITEM ...]
              name==value   query parameter         name=value   JSON string field
              name:=json    raw JSON field          Header:value request header
              Header;       empty header            Header:      header not sent
              name=@file    string field from file  name:=@file  JSON field from file
              name@file     file upload (--form)    @file        the body from a file (@-: stdin)
            URL may be :PORT/path (localhost) or, with no base URL, host[:PORT]/path (http://).
            METHOD defaults to GET, or POST when there are body items. With --form (-f),
            fields are sent URL-encoded, or multipart when a file is uploaded. A literal
            value that starts with @ is written name=\\@text.
            With METHOD given as POST, PUT or PATCH and no body items, a standard input
            redirected from a file or a pipe is read to its end and sent (typed JSON if it
            parses as JSON); --ignore-stdin turns that off (@- still reads it).

            Exit codes: 0 for 2xx, 3 for an unfollowed 3xx, 4 for 4xx, 5 for 5xx,
            2 for network, TLS and timeout errors, 1 for usage and other errors.
            """,
        version: "wattle \(Wattle.version)",
        subcommands: [
            RequestCommand.self, AuthCommand.self, SessionCommand.self, CertCommand.self, DemoCommand.self,
            ServeCommand.self, PinCommand.self,
        ],
        defaultSubcommand: RequestCommand.self
    )

    /// `--name=` with nothing after the `=` as `--name ""`: ArgumentParser takes the next
    /// argument as its value instead (`--proxy= URL` made the URL the proxy and then found no
    /// URL). After `--` nothing is an option.
    static func splittingEmptyValues(_ arguments: [String]) -> [String] {
        var result: [String] = []
        for (index, argument) in arguments.enumerated() {
            if argument == "--" {
                result += arguments[index...]
                break
            }
            if argument.hasPrefix("--"), argument.hasSuffix("="), argument.utf8.count > 3,
                argument.utf8.filter({ $0 == UInt8(ascii: "=") }).count == 1
            {
                result += [String(argument.dropLast()), ""]
            } else {
                result.append(argument)
            }
        }
        return result
    }

    /// Parses `arguments` (the process's arguments without its path) with ArgumentParser, runs
    /// the command they name, and returns the error to leave with, or nil on success.
    static func run(arguments: [String]) async -> (any Error)? {
        do {
            var command = try parseAsRoot(splittingEmptyValues(arguments))
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
            return nil
        } catch {
            return error
        }
    }
}

/// The process's entry point: a synchronous `main` that starts the command as a task and waits
/// for it.
///
/// An `async` main runs on the main actor. Its hops (into the command's nonisolated code, and
/// back for the exit) go through the main dispatch queue, which, once the main thread parks in
/// `dispatch_main`, is served by threads the pool starts for it. A plain request is built here
/// (the `Session` too) and its task runs on the session's network thread, so a one-shot `wattle
/// GET` uses that thread alone besides this one, and no thread of Swift's pool: 3 context
/// switches instead of 12, ~1 ms less CPU, ~0.4 ms less wall time of ~8. Anything else runs as
/// a task on the pool while `CurlWarmUp` initialises libcurl beside ArgumentParser's parse.
@main
enum WattleMain {
    /// Sends logs to stderr (stdout carries only bodies), runs the command, and leaves with its
    /// exit status.
    static func main() {
        // A reader that goes away (`wattle URL | head -c 1`) is a failed write, reported in one
        // line with exit 1 as curl does, not a death by SIGPIPE with nothing said.
        signal(SIGPIPE, SIG_IGN)
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = Environment["WATTLE_LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .error
            return handler
        }
        // Detached tasks: a task made in `main` would otherwise be the main actor's, which this
        // thread, waiting below, never serves.
        let outcome = CommandOutcome()
        let arguments = Array(CommandLine.arguments.dropFirst())
        HiddenSecrets.hideInArgumentVector()
        let curlWarmUp: CurlWarmUp?
        if let invocation = RequestInvocation(plainArguments: arguments) {
            curlWarmUp = nil  // see CurlWarmUp
            do {
                let prepared = try invocation.prepare()
                Task.detached(executorPreference: prepared.session.networkThreadExecutor ?? globalConcurrentExecutor) {
                    outcome.finish(with: await invocation.finish(prepared))
                }
            } catch {
                outcome.finish(with: RequestInvocation.reported(error))
            }
        } else {
            curlWarmUp = CurlWarmUp.start()
            Task.detached { outcome.finish(with: await WattleCLI.run(arguments: arguments)) }
        }
        let failure = outcome.wait()
        curlWarmUp?.wait()
        // Done: flush and leave at once. `exit` would run every library's exit handlers, ~1 ms
        // of a ~12 ms run for nothing (every file is already written and closed or committed:
        // keychain transactions, downloads renamed into place; the kernel closes sockets), and
        // they could run while a released session's network thread still tears down libcurl's
        // connections, OpenSSL's among them. A failed request's `ExitCode` has been reported
        // already; help and `--version` leave through `exit(withError:)`, which prints them.
        // Any other error (ArgumentParser's usage errors, a command's own) is one line and
        // exit 1, as the contract says: ArgumentParser would print the usage with it and exit
        // 64 for a usage error.
        let flushed = fflush(nil) == 0 && !FileHandleOutput.hasWriteFailed
        switch failure {
        case nil: _exit(flushed ? ExitStatus.success : ExitStatus.usageOrOther)
        case let code as ExitCode: _exit(code.rawValue)
        case let failure? where WattleCLI.exitCode(for: failure) == .success: WattleCLI.exit(withError: failure)
        case let failure?:
            // ArgumentParser quotes an argument it could not read (`-abob:pw`): its secret is hidden.
            let message = SecretArguments.redacting(WattleCLI.message(for: failure), arguments: arguments)
            printError(oneLine(message) + " (see wattle --help)")
            _exit(ExitStatus.usageOrOther)
        }
    }

    /// ArgumentParser's message as one line: its lines joined, "Error: " dropped.
    static func oneLine(_ message: String) -> String {
        var text = message.split(whereSeparator: \.isNewline)
            .map { line in String(line.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed()) }
            .filter { !$0.isEmpty }.joined(separator: "; ")
        if text.hasPrefix("Error: ") { text.removeFirst("Error: ".count) }
        return text.isEmpty ? "invalid arguments" : text
    }
}
