import ArgumentParser
import Wattle
import WattleKeychain

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `wattle cert import|list|remove`: client certificates kept sealed in the CLI's keychain, for
/// `--cert-name NAME`, so that a private key need not stay in a file.
struct CertCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cert",
        abstract: "Keep client certificates (mutual TLS) sealed in the keychain, for --cert-name.",
        subcommands: [Import.self, List.self, Remove.self])

    /// The keychain service client certificates are kept under, one item per name.
    static let service = "wattle-cli client certificates"

    /// The certificates' keychain in the CLI's keychain file, or nil when there is no file (so
    /// no certificate); never creates one unless `create`.
    static func keychain(_ settings: ConnectionSettings, create: Bool) throws -> Keychain? {
        guard create || settings.keychainFileExists else { return nil }
        return Keychain(service: service, store: try settings.keychainStore())
    }

    /// A certificate and key from PEM files, asking for an encrypted key's passphrase:
    /// `WATTLE_CERT_PASSWORD`, else the terminal, else, when `readsStandardInput` (standard
    /// input is not a request's body), its first line. For `cert import` (`readsStandardInput`),
    /// a passphrase typed on the terminal is asked twice: it is kept, unchecked until used.
    static func fromFiles(certificate: String, key: String?, readsStandardInput: Bool) throws -> ClientCertificate {
        let keyFile = URL(fileURLWithPath: key ?? certificate)
        var passphrase: String?
        // A file that cannot be read is left to the initialiser, which names it.
        if let data = FileManager.default.contents(atPath: keyFile.path),
            ClientCertificate.isEncryptedPrivateKey(pem: String(decoding: data, as: UTF8.self))
        {
            passphrase = try PasswordPrompt.password(
                readsStandardInput: readsStandardInput, variable: "WATTLE_CERT_PASSWORD",
                prompt: "Passphrase of \(keyFile.lastPathComponent): ", confirming: readsStandardInput,
                missing: "the key in \(keyFile.path) is encrypted: set WATTLE_CERT_PASSWORD or type its passphrase")
        }
        return try ClientCertificate(
            certificateFile: URL(fileURLWithPath: certificate), privateKeyFile: keyFile, passphrase: passphrase)
    }

    /// The certificate kept as `name`, for `--cert-name`, from the keychain `store` opens
    /// (called only when the keychain file exists).
    static func load(_ name: String, settings: ConnectionSettings, store: () throws -> KeychainStore) throws
        -> ClientCertificate
    {
        guard !name.isEmpty else { throw CLIError.usage("--cert-name needs a name") }
        let certificate: ClientCertificate?
        do {
            certificate =
                settings.keychainFileExists
                ? try ClientCertificate.load(from: Keychain(service: service, store: try store()), forKey: name) : nil
        } catch let error as KeychainError where error == .interactionNotAllowed {
            throw error
        } catch let error as KeychainError {
            throw CLIError.failed(
                "the client certificate \"\(name)\" cannot be read (\(error)): forget it with wattle cert remove \(name) and import it again"
            )
        } catch let error as WattleError {
            throw CLIError.failed(
                "the client certificate \"\(name)\" is not usable (\(error)): forget it with wattle cert remove \(name) and import it again"
            )
        }
        guard let certificate else {
            throw CLIError.usage(
                "no client certificate named \"\(name)\" is kept: add one with wattle cert import \(name) CERT [KEY]")
        }
        return certificate
    }

    /// `--keychain`, the one option the `cert` commands take.
    struct KeychainOption: ParsableArguments {
        @Option(help: "The keychain file (a key file PATH.key sits next to it); else the CLI's own.")
        var keychain: String?

        /// Settings naming that keychain, every other option at its default.
        var settings: ConnectionSettings { ConnectionSettings(keychain: keychain) }
    }

    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "import",
            abstract: "Keep a client certificate and its key (PEM files) sealed in the keychain under NAME.",
            discussion: """
                Requests then read the key from the keychain (wattle --cert-name NAME URL), not \
                from the file. An existing NAME is replaced. An encrypted key is kept with its \
                passphrase (WATTLE_CERT_PASSWORD, else asked on the terminal, else the first line \
                of standard input). Whether the key matches the certificate shows at the first \
                request that presents them.
                """)

        @Argument(help: "The name to keep it under.")
        var name: String

        @Argument(help: "The certificate (PEM); it may hold the key too.")
        var certificate: String

        @Argument(help: "The private key (PEM), when the certificate file does not hold it.")
        var key: String?

        @OptionGroup var store: KeychainOption

        func run() async throws {
            try await AuthCommand.reporting {
                guard !name.isEmpty else { throw CLIError.usage("give the certificate a name") }
                let identity = try CertCommand.fromFiles(certificate: certificate, key: key, readsStandardInput: true)
                // Parsed before anything is written: a file that only looks like a certificate
                // neither replaces a kept one nor makes a keychain file.
                let pin = try PublicKeyPin.pin(forCertificatePEM: identity.certificatePEM)
                guard let keychain = try CertCommand.keychain(store.settings, create: true) else { return }
                try identity.save(in: keychain, forKey: name)
                print(
                    "Kept client certificate \(name) (\(CertCommand.describe(identity)), key \(pin)) sealed in the keychain."
                )
                print(
                    "Use it with --cert-name \(name): requests no longer read \(key ?? certificate), but keep that file until one has succeeded."
                )
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "List the kept client certificates: name, chain length and key pin.")

        @OptionGroup var store: KeychainOption

        func run() async throws {
            try await AuthCommand.reporting {
                let keychain = try CertCommand.keychain(store.settings, create: false)
                let names = try keychain?.allKeys().sorted() ?? []
                guard let keychain, !names.isEmpty else {
                    printError("no client certificates are kept")
                    throw ExitCode(ExitStatus.usageOrOther)
                }
                // One damaged item is told on stderr, the others listed, and the exit is 1.
                var unreadable = false
                for name in names {
                    do {
                        guard let identity = try ClientCertificate.load(from: keychain, forKey: name) else { continue }
                        let pin = try PublicKeyPin.pin(forCertificatePEM: identity.certificatePEM)
                        print("\(name)  \(CertCommand.describe(identity))  \(pin)")
                    } catch {
                        printError("client certificate \(name) cannot be read: \(error)")
                        unreadable = true
                    }
                }
                if unreadable { throw ExitCode(ExitStatus.usageOrOther) }
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove", abstract: "Forget a kept client certificate.")

        @Argument(help: "The certificate's name.")
        var name: String

        @OptionGroup var store: KeychainOption

        func run() async throws {
            try await AuthCommand.reporting {
                guard !name.isEmpty else { throw CLIError.usage("give the name of the certificate to forget") }
                guard let keychain = try CertCommand.keychain(store.settings, create: false),
                    try keychain.hasValue(forKey: name)
                else {
                    printError("no client certificate named \"\(name)\" is kept")
                    throw ExitCode(ExitStatus.usageOrOther)
                }
                try keychain.removeValue(forKey: name)
                print("Forgot client certificate \(name).")
            }
        }
    }

    /// "1 certificate", "2 certificates".
    static func describe(_ identity: ClientCertificate) -> String {
        "\(identity.certificateCount) certificate\(identity.certificateCount == 1 ? "" : "s")"
    }
}
