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
    /// With `confirming`, a password typed on the terminal is asked twice (one that will be
    /// kept, and cannot be checked until it is used). A line of standard input loses a
    /// trailing CR (a file written on Windows).
    static func password(
        readsStandardInput: Bool, allowsEmpty: Bool = false, variable: String = "WATTLE_PASSWORD",
        prompt: String = "Password: ", confirming: Bool = false, missing: String
    ) throws -> String {
        if let password = Environment[variable] { return password }
        if FileHandleOutput.isTerminal(0), let entered = getpass(prompt) {
            let password = String(cString: entered)
            if confirming {
                guard let again = getpass("Again: "), String(cString: again) == password else {
                    throw CLIError.usage("the two entries differ")
                }
            }
            return password
        }
        if readsStandardInput, var line = Swift.readLine(strippingNewline: true) {
            if line.hasSuffix("\r") { line.removeLast() }
            if allowsEmpty || !line.isEmpty { return line }
        }
        throw CLIError.usage(missing)
    }
}
