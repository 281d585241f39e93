import ArgumentParser

/// `wattle [METHOD] URL [ITEM ...]`, as ArgumentParser parses it: every option and flag.
///
/// A plain `wattle [METHOD] URL [ITEM ...]`, with no option and no command name, skips the parse
/// and runs a `RequestInvocation` directly (see `RequestInvocation.init(plainArguments:)`).
struct RequestCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "request",
        abstract: "Send a request: wattle [METHOD] URL [ITEM ...]")

    @Argument(help: "[METHOD] URL [ITEM ...]")
    var words: [String] = []

    @OptionGroup var connection: ConnectionOptions

    @Flag(name: [.short, .long], help: "Print the request and the response status line and headers on stderr.")
    var verbose = false

    @Option(
        name: [.short, .customLong("output")],
        help: "Save the body to FILE (streamed, with progress on a terminal); - is standard output.")
    var output: String?

    @Flag(
        name: [.short, .customLong("continue")],
        help: """
            With -o: keep what arrived of a download that fails or is interrupted (beside FILE), and on the next \
            run ask only for the rest, if the server's file is still the same.
            """)
    var continueDownload = false

    @Flag(help: "Follow redirects (by default a 3xx is shown and exits with 3).")
    var follow = false

    @Option(
        name: .customLong("max-redirects"),
        help: "With --follow: follow at most this many redirects (default 10); one more is an error (exit 2).")
    var maxRedirects: Int?

    @Flag(name: [.short, .long], help: "Send body fields as a form: URL-encoded, or multipart with name@file uploads.")
    var form = false

    @Flag(name: .customLong("ignore-stdin"), help: "Never read the body from a redirected standard input.")
    var ignoreStdin = false

    @Option(
        name: [.short, .long],
        help: """
            HTTP Basic credentials, USER:PASSWORD (USER: for an empty password), sent to the URL's origin only. \
            A password given so stays in shell history (the process list shows *s once wattle starts): \
            with USER alone it is WATTLE_PASSWORD, else asked on the terminal.
            """)
    var auth: String?

    @Flag(
        name: [.customShort("S"), .long],
        help: """
            Print the body as it arrives (server-sent events, JSON lines): line by line, escaped, on a terminal. \
            Waits for the server however long it is silent, until --timeout or Ctrl-C.
            """)
    var stream = false

    @Option(
        help: """
            Keep cookies between runs under NAME, for the URL's origin: the jar's are sent, and those the server \
            sets are stored back, sealed in the keychain (as httpie's --session). wattle session clear NAME URL \
            forgets them.
            """)
    var session: String?

    @Option(
        name: [.short, .customLong("print")],
        help: """
            What to print on standard output, as httpie's --print: any of H (request head), B (request body), \
            h (response head), b (response body). Without it, the response body (a HEAD's head).
            """)
    var printParts: String?

    @Flag(
        help: """
            Build the request and print it (its head and body, or what --print H and B choose) without sending \
            it: nothing goes out, and no token or cookie is read from the keychain.
            """)
    var offline = false

    /// The parsed command as plain values.
    var invocation: RequestInvocation {
        RequestInvocation(
            // `-o -` is standard output, as in curl and httpie (not a file named `-`).
            words: words, connection: connection.settings, verbose: verbose, output: output == "-" ? nil : output,
            continueDownload: continueDownload, follow: follow, maxRedirects: maxRedirects, form: form,
            ignoreStdin: ignoreStdin, stream: stream, auth: auth, session: session, printParts: printParts,
            offline: offline)
    }

    func run() async throws {
        if continueDownload, output == "-" {
            throw RequestInvocation.reported(
                CLIError.usage("--continue resumes a download to a file: not with -o - (standard output)"))
        }
        try await invocation.run()
    }
}
