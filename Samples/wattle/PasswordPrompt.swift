#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Where the CLI takes a password it was not given: `WATTLE_PASSWORD` (or the variable asked
/// for), else the terminal (asked without echo, on `/dev/tty`: standard input may be a
/// request's body), else, where standard input is not a request's body, its first line.
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
        // On the terminal (getpass reads /dev/tty): when standard input is one, or is a
        // request's body while the process has a terminal (`wattle -a USER PUT URL < body`).
        // Standard input that may hold the password (`echo … | wattle auth login`) is read below.
        if FileHandleOutput.isTerminal(0) || (!readsStandardInput && hasControllingTerminal()),
            let entered = getpass(prompt)
        {
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

    /// Whether the process has a terminal to ask on (`/dev/tty` opens).
    private static func hasControllingTerminal() -> Bool {
        let descriptor = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        close(descriptor)
        return true
    }
}
