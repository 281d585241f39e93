import ArgumentParser
import Foundation
import TestProxies
import Testing
import Wattle

@testable import wattle

/// `wattle [METHOD] URL [ITEM ...]` with no option skips ArgumentParser
/// (`RequestInvocation.init(plainArguments:)`); these tests hold it to ArgumentParser's result.
@Suite("CLI: the plain request form parses as ArgumentParser parses it")
struct PlainArgumentsTests {
    /// What ArgumentParser makes of the arguments, when it is a request.
    static func parsed(_ arguments: [String]) throws -> RequestInvocation? {
        (try WattleCLI.parseAsRoot(arguments) as? RequestCommand)?.invocation
    }

    @Test("the common forms are taken without ArgumentParser, with the same words and every default")
    func commonForms() throws {
        let lists: [[String]] = [
            ["https://api.example.com/users"],
            ["GET", "http://127.0.0.1:8080/users"],
            ["POST", "users", "name=Ada", "age:=36", "X-Trace:1", "q==a b"],
            ["users/1", "Authorization:Bearer t"],
            ["DELETE", "/users/1"],
            ["GET"],
            ["@body.json"],
            ["get", "users", ""],
        ]
        for arguments in lists {
            let plain = try #require(RequestInvocation(plainArguments: arguments), "\(arguments)")
            #expect(plain.words == arguments)
            #expect(plain == RequestInvocation(words: arguments))
            #expect(try Self.parsed(arguments) == plain, "\(arguments)")
        }
    }

    @Test("options, --, -, help and command names are left to ArgumentParser")
    func declined() throws {
        let lists: [[String]] = [
            [],
            ["-v", "GET", "http://x/"],
            ["GET", "http://x/", "--verbose"],
            ["--", "GET", "http://x/"],
            ["POST", "http://x/", "-"],
            ["--help"], ["-h"], ["help"], ["help", "auth"],
            ["auth", "show"], ["pin", "example.com"], ["demo"], ["serve"], ["request", "http://x/"],
            ["GET", "http://x/", "auth"],
            ["http://x/", "--timeout=5"],
            ["--version"],
        ]
        for arguments in lists {
            #expect(RequestInvocation(plainArguments: arguments) == nil, "\(arguments)")
        }
        // `@-` (standard input as the body) is an item, not an option: it is plain.
        #expect(RequestInvocation(plainArguments: ["POST", "http://x/", "@-"]) != nil)
        // The comparison can tell an option's effect: ArgumentParser's result differs from the plain one.
        let verbose = try #require(try Self.parsed(["-v", "GET", "http://x/"]))
        #expect(verbose.verbose && verbose != RequestInvocation(words: ["GET", "http://x/"]))
        let connection = try #require(try Self.parsed(["--profile", "work", "--timeout", "5", "http://x/"]))
        #expect(connection.connection != ConnectionSettings())
        #expect(connection.words == ["http://x/"])
    }

    @Test(
        "--timeout lifts the 30 s wait for a silent server (a server thinking for 45 s is waited for); --stall-timeout still sets it"
    )
    func timeoutLiftsStallDefault() throws {
        let origin = URL(string: "http://127.0.0.1:1/")
        var settings = ConnectionSettings()
        let defaults = try settings.configuration(origin: origin, createKeychain: false).timeouts
        #expect(defaults.total == .seconds(60) && defaults.stall == .seconds(30))
        settings.timeout = 120
        let lifted = try settings.configuration(origin: origin, createKeychain: false).timeouts
        #expect(lifted.total == .seconds(120) && lifted.stall == nil)
        settings.stallTimeout = 5
        #expect(try settings.configuration(origin: origin, createKeychain: false).timeouts.stall == .seconds(5))
    }

    @Test("--name= is --name with an empty value, before -- only")
    func emptyAttachedValues() {
        #expect(
            WattleCLI.splittingEmptyValues(["--proxy=", "http://x/", "--base-url=http://y/", "-o=", "--", "--proxy="])
                == ["--proxy", "", "http://x/", "--base-url=http://y/", "-o=", "--", "--proxy="])
    }

    @Test("every command name ArgumentParser matches (each subcommand's, its aliases, help) is left to it")
    func commandNames() throws {
        var names = ["help"]
        for command in WattleCLI.configuration.subcommands {
            names.append(command._commandName)
            names += command.configuration.aliases
        }
        #expect(Set(names).isSuperset(of: ["help", "request", "auth", "demo", "serve", "pin"]))
        for name in names {
            for arguments in [[name], [name, "http://x/"], ["GET", "http://x/", name], ["http://x/", name]] {
                #expect(RequestInvocation(plainArguments: arguments) == nil, "\(arguments)")
            }
        }
        // Names of the commands below `auth` are words of a request when they do not come first.
        for name in ["login", "show", "logout", "set-token"] {
            let arguments = ["http://x/", name]
            #expect(try Self.parsed(arguments) == RequestInvocation(plainArguments: arguments))
        }
    }

    @Test("on 1,000 generated argument lists, every one taken without ArgumentParser parses the same with it")
    func generated() async {
        // ArgumentParser throws and catches as it parses, and swift-testing captures a backtrace at
        // every throw: these 1,000 parses take 15-40 s. On a thread of their own they leave the
        // cooperative pool's two threads to the other suites.
        let outcome = await ChildProcess.onOwnThread { Self.compareGenerated() }
        #expect(
            outcome.differences.isEmpty,
            "\(outcome.differences.count) differ: \(outcome.differences.prefix(10))")
        // Both sides of the rule are exercised.
        #expect(outcome.taken > 150 && outcome.left > 500, "taken \(outcome.taken), left \(outcome.left)")
    }

    /// Parses 1,000 generated argument lists both ways: how many the plain form took and left, and
    /// each list the two parses disagree on (or ArgumentParser refused), with both results.
    static func compareGenerated() -> (taken: Int, left: Int, differences: [String]) {
        let pieces = [
            "GET", "POST", "PUT", "PATCH", "DELETE", "get", "HEAD", "http://127.0.0.1:8080/users",
            "https://api.example.com/v1/x?y=1&z", "users", "/users/1", "localhost:80", "", " ", "name=value",
            "n:=1", "n:=-1", "q==a", "q==--x", "Accept:text/html", "X: y", "@body.json", "name=@f.txt",
            "photo@/tmp/a.jpg", "@", "@-", "é=ü", "a b", "=", "==", ":", "x=--y", "auth0", "requests", "Help",
            "HELP", "—flag", "+", "0", "%20", "a\\=b=c", "über", "🐨=1",
            "-v", "--verbose", "--", "-", "--help", "-o", "out.json", "--timeout", "5", "-f", "--form",
            "--base-url=http://x/", "--allow-self-signed", "127.0.0.1", "--follow", "--ignore-stdin",
            "auth", "pin", "demo", "serve", "request", "help", "login", "show", "logout", "set-token",
        ]
        // A fixed linear congruential sequence (Knuth's MMIX constants), so a failure reproduces.
        var state: UInt64 = 0x5EED_CAFE
        func next() -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int(state >> 33)
        }
        var taken = 0
        var left = 0
        var differences: [String] = []
        for _ in 0..<1_000 {
            let count = next() % 6 + 1
            let arguments = (0..<count).map { _ in pieces[next() % pieces.count] }
            guard let plain = RequestInvocation(plainArguments: arguments) else {
                left += 1
                continue
            }
            taken += 1
            do {
                let parsed = try Self.parsed(arguments)
                if parsed != plain { differences.append("\(arguments): \(String(describing: parsed)) != \(plain)") }
            } catch {
                differences.append("\(arguments): ArgumentParser threw \(error)")
            }
        }
        return (taken, left, differences)
    }
}
