import Foundation
import Testing
import WattleKeychain
import WattleTesting

/// The stores every conformance test runs against.
enum StoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case memory
    case keyFile
    case passphrase

    var testDescription: String { rawValue }

    static let testPassphrase = "correct horse battery staple"

    func make() throws -> StoreFixture {
        switch self {
        case .memory:
            return StoreFixture(store: .inMemory(), temporary: nil, credential: nil)
        case .keyFile:
            let temporary = try TemporaryKeychain()
            return StoreFixture(store: temporary.store, temporary: temporary, credential: temporary.credential)
        case .passphrase:
            let credential = KeychainCredential.passphrase(Self.testPassphrase, strength: .minimum)
            let temporary = try TemporaryKeychain(credential: credential)
            return StoreFixture(store: temporary.store, temporary: temporary, credential: credential)
        }
    }
}

/// A store under test, with what unlocks it; keeps a temporary folder alive.
struct StoreFixture: Sendable {
    let store: KeychainStore
    let temporary: TemporaryKeychain?
    let credential: KeychainCredential?

    func unlock() throws {
        if let credential { try store.unlock(with: credential) } else { try store.unlock() }
    }

    func keychain(_ service: String = "svc") -> Keychain { Keychain(service: service, store: store) }
}

/// Runs `body` and returns the KeychainError it throws, or nil.
func keychainError(_ body: () throws -> Void) -> KeychainError? {
    do {
        try body()
        return nil
    } catch let error as KeychainError {
        return error
    } catch {
        Issue.record("unexpected error \(error)")
        return nil
    }
}

extension Data {
    init(_ text: String) { self.init(text.utf8) }
}
