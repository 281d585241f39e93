/// Where the `wattle` command line holds secrets, so the CLI can overwrite them in its own
/// argument vector once it has copied its arguments: `ps` and `/proc/PID/cmdline` then show
/// `*`s, as curl does for `-u USER:PASSWORD`.
///
/// The secrets: the value of `--password` (`auth login`) and of `--refresh-token` (`auth
/// set-token`; `-` is not one), the password of `-a`/`--auth USER:PASSWORD` (the part after
/// the first colon; the user name stays readable), and the password of a URL's user-info
/// (`https://user:password@host/`, a request's URL or `--proxy`'s). Each is found as ArgumentParser reads it:
/// `--name VALUE` or `--name=VALUE`, and `-a` alone or last in a group of short flags (`-va
/// USER:PASSWORD`). Nothing after `--` is an option. The access token `auth set-token` takes as an
/// argument is not found (the command's other options decide which argument it is): `-` reads
/// it from standard input instead.
///
/// Until the CLI overwrites them, for the first milliseconds of the process, the secrets are
/// readable; the environment (`WATTLE_PASSWORD`), the prompt and standard input never show them.
public enum SecretArguments {
    /// One secret: its argument's index in the list given, and its bytes in that argument's
    /// UTF-8.
    public struct Span: Equatable, Sendable {
        /// The argument's index.
        public var argument: Int
        /// The first byte of the secret.
        public var offset: Int
        /// Just past its last byte; nil: the argument's end.
        public var end: Int?

        /// Creates a span.
        public init(argument: Int, offset: Int, end: Int? = nil) {
            self.argument = argument
            self.offset = offset
            self.end = end
        }
    }

    /// The secrets in `arguments` (the process's arguments without its path, as bytes: the
    /// offsets are those of the argument vector's own bytes).
    public static func spans(in arguments: [[UInt8]]) -> [Span] {
        var spans: [Span] = []
        var index = 0
        var optionsEnded = false
        while index < arguments.count {
            let argument = arguments[index]
            if !optionsEnded, argument == Array("--".utf8) {
                optionsEnded = true
            } else if !optionsEnded, let kind = valueOption(argument) {
                // The value is the next argument.
                if index + 1 < arguments.count, let offset = secretOffset(in: arguments[index + 1], kind: kind) {
                    spans.append(Span(argument: index + 1, offset: offset))
                    index += 1
                }
            } else if !optionsEnded, let equals = argument.firstIndex(of: UInt8(ascii: "=")),
                argument.starts(with: Array("--".utf8)), let kind = longOption(Array(argument[2..<equals]))
            {
                if let offset = secretOffset(in: Array(argument[(equals + 1)...]), kind: kind) {
                    spans.append(Span(argument: index, offset: equals + 1 + offset))
                }
            } else if let password = urlPassword(in: argument) {
                spans.append(Span(argument: index, offset: password.lowerBound, end: password.upperBound))
            }
            index += 1
        }
        return spans
    }

    /// The password of a URL's user-info (`scheme://user:password@host/…`), anywhere in the
    /// argument (a URL, or an option's value such as `--proxy=…`): the bytes between the
    /// first colon after `://` and the authority's last `@`.
    private static func urlPassword(in argument: [UInt8]) -> Range<Int>? {
        let separator = Array("://".utf8)
        guard argument.count > separator.count,
            let start = (0...(argument.count - separator.count)).first(where: {
                argument[$0..<($0 + separator.count)].elementsEqual(separator)
            })
        else { return nil }
        let authorityStart = start + separator.count
        let authorityEnd =
            argument[authorityStart...].firstIndex {
                $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#")
            }
            ?? argument.count
        let authority = argument[authorityStart..<authorityEnd]
        guard let at = authority.lastIndex(of: UInt8(ascii: "@")),
            let colon = authority[..<at].firstIndex(of: UInt8(ascii: ":")), colon + 1 < at
        else { return nil }
        return (colon + 1)..<at
    }

    /// What an option's value holds.
    private enum Kind {
        /// All of it is secret.
        case whole
        /// `USER:PASSWORD`: the part after the first colon is.
        case password
    }

    /// The option whose value is the next argument: `--password`, `--refresh-token`, `--auth`,
    /// or `-a` alone or last in a group of short flags.
    private static func valueOption(_ argument: [UInt8]) -> Kind? {
        if argument.starts(with: Array("--".utf8)) { return longOption(Array(argument.dropFirst(2))) }
        guard argument.count >= 2, argument[0] == UInt8(ascii: "-"), argument.last == UInt8(ascii: "a"),
            argument.dropFirst().allSatisfy({ (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) })
        else { return nil }
        return .password
    }

    private static func longOption(_ name: [UInt8]) -> Kind? {
        switch String(decoding: name, as: UTF8.self) {
        case "password", "refresh-token": .whole
        case "auth": .password
        default: nil
        }
    }

    /// Where the secret starts in an option's value, or nil when it holds none (empty, `-`, or
    /// a user name with no colon).
    private static func secretOffset(in value: [UInt8], kind: Kind) -> Int? {
        switch kind {
        case .whole:
            return value.isEmpty || value == [UInt8(ascii: "-")] ? nil : 0
        case .password:
            guard let colon = value.firstIndex(of: UInt8(ascii: ":")), colon + 1 < value.count else { return nil }
            return colon + 1
        }
    }
}
