import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Wattle
import WattleKeychain

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

    /// The certificate kept as `name`, for `--cert-name`, from the keychain `store` opens
    /// (called only when the keychain file exists).
    static func load(_ name: String, settings: ConnectionSettings, store: () throws -> KeychainStore) throws -> ClientCertificate {
        guard settings.keychainFileExists,
            let certificate = try ClientCertificate.load(from: Keychain(service: service, store: try store()), forKey: name)
        else {
            throw CLIError.usage("no client certificate named \"\(name)\" is kept: add one with wattle cert import \(name) CERT [KEY]")
        }
        return certificate
    }

    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "import",
            abstract: "Keep a client certificate and its key (PEM files) sealed in the keychain under NAME.",
            discussion: """
                The key file can be deleted afterwards: requests read the key from the keychain \
                (wattle --cert-name NAME URL). An existing NAME is replaced. The key must be \
                unencrypted (openssl pkey -in key.pem -out plain.pem decrypts one).
                """)

        @Argument(help: "The name to keep it under.")
        var name: String

        @Argument(help: "The certificate (PEM); it may hold the key too.")
        var certificate: String

        @Argument(help: "The private key (PEM), when the certificate file does not hold it.")
        var key: String?

        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            try await AuthCommand.reporting {
                guard !name.isEmpty else { throw CLIError.usage("give the certificate a name") }
                let identity = try ClientCertificate(
                    certificateFile: URL(fileURLWithPath: certificate), privateKeyFile: URL(fileURLWithPath: key ?? certificate))
                guard let keychain = try CertCommand.keychain(connection.settings, create: true) else { return }
                try identity.save(in: keychain, forKey: name)
                let pin = try PublicKeyPin.pin(forCertificatePEM: identity.certificatePEM)
                print("Kept client certificate \(name) (\(CertCommand.describe(identity)), key \(pin)) sealed in the keychain.")
                print("Use it with --cert-name \(name); the key file is no longer needed.")
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "List the kept client certificates: name, chain length and key pin.")

        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            try await AuthCommand.reporting {
                let keychain = try CertCommand.keychain(connection.settings, create: false)
                let names = try keychain?.allKeys().sorted() ?? []
                guard let keychain, !names.isEmpty else {
                    printError("no client certificates are kept")
                    throw ExitCode(ExitStatus.usageOrOther)
                }
                for name in names {
                    // One damaged or locked item is told on its line; the others are listed.
                    do {
                        guard let identity = try ClientCertificate.load(from: keychain, forKey: name) else { continue }
                        let pin = try PublicKeyPin.pin(forCertificatePEM: identity.certificatePEM)
                        print("\(name)  \(CertCommand.describe(identity))  \(pin)")
                    } catch {
                        print("\(name)  unreadable: \(error)")
                    }
                }
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "remove", abstract: "Forget a kept client certificate.")

        @Argument(help: "The certificate's name.")
        var name: String

        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            try await AuthCommand.reporting {
                guard let keychain = try CertCommand.keychain(connection.settings, create: false),
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
