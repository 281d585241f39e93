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
#elseif canImport(Musl)
import Musl
#endif

/// The connection options of a command as plain values: what `ConnectionOptions` parses, and what
/// a plain `wattle [METHOD] URL [ITEM ...]` gets without parsing (every option at its default).
struct ConnectionSettings: Equatable, Sendable {
    /// `--base-url`.
    var baseURL: String?
    /// `--timeout`, in seconds.
    var timeout: Double?
    /// `--connect-timeout`, in seconds.
    var connectTimeout: Double?
    /// `--stall-timeout`, in seconds (0: none).
    var stallTimeout: Double?
    /// `--allow-self-signed`, each host given.
    var allowSelfSigned: [String] = []
    /// `--pin`, each `HOST=sha256//BASE64` given.
    var pin: [String] = []
    /// `--cacert` (or `--verify`): a PEM file of CA or server certificates.
    var cacert: String?
    /// `--proxy`.
    var proxy: String?
    /// `--keychain`.
    var keychain: String?
    /// `--profile`.
    var profile: String = "default"
    /// `--refresh-path`.
    var refreshPath: String?
    /// `--token-path`.
    var tokenPath: String?
    /// `--client-id`.
    var clientID: String?
    /// `--scope`.
    var scope: String?
    /// `--cert`.
    var cert: String?
    /// `--cert-key`.
    var certKey: String?
    /// `--cert-name`.
    var certName: String?

    /// The base URL from the option or the environment.
    var resolvedBaseURL: URL? {
        let text = baseURL ?? Environment["WATTLE_BASE_URL"]
        return text.flatMap { URL(string: $0) }
    }

    /// Whether the keychain file for tokens exists. With `stat` and a path string:
    /// `FileManager.default` and `URL.appendingPathComponent` each build generic metadata on
    /// their first use in a process (~0.1 ms of a one-shot `wattle GET` with two such first
    /// uses removed from the library's request path).
    var keychainFileExists: Bool {
        var info = stat()
        return stat(keychainPath, &info) == 0
    }

    /// The keychain file's path: `--keychain`, else the default keychain's.
    var keychainPath: String { keychain ?? KeychainStore.defaultDirectory.path + "/wattle-cli.keychain" }

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
    /// - Parameter createKeychain: false for requests (`wattle [METHOD] URL ...`, with or without
    ///   options): when no keychain file exists there can be no token, so none is created (and no
    ///   time is spent opening one).
    /// - Parameter sending: false for `--offline`: no keychain is opened, no client certificate
    ///   or secret read, and no authenticator set.
    func configuration(origin: URL?, createKeychain: Bool = true, sending: Bool = true) throws -> Configuration {
        var configuration = Configuration()
        configuration.baseURL = resolvedBaseURL
        configuration.redirects = .none
        configuration.trust.selfSignedHosts = allowSelfSigned
        for entry in pin {
            guard let equals = entry.firstIndex(of: "="), entry[entry.index(after: equals)...].hasPrefix("sha256//")
            else {
                throw CLIError.usage("--pin takes HOST=sha256//BASE64, not \"\(entry)\"")
            }
            configuration.trust.pin(String(entry[..<equals]), to: [String(entry[entry.index(after: equals)...])])
        }
        if let cacert { try trustCertificates(in: cacert, origin: origin, configuration: &configuration) }
        // The keychain file, opened once for a kept certificate and the token store.
        var openedStore: KeychainStore?
        func store() throws -> KeychainStore {
            if let openedStore { return openedStore }
            let store = try keychainStore()
            openedStore = store
            return store
        }
        if cert != nil, certName != nil { throw CLIError.usage("give --cert or --cert-name, not both") }
        if cert != nil || certName != nil {
            // Presented to the origin alone (host and port): a redirect elsewhere does not take it.
            let flag = cert != nil ? "--cert" : "--cert-name"
            guard let origin, let host = origin.host else {
                throw CLIError.usage("\(flag) needs a URL or --base-url to present it to")
            }
            if cert == nil, certKey != nil { throw CLIError.usage("--cert-key goes with --cert, not --cert-name") }
            // (Checked as for a request sent; with nothing to send, nothing is read.)
            if sending {
                let certificate: ClientCertificate
                if let cert {
                    // (Standard input may be the request's body: never read for a passphrase here.)
                    certificate = try CertCommand.fromFiles(certificate: cert, key: certKey, readsStandardInput: false)
                } else {
                    certificate = try CertCommand.load(certName ?? "", settings: self, store: store)
                }
                let name = host.contains(":") ? "[\(host)]" : host
                configuration.trust.present(
                    certificate, to: "\(name):\(origin.port ?? (origin.scheme == "http" ? 80 : 443))")
            }
        } else if certKey != nil {
            throw CLIError.usage("--cert-key goes with --cert")
        }
        // An unusable proxy URL fails the request unsent, with an error naming the proxy
        // without its password.
        if let proxy { configuration.proxy = proxy.isEmpty ? .none : .url(proxy) }
        if let timeout {
            guard timeout > 0, timeout.isFinite else {
                throw CLIError.usage("--timeout must be a positive number of seconds")
            }
            configuration.timeouts.total = Self.duration(seconds: timeout)
            // The exchange may take that long, silences included: `--timeout 120` for a server
            // that thinks for 45 s before answering must not fail at the 30 s stall default.
            if stallTimeout == nil { configuration.timeouts.stall = nil }
        }
        if let connectTimeout {
            guard connectTimeout > 0, connectTimeout.isFinite else {
                throw CLIError.usage("--connect-timeout must be a positive number of seconds")
            }
            configuration.timeouts.connect = Self.duration(seconds: connectTimeout)
        }
        if let stallTimeout {
            guard stallTimeout >= 0, stallTimeout.isFinite else {
                throw CLIError.usage("--stall-timeout takes a number of seconds, 0 for none")
            }
            configuration.timeouts.stall = stallTimeout == 0 ? nil : Self.duration(seconds: stallTimeout)
        }
        // A client that obtains its own tokens keeps them, in a keychain made for them if need be.
        let client = try clientCredentials(readingSecret: sending)
        if sending, let origin, createKeychain || client != nil || keychainFileExists {
            let store = KeychainTokenStore(origin: origin, profile: profile, store: try store())
            let refresh = (refreshPath ?? Environment["WATTLE_REFRESH_PATH"]).map {
                Authenticator.postRefreshToken(to: $0)
            }
            if let client {
                var authenticator = client(store)
                authenticator.refresh = refresh
                configuration.authenticator = authenticator
            } else {
                configuration.authenticator = Authenticator(store: store, refresh: refresh)
            }
        }
        if configuration.baseURL == nil { configuration.baseURL = origin }
        return configuration
    }

    /// The client-credentials grant of `--token-path` (or `WATTLE_TOKEN_PATH`), or nil without
    /// one. The secret is read from `WATTLE_CLIENT_SECRET` only: an option would show it in the
    /// process list and the shell's history.
    ///
    /// - Parameter readingSecret: false for `--offline`: the options are checked, and nil is
    ///   returned without reading the secret.
    func clientCredentials(readingSecret: Bool = true) throws -> ((any TokenStore) -> Authenticator)? {
        guard let path = tokenPath ?? Environment["WATTLE_TOKEN_PATH"] else {
            if clientID != nil || scope != nil { throw CLIError.usage("--client-id and --scope go with --token-path") }
            return nil
        }
        guard readingSecret else { return nil }
        guard let id = clientID ?? Environment["WATTLE_CLIENT_ID"], !id.isEmpty else {
            throw CLIError.usage("--token-path needs the client's identifier: --client-id or WATTLE_CLIENT_ID")
        }
        guard let secret = Environment["WATTLE_CLIENT_SECRET"], !secret.isEmpty else {
            throw CLIError.usage("--token-path needs the client's secret in WATTLE_CLIENT_SECRET")
        }
        // Its tokens bound to the client and scope: one another client (or scope) kept under the
        // same profile is not sent, and a token is obtained in its place.
        return { store in
            Authenticator.clientCredentials(
                store: store, endpoint: path, clientID: id, clientSecret: secret, scope: scope)
        }
    }

    /// The keychain item of `--session NAME`'s cookie jar for an origin (httpie keeps a
    /// session per host too), in the keychain holding the tokens.
    /// The store of `configuration`'s token store is used when it has one, so that the file is
    /// opened once.
    func cookieJar(named name: String, origin: URL, configuration: Configuration) throws -> KeychainCookieJar {
        guard !name.isEmpty else { throw CLIError.usage("--session needs a name") }
        let store = try Self.keychainTokenStore(of: configuration)?.keychain.store ?? keychainStore()
        return KeychainCookieJar(name: "\(origin.absoluteString)#\(name)", store: store)
    }

    /// The keychain token store of `configuration`'s authenticator, bound to a client
    /// (`--token-path`) or not.
    static func keychainTokenStore(of configuration: Configuration) -> KeychainTokenStore? {
        let store = configuration.authenticator?.store
        return (store as? KeychainTokenStore) ?? ((store as? BoundTokenStore)?.base as? KeychainTokenStore)
    }

    /// The origin a URL or endpoint belongs to, given the base URL.
    func origin(of endpoint: String) throws -> URL {
        let url = try Request(endpoint).url(relativeTo: resolvedBaseURL)
        return try origin(ofURL: url, endpoint: endpoint)
    }

    /// The origin of a command's optional URL argument, else of the base URL; a usage error
    /// naming both ways to give one when there is neither.
    func origin(of argument: String?) throws -> URL {
        guard let argument else {
            guard let base = resolvedBaseURL else {
                throw CLIError.usage("no URL: give the API's URL, or --base-url (or WATTLE_BASE_URL)")
            }
            // Checked as any URL is (a host, http or https).
            return try origin(of: base.absoluteString)
        }
        return try origin(of: argument)
    }

    /// `--cacert FILE`: the file's certificates are the roots for the URL's host and the base
    /// URL's (`TrustPolicy.trust(certificatePEM:for:)`: libcurl's `CURLOPT_CAINFO_BLOB` instead of
    /// the system's store, the host name still checked); other hosts a redirect reaches are
    /// verified against the system's. httpie's `--verify=no` has no equivalent here: verification
    /// is relaxed only for a named host (`--allow-self-signed`).
    private func trustCertificates(in path: String, origin: URL?, configuration: inout Configuration) throws {
        // httpie's --verify=yes is the default: full verification against the system's store.
        if ["yes", "true"].contains(path.lowercased()) { return }
        // Standard input may be the body.
        if path == "-" { throw CLIError.usage("--cacert takes a file, not standard input") }
        if ["no", "false"].contains(path.lowercased()) {
            throw CLIError.usage(
                "--verify \(path): verification is never turned off; --allow-self-signed HOST accepts a self-signed certificate for that host alone, --cacert FILE trusts a CA"
            )
        }
        let bytes: [UInt8]
        do { bytes = try InputFile.read(path) } catch { throw CLIError.usage("--cacert: \(error.description)") }
        guard let text = String(validating: bytes, as: UTF8.self), text.contains("-----BEGIN CERTIFICATE-----") else {
            throw CLIError.usage("--cacert \(path): not a PEM file of certificates (-----BEGIN CERTIFICATE-----)")
        }
        let hosts = Set([origin?.host, resolvedBaseURL?.host].compactMap { $0?.lowercased() })
        guard !hosts.isEmpty else { throw CLIError.usage("--cacert needs a URL or --base-url to verify") }
        for host in hosts { configuration.trust.trust(certificatePEM: text, for: host) }
    }

    /// `url`'s scheme, host and port, with the path `/`.
    private func origin(ofURL url: URL, endpoint: String) throws -> URL {
        var components = URLComponents()
        components.scheme = url.scheme
        components.host = url.host
        components.port = url.port
        components.path = "/"
        guard let origin = components.url else {
            throw CLIError.usage("cannot find the origin of \(Redaction.fullURL(endpoint))")
        }
        return origin
    }

    /// A positive, finite number of seconds as a timeout, in whole milliseconds (rounded up,
    /// so `0.0001` is not "none"); beyond 10^12 s (30,000 years), 10^12 s.
    static func duration(seconds: Double) -> Duration {
        .milliseconds(Int((min(seconds, 1e12) * 1000).rounded(.up)))
    }
}
