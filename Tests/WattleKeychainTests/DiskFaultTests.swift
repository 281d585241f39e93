import Foundation
import Testing

@testable import WattleKeychain

#if canImport(Glibc)
import Glibc
#endif

/// A full disk and a read-only folder, on real file systems: a 2 MiB tmpfs, and a read-only
/// bind mount of a folder onto itself (root ignores permission bits, so `chmod 0500` alone
/// would prove nothing when the suite runs as root). Skipped, with the reason, where mounting
/// is not allowed.
@Suite(.serialized, .enabled(if: Mounting.isAvailable, Comment(rawValue: Mounting.unavailableReason ?? "")))
struct DiskFaultTests {
    @Test(.timeLimit(.minutes(2)))
    func aFullDiskFailsTheWriteWithDiskFullAndLosesNothingWritten() throws {
        let folder = try Reliability.temporaryFolder("wattle-full")
        defer { try? FileManager.default.removeItem(at: folder) }
        try Mounting.mountTmpfs(folder, size: "2m")
        defer { Mounting.unmount(folder) }
        let url = folder.appendingPathComponent("full.keychain")
        let keyURL = folder.appendingPathComponent("full.key")
        // Room to give back once the disk is full.
        let filler = folder.appendingPathComponent("filler")
        try Data(repeating: 0xAB, count: 256 * 1024).write(to: filler)

        let store = try KeychainStore(fileURL: url, credential: .keyFile(keyURL))
        let keychain = Keychain(service: "full", store: store)
        var written: [String: String] = [:]
        for index in 0..<20 {
            try keychain.set("early-\(index)", forKey: "early-\(index)")
            written["early-\(index)"] = "early-\(index)"
        }
        var failure: (any Error)?
        var failedKey = ""
        for index in 0..<2_000 {
            let key = "bulk-\(index)"
            let value = "\(index)-" + String(repeating: "x", count: 6_000)
            do {
                try keychain.set(value, forKey: key)
                written[key] = value
            } catch {
                failure = error
                failedKey = key
                break
            }
        }
        let error = try #require(failure, "2,000 writes of 6 KB fitted on a 2 MiB file system")
        #expect(error as? KeychainError == .diskFull, "a full disk gave \(error)")
        #expect(String(describing: error).localizedCaseInsensitiveContains("full"), "\(error)")

        // Nothing written is lost, the failed write left nothing, the file is sound.
        for (key, value) in written { #expect(try keychain.string(forKey: key) == value, "\(key)") }
        #expect(try keychain.string(forKey: failedKey) == nil)
        #expect(try Reliability.integrity(url.path) == ["ok"])
        let reopened = Keychain(service: "full", store: try KeychainStore(fileURL: url, credential: .keyFile(keyURL)))
        for (key, value) in written { #expect(try reopened.string(forKey: key) == value, "\(key) after reopening") }

        // Space given back: writing works again.
        try FileManager.default.removeItem(at: filler)
        try keychain.set("after", forKey: failedKey)
        #expect(try reopened.string(forKey: failedKey) == "after")
        Reliability.report(
            "disk full: \(written.count) items written on a 2 MiB tmpfs, then \(Reliability.name(error)) (\"\(error)\"); "
                + "all \(written.count) intact, integrity ok, writes resume once space is freed")
    }

    /// A keychain whose folder turned read-only: opening it, and creating one there, fail with
    /// a clear error naming the file; nothing is lost once the folder is writable again.
    ///
    /// (A store opened before the remount keeps writing through its open descriptors, which
    /// refer to the writable mount; and Linux refuses to remount a file system read-only while
    /// files on it are open for writing. So the case tried is the one users meet: a keychain on
    /// a read-only mount or in a folder they cannot write.)
    @Test(.timeLimit(.minutes(2)))
    func aReadOnlyFolderGivesAClearErrorAndLosesNothing() throws {
        let folder = try Reliability.temporaryFolder("wattle-ro")
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("ro.keychain")
        let keyURL = folder.appendingPathComponent("ro.key")
        do {
            let keychain = Keychain(service: "ro", store: try KeychainStore(fileURL: url, credential: .keyFile(keyURL)))
            try keychain.set("kept", forKey: "token")
        }
        try Mounting.makeReadOnly(folder)
        var unmounted = false
        defer { if !unmounted { Mounting.unmount(folder) } }
        var findings: [String] = []

        let reopening = #expect(throws: (any Error).self) {
            _ = try Keychain(service: "ro", store: try KeychainStore(fileURL: url, credential: .keyFile(keyURL)))
                .string(forKey: "token")
        }
        findings.append("opening the existing keychain: \(Self.describe(reopening))")
        if let reopening { Self.expectClear(reopening, path: url.path) }

        let creating = #expect(throws: (any Error).self) {
            _ = try KeychainStore(
                fileURL: folder.appendingPathComponent("new.keychain"),
                credential: .keyFile(folder.appendingPathComponent("new.key")))
        }
        findings.append("creating a keychain there: \(Self.describe(creating))")
        if let creating { Self.expectClear(creating, path: folder.path) }

        Mounting.unmount(folder)
        unmounted = true
        let keychain = Keychain(service: "ro", store: try KeychainStore(fileURL: url, credential: .keyFile(keyURL)))
        #expect(try keychain.string(forKey: "token") == "kept")
        try keychain.set("writable again", forKey: "token")
        #expect(try Reliability.integrity(url.path) == ["ok"])
        Reliability.report("read-only folder (read-only bind mount): " + findings.joined(separator: "; "))
    }

    static func describe(_ error: (any Error)?) -> String {
        guard let error else { return "no error" }
        return "\(Reliability.name(error)) \"\(error)\""
    }

    /// A KeychainError or KeychainFileError whose description names the path or says what is
    /// wrong.
    static func expectClear(_ error: any Error, path: String) {
        let description = String(describing: error)
        #expect(error is KeychainError || error is KeychainFileError, "\(type(of: error)): \(description)")
        #expect(
            description.contains(path) || description.localizedCaseInsensitiveContains("read-only")
                || description.localizedCaseInsensitiveContains("writable"),
            "unclear: \(description)")
    }
}
