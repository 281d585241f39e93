import Wattle

/// Where the `wattle` command line holds secrets, so the CLI can overwrite them in its own
/// argument vector once it has copied its arguments: `ps` and `/proc/PID/cmdline` then show
/// `*`s, as curl does for `-u USER:PASSWORD`.
///
/// The secrets: the value of `--password` (`auth login`) and of `--refresh-token` (`auth
/// set-token`; `-` is not one), the password of `-a`/`--auth USER:PASSWORD` (the part after
/// the first colon; the user name stays readable), and the password of a URL's user-info
/// (`https://user:password@host/`, a request's URL, or `--proxy`'s with or without a scheme).
/// Each is found as ArgumentParser reads it: `--name VALUE`, `--name=VALUE`, `-a VALUE`,
/// `-a=VALUE`, and in a group of short flags, where each flag taking a value takes the next
/// argument in turn (`-va VALUE`, `-oa FILE VALUE`). Nothing after `--` is an option. The
/// access token `auth set-token` takes as an argument is not found here (the command's other
/// options decide which argument it is): the command hides it once parsed, a little later
/// (`-` reads it from standard input instead, never in the process list).
///
/// Until the CLI overwrites them, for the first milliseconds of the process, the secrets are
/// readable; the environment (`WATTLE_PASSWORD`), the prompt and standard input never show them.
public enum SecretArguments {
    /// One secret: its argument's index in the list given, and its bytes in that argument's
    /// UTF-8.
    public struct Span: Equatable, Sendable {
        /// The argument's index.
        public var argument: Int
        /// The secret's bytes.
        public var bytes: Range<Int>

        /// Creates a span.
        public init(argument: Int, bytes: Range<Int>) {
            self.argument = argument
            self.bytes = bytes
        }
    }

    /// The secrets in `arguments` (the process's arguments without its path, as bytes: the
    /// offsets are those of the argument vector's own bytes).
    public static func spans(in arguments: [[UInt8]]) -> [Span] {
        var spans: [Span] = []
        var index = 0
        var optionsEnded = false
        let dash = UInt8(ascii: "-")
        /// Adds the secret of `value`, an option's value or an operand, a slice of argument `argument`.
        func add(_ kind: Kind, in value: ArraySlice<UInt8>, argument: Int) {
            if let secret = secret(in: value, kind: kind) { spans.append(Span(argument: argument, bytes: secret)) }
        }
        while index < arguments.count {
            let argument = arguments[index]
            let equals = argument.firstIndex(of: UInt8(ascii: "="))
            if optionsEnded || argument.count < 2 || argument[0] != dash {
                // An operand: a URL's user-info may hold a password.
                add(.operand, in: argument[...], argument: index)
            } else if argument == [dash, dash] {
                optionsEnded = true
            } else if argument[1] == dash {
                // --name=VALUE, or --name VALUE.
                if let equals {
                    // An option this does not know (`--base-url=URL`): its value may be a URL.
                    add(longOption(argument[2..<equals]) ?? .operand, in: argument[(equals + 1)...], argument: index)
                } else if let kind = longOption(argument[2...]), index + 1 < arguments.count {
                    index += 1
                    add(kind, in: arguments[index][...], argument: index)
                }
            } else if equals == 2 {
                // -a=VALUE: ArgumentParser reads the value after the `=`.
                if let kind = shortOption(argument[1]) { add(kind, in: argument[3...], argument: index) }
            } else if let attached = attachedValue(argument) {
                // -aUSER:PASSWORD, getopt's attached value, which ArgumentParser does not read:
                // it reports the argument as unknown, with its text.
                add(.password, in: attached, argument: index)
            } else {
                // -a VALUE, or a group of short flags (-va VALUE, -oa FILE VALUE): each that takes a
                // value takes the next argument, in order.
                for letter in argument.dropFirst() {
                    guard let kind = shortOption(letter), index + 1 < arguments.count else { continue }
                    index += 1
                    add(kind, in: arguments[index][...], argument: index)
                }
            }
            index += 1
        }
        return spans
    }

    /// The text after `-a` in a short-option argument that cannot be a group of flags (a
    /// colon is no option letter): `-abob:pw`, `-va bob:pw` written as `-vabob:pw`.
    private static func attachedValue(_ argument: [UInt8]) -> ArraySlice<UInt8>? {
        guard argument.contains(UInt8(ascii: ":")),
            let letter = argument.dropFirst().firstIndex(where: { shortOption($0) == .password }),
            letter + 1 < argument.count
        else { return nil }
        return argument[(letter + 1)...]
    }

    /// `message` with each secret of `arguments` (the process's arguments without its path)
    /// shown as `*`s wherever the argument holding it appears whole: for the text of
    /// ArgumentParser's errors, which quote an argument they could not read.
    public static func redacting(_ message: String, arguments: [String]) -> String {
        let bytes = arguments.map { Array($0.utf8) }
        var text = message
        for span in spans(in: bytes) {
            var hidden = bytes[span.argument]
            guard hidden.count > 1 else { continue }
            for offset in span.bytes.clamped(to: hidden.indices) { hidden[offset] = UInt8(ascii: "*") }
            text = text.replacing(arguments[span.argument], with: String(decoding: hidden, as: UTF8.self))
        }
        return text
    }

    /// What an option's value holds.
    private enum Kind: Equatable {
        /// All of it is secret.
        case whole
        /// `USER:PASSWORD`: the part after the first colon is.
        case password
        /// Maybe a URL: the password of its user-info is.
        case operand
        /// A proxy, maybe with no scheme (`user:password@host:port`): the same.
        case proxy
        /// Nothing secret (`-o FILE`).
        case plain
    }

    /// What the value of a long option holds, nil for a flag or an option this does not know
    /// (its value, if any, is then read as an operand).
    private static func longOption(_ name: ArraySlice<UInt8>) -> Kind? {
        switch String(decoding: name, as: UTF8.self) {
        case "password", "refresh-token": .whole
        case "auth": .password
        case "proxy": .proxy
        case "output": .plain
        default: nil
        }
    }

    /// What the value of a short option holds (`-a`, `-o`), nil for a flag.
    private static func shortOption(_ letter: UInt8) -> Kind? {
        switch letter {
        case UInt8(ascii: "a"): .password
        case UInt8(ascii: "o"): .plain
        default: nil
        }
    }

    /// The secret bytes of an option's value (indices of its argument), or nil when it holds
    /// none (empty, `-`, a user name with no colon, a URL with no password).
    private static func secret(in value: ArraySlice<UInt8>, kind: Kind) -> Range<Int>? {
        switch kind {
        case .plain:
            return nil
        case .whole:
            return value.isEmpty || value.elementsEqual([UInt8(ascii: "-")]) ? nil : value.indices
        case .password:
            guard let colon = value.firstIndex(of: UInt8(ascii: ":")), colon + 1 < value.endIndex else { return nil }
            return (colon + 1)..<value.endIndex
        case .operand:
            return urlPassword(in: value, schemeRequired: true)
        case .proxy:
            return urlPassword(in: value, schemeRequired: false)
        }
    }

    /// The password of a URL's user-info (`scheme://user:password@host/…`; without
    /// `schemeRequired`, the scheme may be left out, as `--proxy` allows): the bytes between the
    /// user-info's first colon and the authority's last `@`. (An operand needs the scheme: a
    /// body field `note=a:b@c` is no URL.)
    private static func urlPassword(in value: ArraySlice<UInt8>, schemeRequired: Bool) -> Range<Int>? {
        let separator = Array("://".utf8)
        var authorityStart = value.startIndex
        if let rest = UserInfo.afterMistypedScheme(in: String(decoding: value, as: UTF8.self)) {
            // `https:/bob:pw@host`, `https//bob:pw@host`: a mistyped URL still holds a password
            // (first: a `://` further on, in its query, starts no authority).
            authorityStart = value.startIndex + rest
        } else if value.count >= separator.count,
            let start = (value.startIndex...(value.endIndex - separator.count)).first(where: {
                value[$0..<($0 + separator.count)].elementsEqual(separator)
            })
        {
            authorityStart = start + separator.count
        } else if schemeRequired {
            return nil
        }
        let authority = value[authorityStart...].prefix {
            $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#")
        }
        guard let at = authority.lastIndex(of: UInt8(ascii: "@")),
            let colon = authority[..<at].firstIndex(of: UInt8(ascii: ":")), colon + 1 < at
        else { return nil }
        return (colon + 1)..<at
    }
}
