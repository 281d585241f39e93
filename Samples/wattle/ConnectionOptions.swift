import ArgumentParser

/// Options shared by the commands that talk to a server; the commands work from their `settings`.
struct ConnectionOptions: ParsableArguments {
    @Option(name: .customLong("base-url"), help: "Resolve relative endpoints against this URL (or WATTLE_BASE_URL).")
    var baseURL: String?

    @Option(
        help:
            "Give up on the whole exchange after this many seconds (default 60; with it, a silent server is waited for up to this long)."
    )
    var timeout: Double?

    @Option(
        name: .customLong("connect-timeout"),
        help: "Give up on connecting (resolving, TCP and the TLS handshake) after this many seconds (default 10).")
    var connectTimeout: Double?

    @Option(
        name: .customLong("stall-timeout"),
        help: "Give up on a transfer that receives and sends nothing for this many seconds (default 30; 0 for never).")
    var stallTimeout: Double?

    @Option(
        name: .customLong("allow-self-signed"),
        help: "Accept a self-signed certificate for this exact host (repeatable).")
    var allowSelfSigned: [String] = []

    @Option(help: "Pin a host's public key: HOST=sha256//BASE64 (repeatable).")
    var pin: [String] = []

    @Option(
        name: [.customLong("cacert"), .customLong("verify")],
        help:
            "Verify the URL's host (and the base URL's) against these CA or server certificates (PEM) instead of the system's, as curl's --cacert and httpie's --verify=PATH; the host name is still checked."
    )
    var cacert: String?

    @Option(
        help:
            "Send through this proxy (http, https, socks5h://[user:password@]host:port), ignoring http_proxy and no_proxy; \"\" for none."
    )
    var proxy: String?

    @Option(
        help:
            "A client certificate (PEM) to present to the URL's origin when it asks (mutual TLS); may hold the key too."
    )
    var cert: String?

    @Option(
        name: .customLong("cert-key"),
        help:
            "The client certificate's private key (PEM), when --cert does not hold it; an encrypted one's passphrase is WATTLE_CERT_PASSWORD, else asked."
    )
    var certKey: String?

    @Option(
        name: .customLong("cert-name"),
        help: "A client certificate kept in the keychain (wattle cert import NAME ...) to present instead of --cert.")
    var certName: String?

    @Option(
        help: "The keychain file holding tokens, cookies and client certificates (a key file PATH.key sits next to it)."
    )
    var keychain: String?

    @Option(help: "The token profile within the keychain.")
    var profile: String = "default"

    @Option(name: .customLong("refresh-path"), help: "Endpoint that refreshes the token (or WATTLE_REFRESH_PATH).")
    var refreshPath: String?

    @Option(
        name: .customLong("token-path"),
        help:
            "Endpoint that issues tokens to this client (OAuth 2 client credentials), or WATTLE_TOKEN_PATH: a token is obtained when none is kept or it expires. The client is --client-id (or WATTLE_CLIENT_ID), its secret WATTLE_CLIENT_SECRET."
    )
    var tokenPath: String?

    @Option(name: .customLong("client-id"), help: "The client's identifier for --token-path (or WATTLE_CLIENT_ID).")
    var clientID: String?

    @Option(help: "The scopes to ask --token-path for, space-separated.")
    var scope: String?

    /// The options as plain values, which the commands work from.
    var settings: ConnectionSettings {
        ConnectionSettings(
            baseURL: baseURL, timeout: timeout, connectTimeout: connectTimeout, stallTimeout: stallTimeout,
            allowSelfSigned: allowSelfSigned, pin: pin, cacert: cacert,
            proxy: proxy,
            keychain: keychain, profile: profile, refreshPath: refreshPath, tokenPath: tokenPath, clientID: clientID,
            scope: scope, cert: cert, certKey: certKey, certName: certName)
    }
}
