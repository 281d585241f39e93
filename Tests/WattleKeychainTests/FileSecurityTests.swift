import Foundation
import Synchronization
import Testing
import WattleTesting

@testable import WattleKeychain

#if canImport(Glibc)
import Glibc
#endif

func mode(_ url: URL) -> mode_t {
    var info = stat()
    _ = stat(url.path, &info)
    return info.st_mode & 0o777
}

func contains(_ haystack: Data, _ needle: String) -> Bool {
    haystack.range(of: Data(needle.utf8)) != nil
}

@Suite struct FileSecurityTests {
    static let needles = [
        "plaintext-service-Q7", "plaintext-account-Q7", "plaintext-secret-Q7", "plaintext-label-Q7",
        "plaintext-server-Q7.example", "plaintext-web-password-Q7",
    ]

    @Test func theFileAndItsWALHoldNoPlaintextServiceAccountLabelOrSecretBeforeAndAfterCheckpoint() throws {
        let temporary = try TemporaryKeychain()
        let keychain = temporary.keychain(service: "plaintext-service-Q7").label("plaintext-label-Q7")
        try keychain.set("plaintext-secret-Q7", forKey: "plaintext-account-Q7")
        try temporary.store.add(
            .internetPassword(
                server: "plaintext-server-Q7.example", account: "plaintext-account-Q7",
                data: Data("plaintext-web-password-Q7")))
        let wal = URL(fileURLWithPath: temporary.fileURL.path + "-wal")
        let walBefore = try Data(contentsOf: wal)
        #expect(walBefore.count > 0, "the writes are in the WAL before a checkpoint")
        let mainBefore = try Data(contentsOf: temporary.fileURL)
        for needle in Self.needles {
            #expect(!contains(walBefore, needle), "\(needle) in WAL")
            #expect(!contains(mainBefore, needle), "\(needle) in file")
        }
        let connection = try SQLiteConnection(path: temporary.fileURL.path, create: false)
        _ = try connection.strings("PRAGMA wal_checkpoint(TRUNCATE)")
        let mainAfter = try Data(contentsOf: temporary.fileURL)
        #expect(mainAfter.count > mainBefore.count, "the checkpoint moved pages into the file")
        let walAfter = (try? Data(contentsOf: wal)) ?? Data()
        for needle in Self.needles {
            #expect(!contains(mainAfter, needle), "\(needle) in file after checkpoint")
            #expect(!contains(walAfter, needle), "\(needle) in WAL after checkpoint")
        }
        // Still readable afterwards.
        #expect(try keychain.string(forKey: "plaintext-account-Q7") == "plaintext-secret-Q7")
    }

    @Test func secretsArePaddedSoTheirLengthDoesNotShow() throws {
        let keychain = Keychain(service: "s", store: .inMemory())
        try keychain.set("a", forKey: "short")
        try keychain.set(String(repeating: "b", count: 60), forKey: "longer")
        let sizes = try keychain.store.withStorage { try $0.allRows().map(\.secret.count) }
        #expect(Set(sizes).count == 1)
    }

    @Test func aWrongPassphraseOrKeyFailsWithAuthFailed() throws {
        let temporary = try TemporaryKeychain(credential: .passphrase("right", strength: .minimum))
        try temporary.keychain(service: "s").set("x", forKey: "k")
        #expect(
            keychainError { _ = try temporary.reopen(credential: .passphrase("wrong", strength: .minimum)) }
                == .authFailed)
        #expect(
            keychainError { _ = try temporary.reopen(credential: .key([UInt8](repeating: 1, count: 32))) }
                == .authFailed)
        let keyed = try TemporaryKeychain()
        #expect(
            keychainError { _ = try keyed.reopen(credential: .key([UInt8](repeating: 1, count: 32))) } == .authFailed)
        #expect(
            keychainError { _ = try keyed.reopen(credential: .passphrase("pw", strength: .minimum)) } == .authFailed)
        #expect(keychainError { _ = try keyed.reopen(credential: .key([1, 2, 3])) } == .param)
    }

    @Test func aDamagedPassphraseHeaderFailsWithDecodeNotACrash() throws {
        let damages: [(String, [UInt8])] = [
            ("salt", [1, 2, 3]),  // too short: crypto_pwhash would read past it
            ("salt", [UInt8](repeating: 7, count: 40)),
            ("memlimit", [UInt8](repeating: 0xFF, count: 8)),  // over Int.max: the conversion trapped
            ("memlimit", [0, 0, 0, 0, 0x10, 0, 0, 0]),  // 64 GiB
            ("memlimit", [0, 0, 0, 0x80, 0, 0, 0, 0]),  // 2 GiB: more than the strongest Wattle writes
            ("opslimit", [5, 0, 0, 0, 0, 0, 0, 0]),  // one pass more than the strongest
            ("opslimit", [0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0]),  // 4 billion passes: hours
            ("opslimit", [0, 0, 0, 0, 0, 0, 0, 0]),
        ]
        for (name, value) in damages {
            let temporary = try TemporaryKeychain(credential: .passphrase("pw", strength: .minimum))
            try temporary.keychain(service: "s").set("x", forKey: "k")
            try temporary.store.withStorage { try $0.writeMeta([name: value]) }
            #expect(
                keychainError { _ = try temporary.reopen(credential: .passphrase("pw", strength: .minimum)) }
                    == .decode,
                "\(name) of \(value.count) bytes")
        }
    }

    @Test func aStoreDropsItsPassphraseOrKeyBytesOnceOpenAndKeepsAKeyFilesURL() throws {
        let passphrase = try TemporaryKeychain(credential: .passphrase("pw", strength: .minimum))
        #expect(!passphrase.store.keepsCredential)
        passphrase.store.lock()
        #expect(keychainError { try passphrase.store.unlock() } == .param)
        try passphrase.store.unlock(with: .passphrase("pw", strength: .minimum))
        #expect(try passphrase.keychain(service: "s").string(forKey: "none") == nil)

        let keyBytes = [UInt8](repeating: 9, count: 32)
        let keyed = try TemporaryKeychain(credential: .key(keyBytes))
        #expect(!keyed.store.keepsCredential)

        let keyFile = try TemporaryKeychain()
        #expect(keyFile.store.keepsCredential)
        keyFile.store.lock()
        try keyFile.store.unlock()
        #expect(!keyFile.store.isLocked)

        // After a change of credential, unlock() uses the new key file, and forgets a passphrase.
        let newKeyFile = keyFile.directory.appendingPathComponent("new.key")
        try keyFile.store.changeCredential(to: .keyFile(newKeyFile))
        keyFile.store.lock()
        try keyFile.store.unlock()
        #expect(!keyFile.store.isLocked)
        try keyFile.store.changeCredential(to: .passphrase("pw2", strength: .minimum))
        #expect(!keyFile.store.keepsCredential)
        keyFile.store.lock()
        #expect(keychainError { try keyFile.store.unlock() } == .param)
    }

    @Test func afterAPassphraseChangeNoFileHoldsTheOldWrappedKey() throws {
        let temporary = try TemporaryKeychain(credential: .passphrase("old", strength: .minimum))
        for index in 0..<20 { try temporary.keychain(service: "s").set("value \(index)", forKey: "k\(index)") }
        let oldWrapped = try #require(try temporary.store.withStorage { try $0.readMeta()["wrapped_key"] })
        let oldSalt = try #require(try temporary.store.withStorage { try $0.readMeta()["salt"] })
        try temporary.store.changeCredential(to: .passphrase("new", strength: .minimum))
        let path = temporary.fileURL.path
        for file in [path, path + "-wal"] where FileManager.default.fileExists(atPath: file) {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: file))
            #expect(bytes.range(of: Data(oldWrapped)) == nil, "the old wrapped key is in \(file)")
            #expect(bytes.range(of: Data(oldSalt)) == nil, "the old salt is in \(file)")
        }
        let reopened = try temporary.reopen(credential: .passphrase("new", strength: .minimum))
        #expect(try Keychain(service: "s", store: reopened).string(forKey: "k7") == "value 7")
    }

    @Test func changingThePassphraseReWrapsOnlyAndReEncryptsNoItem() throws {
        let temporary = try TemporaryKeychain(credential: .passphrase("old", strength: .minimum))
        try temporary.keychain(service: "s").set("kept", forKey: "k")
        let rowsBefore = try temporary.store.withStorage { try $0.allRows() }
        try temporary.store.changeCredential(to: .passphrase("new", strength: .minimum))
        let rowsAfter = try temporary.store.withStorage { try $0.allRows() }
        #expect(rowsBefore == rowsAfter)
        #expect(
            keychainError { _ = try temporary.reopen(credential: .passphrase("old", strength: .minimum)) }
                == .authFailed)
        let reopened = try temporary.reopen(credential: .passphrase("new", strength: .minimum))
        #expect(try Keychain(service: "s", store: reopened).string(forKey: "k") == "kept")
        // A locked store cannot change its credential.
        temporary.store.lock()
        #expect(
            keychainError { try temporary.store.changeCredential(to: .passphrase("x", strength: .minimum)) }
                == .interactionNotAllowed)
    }

    @Test func theBytesOfAKeyFileOpenItsKeychainAsKeyBytes() throws {
        let temporary = try TemporaryKeychain()
        try temporary.keychain(service: "s").set("v", forKey: "k")
        let bytes = try [UInt8](Data(contentsOf: temporary.keyFileURL))
        let store = try temporary.reopen(credential: .key(bytes))
        #expect(try Keychain(service: "s", store: store).string(forKey: "k") == "v")
    }

    @Test(arguments: [0o644, 0o604, 0o640, 0o620, 0o602] as [mode_t])
    func aKeyFileReadableOrWritableByOthersIsRefused(permissions: mode_t) throws {
        let temporary = try TemporaryKeychain()
        chmod(temporary.keyFileURL.path, permissions)
        #expect {
            _ = try temporary.reopen()
        } throws: { error in
            let fileError = error as? KeychainFileError
            return fileError?.reason == .insecurePermissions && fileError?.path == temporary.keyFileURL.path
                && "\(error)".contains("chmod 600")
        }
    }

    @Test func aKeychainFileReadableByOthersIsRefused() throws {
        let temporary = try TemporaryKeychain()
        chmod(temporary.fileURL.path, 0o644)
        #expect {
            _ = try temporary.reopen()
        } throws: { error in
            (error as? KeychainFileError)?.reason == .insecurePermissions
        }
    }

    @Test(arguments: ["-wal", "-shm"])
    func aWriteAheadLogOrSharedMemoryFileOthersMayReadIsRefused(suffix: String) throws {
        let temporary = try TemporaryKeychain()
        try temporary.keychain(service: "s").set("v", forKey: "k")
        let path = temporary.fileURL.path + suffix
        #expect(FileManager.default.fileExists(atPath: path), "SQLite keeps \(suffix) while the store is open")
        chmod(path, 0o644)
        #expect {
            _ = try temporary.reopen()
        } throws: { error in
            (error as? KeychainFileError)?.reason == .insecurePermissions && (error as? KeychainFileError)?.path == path
        }
        // A symbolic link in its place is refused too.
        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: "/dev/null")
        #expect {
            _ = try temporary.reopen()
        } throws: { error in
            (error as? KeychainFileError)?.reason == .notARegularFile
        }
        try FileManager.default.removeItem(atPath: path)
    }

    @Test func filesAreCreatedPrivateInAPrivateFolder() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("wattle-perm-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: base) }
        let directory = base.appendingPathComponent("nested/wattle")
        let store = try KeychainStore(directory: directory)
        try Keychain(service: "s", store: store).set("v", forKey: "k")
        #expect(mode(directory) == 0o700)
        #expect(mode(directory.appendingPathComponent("default.keychain")) == 0o600)
        #expect(mode(directory.appendingPathComponent("default.key")) == 0o600)
        #expect(mode(directory.appendingPathComponent("default.keychain-wal")) == 0o600)
        #expect(try Data(contentsOf: directory.appendingPathComponent("default.key")).count == 32)
    }

    @Test(arguments: [0o757, 0o777, 0o1777, 0o703] as [mode_t])
    func aFolderOthersMayWriteInIsRefusedBeforeAnythingIsOpened(permissions: mode_t) throws {
        let temporary = try TemporaryKeychain()
        try Keychain(service: "s", store: temporary.store).set("v", forKey: "k")
        let folder = temporary.fileURL.deletingLastPathComponent()
        chmod(folder.path, permissions)
        #expect {
            _ = try temporary.reopen()
        } throws: { error in
            let fileError = error as? KeychainFileError
            return fileError?.reason == .insecureFolder && fileError?.path == folder.path
                && "\(error)".contains(
                    "its mode \(String(permissions & 0o777, radix: 8)) lets the group or others write in it")
                // A shared (sticky) folder like /tmp is not to be closed: another folder is advised.
                && (permissions & 0o1000 == 0
                    ? "\(error)".contains("chmod 700 \(folder.path)")
                    : "\(error)".contains("a folder of your own") && !"\(error)".contains("chmod"))
        }
        // Readable by others is not refused (the files themselves are 0600), and 0700 opens.
        for safe in [0o755, 0o711, 0o700] as [mode_t] {
            chmod(folder.path, safe)
            #expect(try Keychain(service: "s", store: temporary.reopen()).string(forKey: "k") == "v")
        }
    }

    /// Giving a folder to a group one is not in takes root (CI and `make test` here run as root).
    @Test(
        .enabled(if: geteuid() == 0, "giving a folder to another group needs root"),
        arguments: [0o775, 0o770] as [mode_t])
    func aFolderASharedGroupMayWriteInIsRefused(permissions: mode_t) throws {
        let temporary = try TemporaryKeychain()
        try Keychain(service: "s", store: temporary.store).set("v", forKey: "k")
        let folder = temporary.fileURL.deletingLastPathComponent()
        // `users` (100 on Debian): a group of many, not the owner's own.
        #expect(chown(folder.path, geteuid(), 100) == 0)
        #expect(!KeychainFiles.isPrivateGroup(100, of: geteuid()))
        chmod(folder.path, permissions)
        #expect {
            _ = try temporary.reopen()
        } throws: { error in
            (error as? KeychainFileError)?.reason == .insecureFolder
                && "\(error)".contains("lets the group or others write in it")
        }
    }

    @Test(.enabled(if: KeychainFiles.isPrivateGroup(getegid(), of: geteuid()), "the user has a private group"))
    func aFolderTheOwnersPrivateGroupMayWriteInOpens() throws {
        let temporary = try TemporaryKeychain()
        try Keychain(service: "s", store: temporary.store).set("v", forKey: "k")
        let folder = temporary.fileURL.deletingLastPathComponent()
        #expect(chown(folder.path, geteuid(), getegid()) == 0)
        chmod(folder.path, 0o775)
        #expect(try Keychain(service: "s", store: temporary.reopen()).string(forKey: "k") == "v")
    }

    /// Giving a folder away takes root (CI and `make test` here run as root).
    @Test(.enabled(if: geteuid() == 0, "making a folder owned by another user needs root"))
    func aFolderOfAnotherUserIsRefused() throws {
        let temporary = try TemporaryKeychain()
        try Keychain(service: "s", store: temporary.store).set("v", forKey: "k")
        let folder = temporary.fileURL.deletingLastPathComponent()
        #expect(chown(folder.path, 65534, 65534) == 0)
        defer { chown(folder.path, 0, 0) }
        #expect {
            _ = try temporary.reopen()
        } throws: { error in
            (error as? KeychainFileError)?.reason == .insecureFolder
                && "\(error)".contains("it belongs to another user")
        }
        chown(folder.path, 0, 0)
        #expect(try Keychain(service: "s", store: temporary.reopen()).string(forKey: "k") == "v")
    }

    @Test func aKeychainPathWhoseFolderIsAFileIsRefusedClearly() throws {
        let temporary = try TemporaryKeychain()
        let notAFolder = temporary.fileURL.deletingLastPathComponent().appendingPathComponent("plain")
        try Data("x".utf8).write(to: notAFolder)
        #expect {
            try KeychainStore(fileURL: notAFolder.appendingPathComponent("k.keychain"), credential: .passphrase("p"))
                .open()
        } throws: { error in
            (error as? KeychainFileError)?.reason == .cannotCreate && "\(error)".contains("Not a directory")
        }
    }

    @Test func aKeyFileOfTheWrongSizeOrAMissingKeyFileIsRefusedClearly() throws {
        let temporary = try TemporaryKeychain()
        try Data([1, 2, 3]).write(to: temporary.keyFileURL)
        chmod(temporary.keyFileURL.path, 0o600)
        #expect { _ = try temporary.reopen() } throws: { ($0 as? KeychainFileError)?.reason == .invalidKeyFile }
        try FileManager.default.removeItem(at: temporary.keyFileURL)
        #expect { _ = try temporary.reopen() } throws: { ($0 as? KeychainFileError)?.reason == .missingKeyFile }
        #expect(!FileManager.default.fileExists(atPath: temporary.keyFileURL.path), "no new key is made up")
    }

    @Test func aKeyFileThatIsAFIFOIsRefusedAtOnceNotWaitedOn() throws {
        let temporary = try TemporaryKeychain()
        try temporary.keychain(service: "s").set("v", forKey: "k")
        try FileManager.default.removeItem(at: temporary.keyFileURL)
        #expect(mkfifo(temporary.keyFileURL.path, 0o600) == 0)
        // Opened on a thread of its own: with a blocking open it waits for a writer forever.
        let outcome = Mutex<(any Error)??>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread {
            let result: (any Error)?
            do {
                _ = try temporary.reopen()
                result = nil
            } catch {
                result = error
            }
            outcome.withLock { $0 = .some(result) }
            done.signal()
        }.start()
        if done.wait(timeout: .now() + 120) == .timedOut {
            Issue.record("the open waited on the FIFO for 120 s")
            // A writer lets the blocked open go on, so the thread ends.
            let writer = open(temporary.keyFileURL.path, O_WRONLY | O_NONBLOCK)
            _ = done.wait(timeout: .now() + 10)
            if writer >= 0 { close(writer) }
        }
        let error = try #require(outcome.withLock { $0 } ?? nil)
        #expect((error as? KeychainFileError)?.reason == .notARegularFile, "\(error)")
    }

    @Test func theDefaultFolderFollowsXDGDataHomeThenHome() {
        func folder(_ environment: [String: String]) -> String {
            KeychainFiles.defaultDirectory(variable: { environment[$0] }).path
        }
        #expect(folder(["XDG_DATA_HOME": "/data", "HOME": "/home/u"]) == "/data/wattle")
        #expect(folder(["HOME": "/home/u"]) == "/home/u/.local/share/wattle")
        #expect(folder(["XDG_DATA_HOME": "relative", "HOME": "/home/u"]) == "/home/u/.local/share/wattle")
    }

    @Test func twoStoresOnOneFileSeeEachOthersWrites() throws {
        let temporary = try TemporaryKeychain()
        let other = try temporary.reopen()
        try temporary.keychain(service: "s").set("from first", forKey: "a")
        try Keychain(service: "s", store: other).set("from second", forKey: "b")
        #expect(try Keychain(service: "s", store: other).string(forKey: "a") == "from first")
        #expect(try temporary.keychain(service: "s").allKeys() == ["a", "b"])
    }

    @Test func aFileThatIsNotAKeychainIsReportedNotSilentlyReplaced() throws {
        let temporary = try TemporaryKeychain()
        let path = temporary.directory.appendingPathComponent("garbage.keychain")
        try Data(repeating: 0x41, count: 4096).write(to: path)
        chmod(path.path, 0o600)
        #expect(keychainError { _ = try KeychainStore(fileURL: path, credential: temporary.credential) } == .decode)
        #expect(try Data(contentsOf: path) == Data(repeating: 0x41, count: 4096))
    }
}
