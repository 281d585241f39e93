import Foundation
import Testing
import WattleKeychain

@Suite struct KeychainErrorTests {
    static let known: [(KeychainError, Int32)] = [
        (.success, 0), (.unimplemented, -4), (.diskFull, -34), (.io, -36), (.param, -50), (.allocate, -108),
        (.readOnly, -25292), (.notAvailable, -25291), (.authFailed, -25293), (.duplicateItem, -25299),
        (.dataTooLarge, -25302), (.itemNotFound, -25300), (.interactionNotAllowed, -25308), (.decode, -26275),
    ]

    @Test func everyErrorHasApplesStatusNumberBothWays() {
        for (error, status) in Self.known {
            #expect(error.status == status)
            #expect(KeychainError(status: status) == error)
        }
    }

    @Test func localizedDescriptionIsTheDescription() {
        for (error, _) in Self.known {
            #expect((error as any Error).localizedDescription == error.description)
        }
    }

    @Test func unknownStatusBecomesUnhandledAndKeepsItsNumber() {
        let error = KeychainError(status: -9999)
        #expect(error == .unhandled(-9999))
        #expect(error.status == -9999)
    }

    @Test func descriptionSaysWhatHappenedAndWhatToDoWithTheStatus() {
        for (error, status) in Self.known {
            #expect(error.description.contains("\(status)"))
            #expect(error.description.count > 20)
        }
        #expect(KeychainError.interactionNotAllowed.description.contains("unlock"))
        #expect(KeychainError.duplicateItem.description.contains("update"))
    }

    @Test func errorsThrownByAKeychainNeverContainTheSecretOrNames() throws {
        let keychain = Keychain(service: "secret-service-name", store: .inMemory())
        try keychain.set("hunter2-secret", forKey: "secret-account")
        keychain.lock()
        do {
            _ = try keychain.string(forKey: "secret-account")
            Issue.record("expected interactionNotAllowed")
        } catch {
            let text = "\(error) \(String(describing: error))"
            #expect(!text.contains("hunter2"))
            #expect(!text.contains("secret-service-name"))
            #expect(!text.contains("secret-account"))
        }
    }
}
