import ArgumentParser
import Wattle

/// A failure the CLI reports with one line on stderr and an exit code.
enum CLIError: Error, CustomStringConvertible {
    /// Bad arguments: exit 1.
    case usage(String)
    /// Anything else that is not the network's fault: exit 1.
    case failed(String)

    var description: String {
        switch self {
        case .usage(let message), .failed(let message): message
        }
    }
}

/// Exit codes of `wattle`.
enum ExitStatus {
    static let success: Int32 = 0
    static let usageOrOther: Int32 = 1
    static let network: Int32 = 2
    static let redirect: Int32 = 3
    static let clientError: Int32 = 4
    static let serverError: Int32 = 5

    /// The code for an HTTP status.
    static func forStatus(_ status: Int) -> Int32 {
        switch status {
        case 200..<300: success
        case 300..<400: redirect
        case 400..<500: clientError
        case 500..<600: serverError
        default: usageOrOther
        }
    }

    /// The code for an error without a response.
    static func forError(_ error: WattleError) -> Int32 {
        switch error {
        case .httpStatus(let response): forStatus(response.statusCode)
        // A refresh or sign-in call that failed: as that call's failure (2 for the network, 4
        // for a refused grant); with no call made (nothing to refresh), 1.
        case .authenticationFailed(_, let cause?): forError(cause)
        case .cannotResolveHost, .cannotConnect, .proxyFailed, .connectionLost, .timedOut, .untrustedCertificate,
            .pinMismatch, .clientCertificate, .tooManyRedirects, .transport, .responseTooLarge, .headersTooLarge:
            network
        default: usageOrOther
        }
    }
}

/// Prints one line on stderr.
func printError(_ message: String) {
    var standardError = StandardError()
    print("wattle: \(message)", to: &standardError)
}

/// Standard error as a `TextOutputStream`.
struct StandardError: TextOutputStream {
    mutating func write(_ string: String) {
        FileHandleOutput.write(string, to: 2)
    }
}
