/// `--print WHAT` (`-p`), as httpie's: which parts of the exchange go to standard output, by
/// letter: `H` the request's head, `B` its body, `h` the response's head, `b` its body.
///
/// Without it a run prints the response's body (a `HEAD` request's head); `--offline` prints
/// the request's head and body.
struct PrintSelection: Equatable, Sendable {
    /// `H`: the request line and headers, as sent.
    var requestHead = false
    /// `B`: the request's body.
    var requestBody = false
    /// `h`: the status line and headers.
    var responseHead = false
    /// `b`: the response's body.
    var responseBody = false

    /// What `--offline` prints when `--print` is not given.
    static let request = PrintSelection(requestHead: true, requestBody: true)

    /// Whether any part of the request is printed.
    var printsRequest: Bool { requestHead || requestBody }

    init(requestHead: Bool = false, requestBody: Bool = false, responseHead: Bool = false, responseBody: Bool = false) {
        self.requestHead = requestHead
        self.requestBody = requestBody
        self.responseHead = responseHead
        self.responseBody = responseBody
    }

    /// Reads `--print`'s letters; a usage error for an empty value or another letter.
    init(parsing letters: String) throws(CLIError) {
        guard !letters.isEmpty else {
            throw .usage(
                "--print needs one or more of H (request head), B (request body), h (response head), b (response body)")
        }
        for letter in letters.unicodeScalars {
            switch letter {
            case "H": requestHead = true
            case "B": requestBody = true
            case "h": responseHead = true
            case "b": responseBody = true
            default:
                throw .usage(
                    "--print: \(String(letter).debugDescription) is not one of H (request head), B (request body), h (response head), b (response body)"
                )
            }
        }
    }
}
