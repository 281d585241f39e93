import ArgumentParser
import Synchronization
import Wattle
import WattleCLIKit
import WattleKeychain

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// One `wattle [METHOD] URL [ITEM ...]` request: the words and options as plain values, and the
/// code that sends it and prints the outcome.
struct RequestInvocation: Equatable, Sendable {
    /// `[METHOD] URL [ITEM ...]`.
    var words: [String]
    /// The connection options.
    var connection = ConnectionSettings()
    /// `-v`, `--verbose`.
    var verbose = false
    /// `-o`, `--output`.
    var output: String?
    /// `-c`, `--continue`: a resumable download (with `-o`).
    var continueDownload = false
    /// `--follow`.
    var follow = false
    /// `--max-redirects`: how many redirects `--follow` follows (10 when not given).
    var maxRedirects: Int?
    /// `-f`, `--form`.
    var form = false
    /// `--ignore-stdin`.
    var ignoreStdin = false
    /// `-S`, `--stream`.
    var stream = false
    /// `-a`, `--auth`: `USER[:PASSWORD]`.
    var auth: String?
    /// `--session`: the name of the cookie jar kept for the URL's origin.
    var session: String?
    /// `-p`, `--print`: the letters of what goes to standard output (`PrintSelection`).
    var printParts: String?
    /// `--offline`: print the request, send nothing.
    var offline = false

    /// A request ready to go: what `prepare()` builds before anything is sent.
    struct Prepared: Sendable {
        /// The request to send.
        var request: Request
        /// The session that sends it.
        var session: Session
        /// With `-v`, whether the request is printed before it is sent, as it is built: its
        /// origin is not the base URL's, so the session's `willSend` hook, which prints the
        /// requests to that origin as they go out, does not see it.
        var printsRequestFirst = false
        /// With `--offline`, the transport that prints the request instead of sending it.
        var offline: OfflineTransport?
        /// With `--print`, claimed by whichever prints the request first: printed as built
        /// (`printsRequestFirst`) or by the `willSend` hook, never both.
        var printedOnce: FirstTime?
    }

    /// What `--print` (or `--offline`) sends to standard output; nil for the usual output.
    func printSelection() throws(CLIError) -> PrintSelection? {
        guard let printParts else { return offline ? .request : nil }
        return try PrintSelection(parsing: printParts)
    }

    /// Whether the response's body goes to standard output (unless `-o` takes it).
    private var printsResponseBody: Bool { (try? printSelection())?.responseBody ?? true }

    /// Sends the request, prints the outcome, and throws `ExitCode` for any exit status but 0.
    func run() async throws {
        let prepared: Prepared
        do { prepared = try prepare() } catch { throw Self.reported(error) }
        if let failure = await finish(prepared) { throw failure }
    }

    /// Sends a prepared request and prints the outcome; returns the error to leave with (an
    /// `ExitCode` for any exit status but 0, see `reported(_:)`), or nil.
    func finish(_ prepared: Prepared) async -> (any Error)? {
        do {
            let code = try await send(prepared)
            return code == 0 ? nil : ExitCode(code)
        } catch {
            return Self.reported(error)
        }
    }

    /// Prints `error` when it is the command's own (a usage error or a failed request) and
    /// returns the `ExitCode` to leave with; any other error is returned as it is.
    static func reported(_ error: any Error) -> any Error {
        switch error {
        case let error as CLIError:
            printError(error.description)
            return ExitCode(ExitStatus.usageOrOther)
        case let error as WattleError:
            switch error {
            case .untrustedCertificate(let host, _):
                printError(
                    "\(error.description) From the CLI: --cacert FILE (its CA), --allow-self-signed \(host), or --pin \(host)=sha256//… (see wattle pin)."
                )
            case .pinMismatch(let host):
                // Not the allowlist: a pin holds on an allowlisted host too, and dropping the pin
                // to get through would undo the check that may just have caught an interception.
                printError("\(error.description) From the CLI: see the server's key with wattle pin \(host).")
            case .cancelled where Interruption.exitStatus != nil:
                // Ctrl-C: the shell's status says it, and there is nothing more to say.
                return ExitCode(Interruption.exitStatus ?? ExitStatus.usageOrOther)
            default:
                // The library's advice names its settings; the CLI's options are what a user of it has.
                printError(described(error))
            }
            return ExitCode(ExitStatus.forError(error))
        case let error as KeychainFileError:
            // Not a usage error: the keychain (its file, its key file) cannot be used.
            printError(error.description)
            return ExitCode(ExitStatus.usageOrOther)
        case let error as KeychainError:
            printError("The keychain: \(error.description)")
            return ExitCode(ExitStatus.usageOrOther)
        default:
            return error
        }
    }

    /// `error`'s description, and the CLI's way to act on it where the description names a
    /// library setting.
    static func described(_ error: WattleError) -> String {
        [error.description, cliHint(for: error)].compactMap { $0 }.joined(separator: " ")
    }

    /// The CLI's way to act on `error`, where the library's description names a setting.
    static func cliHint(for error: WattleError) -> String? {
        switch error {
        case .timedOut(.connect, _, _): "From the CLI: --connect-timeout SECONDS."
        case .timedOut(.total, _, _): "From the CLI: --timeout SECONDS."
        case .timedOut(.stall, _, _): "From the CLI: --stall-timeout SECONDS (0: none)."
        case .invalidURL(_, let reason) where reason.contains("relative"):
            "From the CLI: give the URL with its scheme (http:// or https://), or --base-url."
        case .responseTooLarge: "From the CLI: -o FILE, or redirect the output (> FILE), to write a body of any size."
        default: nil
        }
    }

    /// Whether a word is a standard method in lower case (a `switch`: no set built at start-up).
    static func isLowerCaseMethod(_ word: String) -> Bool {
        switch word {
        case "get", "head", "post", "put", "patch", "delete", "options": true
        default: false
        }
    }

    /// Builds the request from the words and the session that sends it (reading any body files
    /// and standard input), without sending anything.
    func prepare() throws -> Prepared {
        var words = self.words
        guard !words.isEmpty else { throw CLIError.usage("missing URL: wattle [METHOD] URL [ITEM ...]") }
        var method: HTTPMethod?
        // An upper-case word is a method (any token: PROPFIND too); as httpie, a standard method
        // in lower case is one as well (`wattle post URL`).
        if words.count >= 2, words[0].allSatisfy({ $0.isUppercase && $0.isLetter }) {
            method = HTTPMethod(rawValue: words.removeFirst())
        } else if words.count >= 2, Self.isLowerCaseMethod(words[0]) {
            method = HTTPMethod(rawValue: words.removeFirst().uppercased())
        }
        // httpie's `:3000/path`, and with no base URL a host without a scheme, are http://.
        let endpoint = EndpointShorthand.expanded(words.removeFirst(), hasBaseURL: connection.resolvedBaseURL != nil)
        if continueDownload, output == nil { throw CLIError.usage("--continue resumes a download: it needs -o FILE") }
        if stream, output != nil {
            throw CLIError.usage("--stream prints the body as it arrives, -o writes it to a file: give one of the two")
        }
        let printing = try printSelection()
        if printing != nil, verbose {
            throw CLIError.usage(
                "-v prints the heads on standard error, \(offline ? "--offline" : "--print") chooses what goes to standard output: give one of the two"
            )
        }
        if offline, output != nil { throw CLIError.usage("--offline sends nothing, so -o has no body to save") }
        if offline, session != nil {
            throw CLIError.usage("--offline reads nothing from the keychain, so --session's cookies would not be shown")
        }
        if printing?.responseBody == true, output != nil {
            throw CLIError.usage("--print b prints the body, -o writes it to a file: leave b out of --print with -o")
        }
        if let maxRedirects {
            guard follow else { throw CLIError.usage("--max-redirects limits --follow: give --follow too") }
            guard maxRedirects >= 1 else {
                throw CLIError.usage(
                    "--max-redirects must be 1 or more, not \(maxRedirects) (without --follow none is followed)")
            }
        }
        let items = try words.map { word in
            do { return try RequestItem.parse(word) } catch let error as RequestItemError {
                throw CLIError.usage(error.message)
            }
        }
        var request = Request(endpoint)
        var removesCookies = false
        for item in items {
            switch item {
            case .query(let name, let value): request.query.append(name, value)
            // As httpie: `Name:` removes the fields before it and omits the header; a later
            // `Name:value` or `Name;` sends it after all.
            case .header(let name, let value):
                request.omittedHeaders.removeAll { $0.lowercased() == name.lowercased() }
                request.headers.add(name: name, value: value)
            case .removedHeader(let name) where name.lowercased() == "cookie":
                // Without --session no cookie is sent but the items'; with it, the jar's are
                // libcurl's to add (refused below).
                request.headers.remove(name)
                removesCookies = true
            case .removedHeader(let name):
                request.headers.remove(name)
                if !request.omittedHeaders.contains(where: { $0.lowercased() == name.lowercased() }) {
                    request.omittedHeaders.append(name)
                }
            default: continue
            }
        }
        if let auth {
            guard !request.headers.contains("Authorization"), !Self.omitsAuthorization(request) else {
                throw CLIError.usage("-a and an Authorization header item both set the credentials: give one")
            }
            request.headers["Authorization"] = try Self.basicAuthorization(auth)
        }
        // Like httpie, a redirected standard input is the body; only for a method given as one
        // that takes a body, so that a script's `wattle URL` never waits on an open pipe.
        let takesStandardInput =
            !ignoreStdin && method.map { [.post, .put, .patch].contains($0) } == true && InputFile.standardInputHasData
        // Bytes on standard input beside body items would be dropped without a word: refused, as
        // httpie does (checked without reading, so an open pipe with nothing in it is no body).
        if !ignoreStdin, items.contains(where: \.isBody), !items.contains(where: \.readsStandardInput),
            InputFile.standardInputHasPendingBytes
        {
            throw CLIError.usage(
                "standard input holds a body, and body items were given too: send one of the two (--ignore-stdin sends the items)"
            )
        }
        let body = try RequestBodyItems.body(for: items, form: form, readStandardInput: takesStandardInput)
        request.method = method ?? (body == nil ? .get : .post)
        if let body { request.body = body }
        // A JSON body made of items asks for JSON back, as httpie's does: an API that answers
        // `*/*` with HTML or XML answers JSON. An `Accept` item (or `Accept:`) decides instead.
        if !form, items.contains(where: { $0.isBody && !$0.isWholeBody }), !request.headers.contains("Accept"),
            !request.omittedHeaders.contains(where: { $0.lowercased() == "accept" })
        {
            request.headers["Accept"] = "application/json, */*;q=0.5"
        }

        let origin = try connection.origin(of: endpoint)
        // `--offline` sends nothing: no token, cookie or client certificate is read for it.
        var configuration = try connection.configuration(origin: origin, createKeychain: false, sending: !offline)
        if let session {
            if removesCookies, !request.headers.contains("Cookie") {
                throw CLIError.usage(
                    "Cookie: cannot leave out the cookies of --session \(session): run without --session to send none")
            }
            configuration.cookies = .keychain(
                try connection.cookieJar(named: session, origin: origin, configuration: configuration))
        }
        if follow { configuration.redirects = .follow(maximumHops: maxRedirects ?? 10) }
        // A download or a stream has no total timeout unless its request sets one: --timeout
        // is the request's, so that it bounds those too.
        if let total = configuration.timeouts.total, connection.timeout != nil { request.timeout = total }
        // A stream waits for the server as `tail -f` (and `curl -N`) do, however long it is
        // silent, until --timeout or Ctrl-C.
        if stream, output == nil, connection.stallTimeout == nil { configuration.timeouts.stall = nil }
        // -v prints each request to the base URL's origin (the URL's own, unless --base-url
        // or WATTLE_BASE_URL names another) as it goes out, after the session has added the
        // kept token, the user agent, the body's type and the defaults; a request to another
        // origin is printed as built, before it is sent.
        if offline {
            // As the session would send it; the configuration has no authenticator (`sending:
            // false`), so no stored token is read or refreshed.
            let transport = OfflineTransport(printing: printing ?? .request)
            var prepared = Prepared(
                request: request, session: Session(configuration: configuration, transport: transport))
            prepared.offline = transport
            return prepared
        }
        var printsRequestFirst = false
        var printedOnce: FirstTime?
        if let shown = requestPrinting(printing) {
            // The hook sees the session's own token calls too (a refresh, a client's token
            // request: their bodies hold the refresh token or the client secret). `-v` shows
            // every request's head on stderr; `--print` shows the request asked for, as httpie.
            // (Once: sent again after a refresh, it is the same request.)
            let asked = verbose ? nil : AskedRequest(request, url: try? request.url(relativeTo: configuration.baseURL))
            let once = FirstTime()
            printedOnce = verbose ? nil : once
            configuration.willSend = { sent in
                if let asked {
                    guard asked.matches(sent), once.claim() else { return [:] }
                }
                RequestPrinter.print(sent, head: shown.head, body: shown.body, to: shown.descriptor)
                return [:]
            }
            let base = (configuration.baseURL ?? origin).absoluteString
            printsRequestFirst = (try? connection.origin(of: base)) != origin
        }
        var prepared = Prepared(request: request, session: Self.session(configuration, for: request))
        prepared.printsRequestFirst = printsRequestFirst
        prepared.printedOnce = printedOnce
        return prepared
    }

    /// What of the request is printed and where: its head on stderr for `-v`, what `--print`'s
    /// `H` and `B` choose on stdout; nil for nothing.
    private func requestPrinting(_ printing: PrintSelection?) -> (head: Bool, body: Bool, descriptor: Int32)? {
        if verbose { return (true, false, 2) }
        guard let printing, printing.printsRequest else { return nil }
        return (printing.requestHead, printing.requestBody, 1)
    }

    /// Whether an `Authorization:` item left the header out: no credentials go, so no stored
    /// token is read.
    private static func omitsAuthorization(_ request: Request) -> Bool {
        request.omittedHeaders.contains { $0.lowercased() == "authorization" }
    }

    /// The `Authorization` value of `-a USER[:PASSWORD]`: the password after the first colon,
    /// else `PasswordPrompt`'s (never standard input, which may be the body). As a header of the
    /// request, it goes to the URL's origin only: a redirect elsewhere drops it.
    static func basicAuthorization(_ auth: String) throws -> String {
        let username: String
        let password: String
        // By scalar, as the server splits: a colon followed by a combining mark is one `Character`.
        let scalars = auth.unicodeScalars
        if let colon = scalars.firstIndex(of: ":") {
            username = String(scalars[..<colon])
            password = String(scalars[scalars.index(after: colon)...])
        } else {
            username = auth
            password = try PasswordPrompt.password(
                readsStandardInput: false,
                missing:
                    "no password for -a: give -a USER:PASSWORD (USER: for none), set WATTLE_PASSWORD, or run it on a terminal to be asked"
            )
        }
        do {
            return try AuthToken.basic(username: username, password: password).authorizationValue
        } catch {
            guard case .invalidHeader(_, let reason) = error else { throw error }
            throw CLIError.usage("-a: \(reason)")
        }
    }

    /// The session, with the keychain's token for the origin read here, on the calling thread
    /// (the main thread, which then only waits): the session would read it on a thread of
    /// Swift's pool, started for that alone. When the read fails, the session reads it again
    /// and reports the error as it does for any program.
    ///
    /// A request with its own `Authorization` header, or credentials in its URL, sends no
    /// stored token, so none is read.
    private static func session(_ configuration: Configuration, for request: Request) -> Session {
        guard let store = ConnectionSettings.keychainTokenStore(of: configuration),
            !request.headers.contains("Authorization"), !omitsAuthorization(request),
            !UserInfo.isPresent(in: request.endpoint)
        else {
            return Session(configuration: configuration)
        }
        do {
            var token = try store.loadNow()
            // A client's session (`--token-path`) takes up only a token bound to that client.
            if let bound = configuration.authenticator?.store as? BoundTokenStore, token?.binding != bound.binding {
                token = nil
            }
            return Session(configuration: configuration, storedToken: token)
        } catch {
            return Session(configuration: configuration)
        }
    }

    /// Sends the prepared request and prints the outcome; returns the exit code.
    func send(_ prepared: Prepared) async throws -> Int32 {
        let (request, session) = (prepared.request, prepared.session)
        if let offline = prepared.offline {
            do {
                _ = try await session.send(request)
            } catch {
                // The transport printed the request and stopped the session; an error before it
                // (a header the session refuses, say) is reported.
                guard offline.hasPrinted else { throw error }
            }
            return ExitStatus.success
        }
        if prepared.printsRequestFirst, let shown = requestPrinting(try printSelection()),
            prepared.printedOnce?.claim() ?? true
        {
            RequestPrinter.print(
                request, baseURL: session.configuration.baseURL, head: shown.head, body: shown.body,
                to: shown.descriptor)
        }
        // To a file or a pipe the body is written as it arrives (`wattle URL > file`): a body
        // of any size, in constant memory, as with `-S`.
        // (A body not printed is not read either: the exchange stops after the head.)
        if output == nil, stream || !FileHandleOutput.isTerminal(1) || !printsResponseBody {
            return try await sendStreaming(request, session: session)
        }
        // `-o /dev/null`, a named pipe or a terminal: written through, as curl does (a download
        // is moved into place as a new file, which would replace it).
        if let output, let descriptor = try Self.openSpecialFile(output, resuming: continueDownload) {
            defer { close(descriptor) }
            return try await sendStreaming(request, session: session, to: descriptor)
        }

        let outcome = await perform(request, session: session)
        guard case .success(let response) = outcome else {
            guard case .failure(let error) = outcome, case .httpStatus(let failed) = error else {
                if case .failure(let error) = outcome { throw error }
                return ExitStatus.usageOrOther
            }
            return reportStatus(failed, error: error)
        }
        printHead(response)
        if output == nil, printsResponseBody { printBody(response) }
        return ExitStatus.success
    }

    /// Prints a non-2xx answer (head with `-v`, body, error line) and returns its exit code.
    private func reportStatus(_ failed: Response, error: WattleError) -> Int32 {
        // `wattle HEAD URL | grep -i etag` reads the head whatever the status.
        printHead(failed)
        if printsResponseBody { printBody(failed) }
        // The URL with credential-looking parts redacted; an unfollowed redirect also says, on
        // the same line, where it leads (httpie shows it in the headers it prints).
        var line = error.description
        if (300..<400).contains(failed.statusCode), let location = failed.headers["Location"] {
            let target = RedirectFollower.target(of: location, from: failed.url)?.absoluteString ?? location
            let shown = Redaction.fullURL(target)
            line += " It redirects to \(FileHandleOutput.isTerminal(2) ? TerminalText.escaped(shown) : shown)"
            // With --follow, a redirect left unfollowed is one that would resend the body to
            // another origin (a 307 or 308, a 301 or 302 after PUT): following does not help.
            line +=
                follow
                ? " (not followed: it would send the request's body to another origin)."
                : " (--follow follows redirects)."
        }
        printError(line)
        return ExitStatus.forStatus(failed.statusCode)
    }

    /// `--stream`: prints the body as it arrives, raw to a file or a pipe, and on a terminal
    /// line by line with control characters escaped (a stream cannot be checked whole first).
    /// A transfer that fails part-way leaves what arrived printed, then the error line.
    private func sendStreaming(_ request: Request, session: Session, to output: Int32 = 1) async throws -> Int32 {
        let stream: ResponseStream
        do {
            stream = try await session.stream(request)
        } catch .httpStatus(let failed) {
            return reportStatus(failed, error: .httpStatus(failed))
        }
        printHead(stream.response)
        // `--print` without `b`: the body stays unread, and the exchange ends with the stream.
        if self.output == nil, !printsResponseBody { return ExitStatus.success }
        do {
            // A write that fails (the reader of a pipe gone, `| head -1`) ends the stream, which
            // may never end by itself; the write has said why, and the run exits 1.
            if FileHandleOutput.isTerminal(output) {
                for try await line in stream.lines {
                    FileHandleOutput.write(TerminalText.escaped(line) + "\n", to: output)
                    if FileHandleOutput.hasOutputFailed { return ExitStatus.usageOrOther }
                }
            } else {
                for try await piece in stream {
                    FileHandleOutput.write(Array(piece), to: output)
                    if FileHandleOutput.hasOutputFailed { return ExitStatus.usageOrOther }
                }
            }
        } catch {
            printError(Self.described(error))
            return ExitStatus.forError(error)
        }
        return ExitStatus.success
    }

    /// An open descriptor for writing to `path` when it names (or links to) a device or a named
    /// pipe, which `-o` writes through, or an open descriptor of this process (`/dev/stdout`,
    /// `/dev/stderr`, `/dev/fd/N`, `/proc/self/fd/N`: written to as it is, never replaced);
    /// nil for a regular file, a folder or nothing there (the download handles those, and
    /// refuses the rest). `--continue` needs a file to resume.
    static func openSpecialFile(_ path: String, resuming: Bool) throws -> Int32? {
        if let number = inheritedDescriptor(named: path) {
            guard let inherited = writableInherited(number) else {
                throw CLIError.usage(
                    "\(path) is descriptor \(number), which this run was not given open for writing: give -o a file, or a descriptor opened for writing (1>file, 3>file)"
                )
            }
            if resuming {
                throw CLIError.usage("--continue needs a regular file to resume, and \(path) is not one")
            }
            let descriptor = fcntl(inherited, F_DUPFD_CLOEXEC, 3)
            guard descriptor >= 0 else {
                throw CLIError.failed("cannot write to \(path): \(String(cString: strerror(errno)))")
            }
            return descriptor
        }
        var info = stat()
        guard stat(path, &info) == 0, isWrittenThrough(info) else { return nil }
        if resuming {
            throw CLIError.usage("--continue needs a regular file to resume, and \(path) is not one")
        }
        let descriptor = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY)
        guard descriptor >= 0 else {
            throw CLIError.failed("cannot write to \(path): \(String(cString: strerror(errno)))")
        }
        // What was opened, not what was there a moment before (a regular file put in its place
        // would be written over from its start).
        guard fstat(descriptor, &info) == 0, isWrittenThrough(info) else {
            close(descriptor)
            throw CLIError.failed("\(path) changed while it was being opened")
        }
        return descriptor
    }

    /// A device or a named pipe.
    private static func isWrittenThrough(_ info: stat) -> Bool {
        let type = info.st_mode & S_IFMT
        return type == S_IFCHR || type == S_IFBLK || type == S_IFIFO
    }

    /// The open descriptor of this process that `path` names: `/dev/stdout` (1), `/dev/stderr`
    /// (2), `/dev/fd/N`, `/proc/self/fd/N`, `/proc/thread-self/fd/N` and the like, however
    /// spelled, found by where the path's links lead (the folder of its last link is this
    /// process's `fd` folder in `/proc`). Only a descriptor this process was given when it
    /// started (without close-on-exec: everything Wattle opens has it, such as the keychain's
    /// database) and open for writing is written to (see ``writableInherited(_:)``); nil for
    /// any other path.
    static func inheritedDescriptor(named path: String) -> Int32? {
        var current = path
        for _ in 0..<8 {
            let folder = DownloadDestination.parent(of: current)
            let name = current.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? current
            if let number = Int32(name), number >= 0, isOwnDescriptorFolder(folder) { return number }
            var info = stat()
            guard lstat(current, &info) == 0, info.st_mode & S_IFMT == S_IFLNK,
                let next = DownloadDestination.next(afterLink: current, in: folder)
            else { return nil }
            current = next
        }
        return nil
    }

    /// Whether `folder` is this process's (or one of its threads') `fd` folder in `/proc`.
    private static func isOwnDescriptorFolder(_ folder: String) -> Bool {
        guard let resolved = realpath(folder, nil) else { return false }
        defer { free(resolved) }
        let real = String(cString: resolved)
        let own = "/proc/\(getpid())/"
        return real == own + "fd" || (real.hasPrefix(own + "task/") && real.hasSuffix("/fd"))
    }

    /// `descriptor` when it was inherited (no close-on-exec) and is open for writing, and not
    /// a folder.
    private static func writableInherited(_ descriptor: Int32) -> Int32? {
        let flags = fcntl(descriptor, F_GETFD)
        let status = fcntl(descriptor, F_GETFL)
        var info = stat()
        guard flags >= 0, flags & FD_CLOEXEC == 0, status >= 0, status & O_ACCMODE != O_RDONLY,
            fstat(descriptor, &info) == 0, info.st_mode & S_IFMT != S_IFDIR
        else { return nil }
        return descriptor
    }

    /// Sends, or downloads with `-o`, and returns the response or the error.
    private func perform(_ request: Request, session: Session) async -> Result<Response, WattleError> {
        guard let output else {
            do {
                return .success(try await session.send(request))
            } catch {
                return .failure(error)
            }
        }
        let bar = FileHandleOutput.isTerminal(2) ? ProgressBar() : nil
        let destination = URL(fileURLWithPath: output)
        let resumable = continueDownload
        // A task of its own, for Ctrl-C to cancel (see Interruption), which watches before the
        // download starts.
        let cancel = Mutex<(@Sendable () -> Void)?>(nil)
        let interruption = Interruption { cancel.withLock { $0 }?() }
        defer { interruption.stop() }
        let download = Task { () async throws(WattleError) -> Response in
            try await session.download(request, to: destination, resumable: resumable) { bar?.update($0) }
        }
        cancel.withLock { $0 = { download.cancel() } }
        if Interruption.exitStatus != nil { download.cancel() }  // a signal came before the task
        let result = await withTaskCancellationHandler {
            await download.result
        } onCancel: {
            download.cancel()
        }
        // The error's line goes below the bar, not onto its end.
        bar?.finish(completed: (try? result.get()) != nil)
        // (`Task` erases the error's type: it is the download's, a `WattleError`.)
        return result.mapError { $0 as? WattleError ?? .cancelled }
    }

    /// Prints the status line and the headers (credentials redacted), on stderr for `-v`, and on
    /// stdout for a `HEAD` (whose answer is nothing else).
    private func printResponseHead(_ response: Response, to descriptor: Int32 = 2) {
        let version = response.metrics.httpVersion.isEmpty ? "1.1" : response.metrics.httpVersion
        var text = "HTTP/\(version) \(response.statusCode)\n"
        if response.headers.count > 0 {
            let lines = response.headers.description.split(separator: "\n", omittingEmptySubsequences: false)
            let shown =
                FileHandleOutput.isTerminal(descriptor)
                ? lines.map { TerminalText.escaped(String($0)) } : lines.map(String.init)
            text += shown.joined(separator: "\n") + "\n"
        }
        FileHandleOutput.write(text + (descriptor == 2 ? "\n" : ""), to: descriptor)
    }

    /// Prints the response's head where it goes: on stderr for `-v`; on stdout for `--print h`
    /// (a blank line after it when the body follows), or for a `HEAD` request, whose answer it
    /// is, when neither `-v` nor `--print` chose otherwise.
    private func printHead(_ response: Response) {
        if verbose {
            printResponseHead(response)
        } else if let printing = try? printSelection() {
            guard printing.responseHead else { return }
            printResponseHead(response, to: 1)
            if printing.responseBody, output == nil { FileHandleOutput.write("\n", to: 1) }
        } else if response.method == .head, output == nil {
            printResponseHead(response, to: 1)
        }
    }

    private func printBody(_ response: Response) {
        let terminal = FileHandleOutput.isTerminal(1)
        // Checked first: JSON strings may hold DEL and C1 controls (a CSI) raw.
        if terminal, TerminalText.isBinary(response.data) {
            // Text in the charset its Content-Type names (latin-1, windows-1252, UTF-16), as
            // httpie shows it, written in UTF-8 for the terminal; anything else is a note.
            if let text = response.string, !text.isEmpty, !TerminalText.isBinary(Data(text.utf8)) {
                FileHandleOutput.write(text + (text.hasSuffix("\n") ? "" : "\n"), to: 1)
            } else {
                FileHandleOutput.write(TerminalText.binaryNote(byteCount: response.data.count) + "\n", to: 1)
            }
        } else if terminal, let pretty = JSONPrinter.pretty(response.data, colours: true) {
            FileHandleOutput.write(pretty + "\n", to: 1)
        } else {
            FileHandleOutput.write(Array(response.data), to: 1)
            if terminal, response.data.last != UInt8(ascii: "\n"), !response.data.isEmpty {
                FileHandleOutput.write("\n", to: 1)
            }
        }
    }

    static func jsonString(_ value: String) -> String {
        String(decoding: (try? JSONEncoder().encode(value)) ?? Data("\"\"".utf8), as: UTF8.self)
    }
}

extension RequestInvocation {
    /// The request of a plain `wattle [METHOD] URL [ITEM ...]`, without ArgumentParser; nil when the
    /// arguments need it.
    ///
    /// ArgumentParser reflects over the commands' properties on every run, ~1.5 ms of a ~10 ms
    /// one-shot request. Arguments with no option and no command name parse to `RequestCommand`
    /// with every option at its default and the arguments as its words, which is this (the
    /// tests compare the two on many argument lists). Anything else (an argument starting with
    /// `-`, so any option, `--`, `-` or `--help`; a command name or `help` anywhere; no
    /// argument at all) is left to ArgumentParser, whose help and errors stay the only ones.
    init?(plainArguments arguments: [String]) {
        guard !arguments.isEmpty, !arguments.contains(where: { $0.hasPrefix("-") }) else { return nil }
        // An array: the first Set<String> builds its generic type metadata from a mangled name, ~0.1 ms.
        var reserved = ["help"]
        for command in WattleCLI.configuration.subcommands {
            // `_commandName` is the name ArgumentParser matches: the configuration's, else one
            // derived from the type's name.
            reserved.append(command._commandName)
            reserved += command.configuration.aliases
        }
        guard !arguments.contains(where: reserved.contains) else { return nil }
        self.init(words: arguments)
    }
}
