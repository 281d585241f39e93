#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Where the CLI takes a password it was not given: `WATTLE_PASSWORD` (or the variable asked
/// for), else the terminal
/// (asked without echo), else, where standard input is not a request's body, its first line.
enum PasswordPrompt {
    /// The password, or `CLIError.usage(missing)` when there is none to take. An empty line of
    /// standard input is a password only when `allowsEmpty` (an API key as the username
    /// takes none); at its end there is none.
    /// `variable` and `prompt` name another secret (a client certificate key's passphrase).
    static func password(
        readsStandardInput: Bool, allowsEmpty: Bool = false, variable: String = "WATTLE_PASSWORD",
        prompt: String = "Password: ", missing: String
    ) throws -> String {
        if let password = Environment[variable] { return password }
        if FileHandleOutput.isTerminal(0), let entered = getpass(prompt) { return String(cString: entered) }
        if readsStandardInput, let line = Swift.readLine(strippingNewline: true), allowsEmpty || !line.isEmpty { return line }
        throw CLIError.usage(missing)
    }
}
