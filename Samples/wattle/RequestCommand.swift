import ArgumentParser
import Synchronization
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Wattle
import WattleCLIKit

/// `wattle [METHOD] URL [ITEM ...]`
struct RequestCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "request",
        abstract: "Send a request: wattle [METHOD] URL [ITEM ...]")

    @Argument(help: "[METHOD] URL [ITEM ...]")
    var words: [String] = []

    @OptionGroup var connection: ConnectionOptions

    @Flag(name: [.short, .long], help: "Print the request and the response status line and headers on stderr.")
    var verbose = false

    @Option(name: [.short, .customLong("output")], help: "Save the body to FILE (streamed, with progress on a terminal).")
    var output: String?

    @Flag(help: "Follow redirects (by default a 3xx is shown and exits with 3).")
    var follow = false

    @Flag(name: [.short, .long], help: "Send body fields as a form: URL-encoded, or multipart with name@file uploads.")
    var form = false

    @Flag(name: .customLong("ignore-stdin"), help: "Never read the body from a redirected standard input.")
    var ignoreStdin = false

    func run() async throws {
        do {
            let code = try await send()
            if code != 0 { throw ExitCode(code) }
        } catch let error as CLIError {
            printError(error.description)
            throw ExitCode(ExitStatus.usageOrOther)
        } catch let error as WattleError {
            switch error {
            case .untrustedCertificate(let host, _), .pinMismatch(let host):
                printError("\(error.description) From the CLI: --allow-self-signed \(host), or --pin \(host)=sha256//… (see wattle pin).")
            default:
                printError(error.description)
            }
            throw ExitCode(ExitStatus.forError(error))
        }
    }

    /// Sends the request and prints the outcome; returns the exit code.
    func send() async throws -> Int32 {
        var words = self.words
        guard !words.isEmpty else { throw CLIError.usage("missing URL: wattle [METHOD] URL [ITEM ...]") }
        var method: HTTPMethod?
        if words.count >= 2, words[0].allSatisfy({ $0.isUppercase && $0.isLetter }) {
            method = HTTPMethod(rawValue: words.removeFirst())
        }
        let endpoint = words.removeFirst()
        let items = try words.map { word in
            do { return try RequestItem.parse(word) } catch let error as RequestItemError { throw CLIError.usage(error.message) }
        }
        var request = Request(endpoint)
        for item in items {
            switch item {
            case .query(let name, let value): request.query.append(name, value)
            case .header(let name, let value): request.headers.add(name: name, value: value)
            default: continue
            }
        }
        // Like httpie, a redirected standard input is the body; only for a method given as one
        // that takes a body, so that a script's `wattle URL` never waits on an open pipe.
        let takesStandardInput =
            !ignoreStdin && method.map { [.post, .put, .patch].contains($0) } == true && InputFile.standardInputHasData
        let body = try RequestBodyItems.body(for: items, form: form, readStandardInput: takesStandardInput)
        request.method = method ?? (body == nil ? .get : .post)
        if let body { request.body = body }

        var configuration = try connection.configuration(origin: try connection.origin(of: endpoint), createKeychain: false)
        if follow { configuration.redirects = .follow(maximumHops: 10) }
        let session = Session(configuration: configuration)
        if verbose { printRequest(request, session: session) }

        let outcome = await perform(request, session: session)
        guard case .success(let response) = outcome else {
            guard case .failure(let error) = outcome, case .httpStatus(let failed) = error else {
                if case .failure(let error) = outcome { throw error }
                return ExitStatus.usageOrOther
            }
            if verbose { printResponseHead(failed) }
            printBody(failed)
            printError("HTTP \(failed.statusCode) from \(failed.url.absoluteString)")
            return ExitStatus.forStatus(failed.statusCode)
        }
        if verbose { printResponseHead(response) }
        if output == nil { printBody(response) }
        return ExitStatus.success
    }

    /// Sends, or downloads with `-o`, and returns the response or the error.
    private func perform(_ request: Request, session: Session) async -> Result<Response, WattleError> {
        do {
            guard let output else { return .success(try await session.send(request)) }
            let bar = FileHandleOutput.isTerminal(2) ? ProgressBar() : nil
            let response = try await session.download(request, to: URL(fileURLWithPath: output)) { bar?.update($0) }
            bar?.finish()
            return .success(response)
        } catch {
            return .failure(error)
        }
    }

    private func printRequest(_ request: Request, session: Session) {
        var lines = ["\(request.method) \((try? request.url(relativeTo: session.configuration.baseURL))?.absoluteString ?? request.endpoint)"]
        for field in request.headers { lines.append("\(field.name): \(field.value)") }
        FileHandleOutput.write(lines.joined(separator: "\n") + "\n\n", to: 2)
    }

    private func printResponseHead(_ response: Response) {
        let version = response.metrics.httpVersion.isEmpty ? "1.1" : response.metrics.httpVersion
        var text = "HTTP/\(version) \(response.statusCode)\n"
        if response.headers.count > 0 { text += response.headers.description + "\n" }
        FileHandleOutput.write(text + "\n", to: 2)
    }

    private func printBody(_ response: Response) {
        let terminal = FileHandleOutput.isTerminal(1)
        if terminal, let pretty = JSONPrinter.pretty(response.data, colours: true) {
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

/// A one-line progress bar on stderr.
final class ProgressBar: Sendable {
    private let lastDraw = Mutex(ContinuousClock.now - .seconds(1))

    func update(_ progress: DownloadProgress) {
        lastDraw.withLock { lastDraw in
            let now = ContinuousClock.now
            guard now - lastDraw >= .milliseconds(100) else { return }
            lastDraw = now
            draw(progress)
        }
    }

    func finish() { FileHandleOutput.write("\n", to: 2) }

    private func draw(_ progress: DownloadProgress) {
        let megabytes = Double(progress.receivedBytes) / 1_048_576
        if let fraction = progress.fractionCompleted {
            let width = 30
            let filled = Int(fraction * Double(width))
            let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
            let digits = Decimals.string(fraction * 100, places: 0)
            let percent = String(repeating: " ", count: max(0, 3 - digits.count)) + digits
            FileHandleOutput.write("\r[\(bar)] \(percent)% \(Decimals.string(megabytes, places: 1)) MB", to: 2)
        } else {
            FileHandleOutput.write("\r\(Decimals.string(megabytes, places: 1)) MB", to: 2)
        }
    }
}
