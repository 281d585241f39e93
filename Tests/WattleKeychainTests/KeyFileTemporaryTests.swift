import Foundation
import Testing
import WattleTesting

@testable import WattleKeychain

/// The temporary a key file is made in (`<name>.key.tmp-<pid>-<random>`), which holds a copy
/// of the key: gone once the key file is made, and one left by a killed process removed later.
@Suite struct KeyFileTemporaryTests {
    /// Creates a private file of 32 bytes at `url`, last changed `age` seconds ago.
    static func plant(_ url: URL, age: TimeInterval) throws {
        try Data(repeating: 7, count: 32).write(to: url)
        try FileManager.default.setAttributes(
            [.posixPermissions: 0o600, .modificationDate: Date(timeIntervalSinceNow: -age)], ofItemAtPath: url.path)
    }

    static func exists(_ url: URL) -> Bool { FileManager.default.fileExists(atPath: url.path) }

    @Test("opening a keychain removes its key file's temporaries older than a minute, not fresh ones or other files")
    func openRemovesStaleTemporaries() throws {
        let temporary = try TemporaryKeychain()
        try temporary.keychain(service: "svc").set("kept", forKey: "k")
        let folder = temporary.directory
        let stale = folder.appendingPathComponent("test.key.tmp-4242-1234567")
        // Another process may be making this one right now.
        let fresh = folder.appendingPathComponent("test.key.tmp-4243-7654321")
        // Another key file's, and names not of the temporaries' form.
        let others = ["other.key.tmp-4242-1234567", "test.key.tmp-notes", "test.key.tmp-1-2-3", "test.key.tmp-"]
            .map { folder.appendingPathComponent($0) }
        try Self.plant(stale, age: 120)
        try Self.plant(fresh, age: 0)
        for url in others { try Self.plant(url, age: 120) }

        let reopened = try temporary.reopen()
        #expect(!Self.exists(stale))
        #expect(Self.exists(fresh))
        for url in others { #expect(Self.exists(url), "\(url.lastPathComponent)") }
        #expect(try Keychain(service: "svc", store: reopened).string(forKey: "k") == "kept")
    }

    @Test("creating a keychain removes a stale temporary of its key file, and leaves none of its own")
    func createRemovesStaleTemporariesAndLeavesNone() throws {
        let directory = try Reliability.temporaryFolder("wattle-key-temporary")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: directory.path)
        let stale = directory.appendingPathComponent("default.key.tmp-4242-1234567")
        try Self.plant(stale, age: 3600)

        let store = try KeychainStore(directory: directory)
        try Keychain(service: "svc", store: store).set("kept", forKey: "k")
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(files.filter { $0.contains(".tmp-") } == [])
        #expect(files.contains("default.key"))
    }
}
