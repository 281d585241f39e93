import Foundation
import Testing
import WattleKeychain

/// The name given to `KeychainStore(directory:name:)`: one visible file name in the folder.
@Suite struct KeychainNameTests {
    @Test(
        "a keychain name that is empty, . or .., or holds / or NUL is refused with param, and nothing is created",
        arguments: ["", ".", "..", "../escaped", "sub/name", "/rooted", "nul\0name"])
    func nameThatIsNotOneFileNameIsRefused(name: String) throws {
        let parent = try Reliability.temporaryFolder("wattle-keychain-name")
        defer { try? FileManager.default.removeItem(at: parent) }
        let directory = parent.appendingPathComponent("keychains", isDirectory: true)
        #expect(keychainError { _ = try KeychainStore(directory: directory, name: name) } == .param)
        #expect(try FileManager.default.subpathsOfDirectory(atPath: parent.path) == [])
    }

    @Test("a plain name, dots inside it too, opens name.keychain and name.key in the folder")
    func plainNameOpensItsFilesInTheFolder() throws {
        let directory = try Reliability.temporaryFolder("wattle-keychain-name")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try KeychainStore(directory: directory, name: "work.v2")
        try Keychain(service: "svc", store: store).set("kept", forKey: "k")
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(Set(files).isSuperset(of: ["work.v2.keychain", "work.v2.key"]))
        #expect(store.fileURL?.lastPathComponent == "work.v2.keychain")
    }
}
