import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Wattle
import WattleKeychain

/// Options shared by the commands that talk to a server.
struct ConnectionOptions: ParsableArguments {
    @Option(name: .customLong("base-url"), help: "Resolve relative endpoints against this URL (or WATTLE_BASE_URL).")
    var baseURL: String?

    @Option(help: "Total timeout in seconds.")
    var timeout: Double?

    @Option(name: .customLong("allow-self-signed"), help: "Accept a self-signed certificate for this exact host (repeatable).")
    var allowSelfSigned: [String] = []

    @Option(help: "Pin a host's public key: HOST=sha256//BASE64 (repeatable).")
    var pin: [String] = []

    @Option(
        help: "Send through this proxy (http, https, socks5h://[user:password@]host:port), ignoring http_proxy and no_proxy; \"\" for none."
    )
    var proxy: String?

    @Option(help: "The keychain file holding tokens (a key file PATH.key sits next to it).")
    var keychain: String?

    @Option(help: "The token profile within the keychain.")
    var profile: String = "default"

    @Option(name: .customLong("refresh-path"), help: "Endpoint that refreshes the token (or WATTLE_REFRESH_PATH).")
    var refreshPath: String?

    /// The base URL from the option or the environment.
    var resolvedBaseURL: URL? {
        let text = baseURL ?? ProcessInfo.processInfo.environment["WATTLE_BASE_URL"]
        return text.flatMap { URL(string: $0) }
    }

    /// The keychain file for tokens.
    var keychainFile: URL {
        keychain.map { URL(fileURLWithPath: $0) }
            ?? KeychainStore.defaultDirectory.appendingPathComponent("wattle-cli.keychain")
    }

    /// The keychain store for tokens.
    func keychainStore() throws -> KeychainStore {
        if let keychain {
            let url = URL(fileURLWithPath: keychain)
            return try KeychainStore(fileURL: url, credential: .keyFile(URL(fileURLWithPath: keychain + ".key")))
        }
        return try KeychainStore(directory: KeychainStore.defaultDirectory, name: "wattle-cli")
    }

    /// A configuration with trust, timeout, and an authenticator for `origin`'s tokens.
    ///
    /// - Parameter createKeychain: false for plain requests: when no keychain file exists there
    ///   can be no token, so none is created (and no time is spent opening one).
    func configuration(origin: URL?, createKeychain: Bool = true) throws -> Configuration {
        var configuration = Configuration()
        configuration.baseURL = resolvedBaseURL
        configuration.redirects = .none
        configuration.trust.selfSignedHosts = allowSelfSigned
        for entry in pin {
            guard let equals = entry.firstIndex(of: "="), entry[entry.index(after: equals)...].hasPrefix("sha256//") else {
                throw CLIError.usage("--pin takes HOST=sha256//BASE64, not \"\(entry)\"")
            }
            configuration.trust.pin(String(entry[..<equals]), to: [String(entry[entry.index(after: equals)...])])
        }
        // An unusable proxy URL fails the request unsent, with an error naming the proxy
        // without its password.
        if let proxy { configuration.proxy = proxy.isEmpty ? .none : .url(proxy) }
        if let timeout {
            guard timeout > 0 else { throw CLIError.usage("--timeout must be a positive number of seconds") }
            configuration.timeouts.total = .milliseconds(Int(timeout * 1000))
        }
        if let origin, createKeychain || FileManager.default.fileExists(atPath: keychainFile.path) {
            let store = KeychainTokenStore(origin: origin, profile: profile, store: try keychainStore())
            let refresh = refreshPath ?? ProcessInfo.processInfo.environment["WATTLE_REFRESH_PATH"]
            configuration.authenticator = Authenticator(store: store, refresh: refresh.map { Authenticator.postRefreshToken(to: $0) })
        }
        if configuration.baseURL == nil { configuration.baseURL = origin }
        return configuration
    }

    /// The origin a URL or endpoint belongs to, given the base URL.
    func origin(of endpoint: String) throws -> URL {
        let url = try Request(endpoint).url(relativeTo: resolvedBaseURL)
        var components = URLComponents()
        components.scheme = url.scheme
        components.host = url.host
        components.port = url.port
        components.path = "/"
        guard let origin = components.url else { throw CLIError.usage("cannot find the origin of \(endpoint)") }
        return origin
    }
}
