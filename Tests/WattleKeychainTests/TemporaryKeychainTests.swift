import Foundation
import TestProxies
import Testing
import WattleKeychain

@testable import WattleTesting

@Suite("TemporaryKeychain: a real keychain file whose folder lives as long as anything using it")
struct TemporaryKeychainTests {
    @Test("a keychain made from a helper that is released at once keeps its folder until the keychain goes")
    func keychainOutlivesTheHelper() throws {
        // The common fixture shape: only the Keychain is kept.
        func makeKeychain() throws -> (Keychain, URL) {
            let temporary = try TemporaryKeychain()
            return (temporary.keychain(service: "svc"), temporary.directory)
        }
        var (keychain, directory): (Keychain?, URL) = try makeKeychain()
        try keychain!.set("token", forKey: "access")
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("test.keychain").path))
        // lock() then unlock() reads the key file again: it is still there.
        keychain!.store.lock()
        try keychain!.store.unlock()
        #expect(try keychain!.string(forKey: "access") == "token")
        keychain = nil
        #expect(!FileManager.default.fileExists(atPath: directory.path))
    }

    @Test("a reopened store keeps the folder too; the last one released removes it")
    func reopenedStoreKeepsTheFolder() throws {
        var temporary: TemporaryKeychain? = try TemporaryKeychain()
        let directory = temporary!.directory
        try temporary!.keychain(service: "svc").set("v", forKey: "k")
        var reopened: KeychainStore? = try temporary!.reopen()
        temporary = nil
        #expect(try Keychain(service: "svc", store: reopened!).string(forKey: "k") == "v")
        #expect(FileManager.default.fileExists(atPath: directory.path))
        reopened = nil
        #expect(!FileManager.default.fileExists(atPath: directory.path))
    }

    @Test(
        "a killed process's folder is removed by a later process's first TemporaryKeychain; a live one's, a fresh one and others are kept"
    )
    func staleFoldersAreSwept() async throws {
        let parent = FileManager.default.temporaryDirectory.appendingPathComponent("wattle-sweep-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: parent, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: parent) }
        var environment = ProcessInfo.processInfo.environment
        environment["TMPDIR"] = parent.path
        let worker = try ChildProcess(
            try MultiProcessTests.workerURL().path, ["temporary", "kept"], environment: environment)
        defer { worker.killIfRunning() }
        var said = Data()
        let deadline = ContinuousClock.now + .seconds(60)
        while !said.contains(UInt8(ascii: "\n")), ContinuousClock.now < deadline {
            let more = await ChildProcess.onOwnThread { worker.availableOutput() }
            if more.isEmpty { break }
            said.append(more)
        }
        let line = String(decoding: said, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        try #require(line.hasPrefix("ready "), "\(line)")
        let folder = URL(fileURLWithPath: String(line.dropFirst("ready ".count)))
        #expect(folder.deletingLastPathComponent().standardizedFileURL.path == parent.standardizedFileURL.path)

        // Beside it: a folder without an owner file, and one of another name with one.
        let foreign = parent.appendingPathComponent("wattle-keychain-foreign")
        let other = parent.appendingPathComponent("other")
        let shared = parent.appendingPathComponent("wattle-keychain-shared")
        for made in [foreign, other, shared] {
            try FileManager.default.createDirectory(at: made, withIntermediateDirectories: false)
        }
        for owned in [other, shared] {
            #expect(FileManager.default.createFile(atPath: owned.appendingPathComponent(".owner").path, contents: nil))
        }
        // Open to others: not a folder TemporaryKeychain made (0700), so never removed.
        #expect(chmod(shared.path, 0o755) == 0)

        // While the process lives, its folder is locked: kept.
        TemporaryKeychain.removeStaleFolders(in: parent, minimumAge: .zero)
        #expect(FileManager.default.fileExists(atPath: folder.path))
        worker.killIfRunning()
        #expect(worker.endedBySignal)
        // Killed, it cannot remove it; a fresh folder (under a minute) is still kept.
        TemporaryKeychain.removeStaleFolders(in: parent)
        #expect(FileManager.default.fileExists(atPath: folder.path))
        TemporaryKeychain.removeStaleFolders(in: parent, minimumAge: .zero)
        #expect(
            !FileManager.default.fileExists(atPath: folder.path), "the killed process's keychain and key file stayed")
        #expect(FileManager.default.fileExists(atPath: foreign.path))
        #expect(FileManager.default.fileExists(atPath: other.path))
        #expect(FileManager.default.fileExists(atPath: shared.path))
    }
}
