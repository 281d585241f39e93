import Foundation
import Testing

@testable import WattleKeychain

/// Changes to the keychain file itself, byte by byte: each changed file either fails with a
/// clear error, or fails the affected items with `decode` (or no longer finds them), or is
/// harmless; it never yields wrong plaintext and never crashes. Truncated and zeroed files
/// give a clear error.
///
/// `make test` changes every byte of the sealed blobs, hashes and header values and one byte
/// in 16 elsewhere; `WATTLE_TAMPER=full` (`make soak`) changes every byte of the file, each in
/// two ways.
@Suite(.serialized) struct FileTamperTests {
    static let values: [String: String] = [
        "alpha": "value-of-alpha", "beta": String(repeating: "b", count: 200), "gamma": "",
    ]

    /// A closed keychain file (no WAL left) with the three values, its key file and the byte
    /// ranges that hold sealed blobs, hashes and header values.
    struct Fixture {
        var folder: URL
        var url: URL
        var keyURL: URL
        var original: [UInt8]
        /// Sealed blobs and the wrapped master key: stored once, covered by an AEAD tag.
        var sealed: [Range<Int>]
        /// Hashes and other header values (stored in the table and, for hashes, again in
        /// indexes: a change to an index copy can be harmless).
        var sensitive: [Range<Int>]
    }

    static func makeFixture() throws -> Fixture {
        let folder = try Reliability.temporaryFolder("wattle-tamper")
        let url = folder.appendingPathComponent("t.keychain")
        let keyURL = folder.appendingPathComponent("t.key")
        var pieces: [[UInt8]] = []
        var sealedPieces: [[UInt8]] = []
        do {
            let store = try KeychainStore(fileURL: url, credential: .keyFile(keyURL))
            let keychain = Keychain(service: "svc", store: store)
            for (key, value) in values { try keychain.set(value, forKey: key) }
            try store.withStorage { storage in
                for row in try storage.allRows() {
                    pieces += [row.id, row.group]
                    sealedPieces += [row.attributes, row.secret]
                }
                let meta = try storage.readMeta()
                sealedPieces += meta["wrapped_key"].map { [$0] } ?? []
                pieces += meta.filter { $0.key != "wrapped_key" && $0.value.count >= 4 }.map(\.value)
            }
        }
        #expect(!FileManager.default.fileExists(atPath: url.path + "-wal"), "the WAL was checkpointed on close")
        let original = try [UInt8](Data(contentsOf: url))
        let sensitive = pieces.compactMap { piece in Self.range(of: piece, in: original) }
        let sealed = sealedPieces.compactMap { piece in Self.range(of: piece, in: original) }
        #expect(
            sensitive.count == pieces.count && sealed.count == sealedPieces.count, "every piece is in the main file")
        return Fixture(
            folder: folder, url: url, keyURL: keyURL, original: original, sealed: sealed, sensitive: sensitive)
    }

    static func range(of piece: [UInt8], in bytes: [UInt8]) -> Range<Int>? {
        guard !piece.isEmpty, piece.count <= bytes.count else { return nil }
        for start in 0...(bytes.count - piece.count) where bytes[start] == piece[0] {
            if bytes[start..<(start + piece.count)].elementsEqual(piece) { return start..<(start + piece.count) }
        }
        return nil
    }

    /// How one changed file behaved.
    enum Outcome: Hashable, CustomStringConvertible {
        case openFailed(String)
        case intact
        case itemsFailed(decode: Int, notFound: Int, other: Int)

        var description: String {
            switch self {
            case .openFailed(let error): "open failed: \(error)"
            case .intact: "harmless"
            case .itemsFailed(let decode, let notFound, let other):
                "items failed: \(decode) decode, \(notFound) not found, \(other) other"
            }
        }
    }

    /// Writes `bytes` as the keychain file (no WAL), opens and reads everything.
    static func check(_ bytes: [UInt8], _ fixture: Fixture, label: String) -> Outcome {
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: fixture.url.path + suffix) }
        do {
            try Data(bytes).write(to: fixture.url)
        } catch {
            Issue.record("cannot write the changed file: \(error)")
            return .openFailed("write")
        }
        let keychain: Keychain
        do {
            let store = try KeychainStore(fileURL: fixture.url, credential: .keyFile(fixture.keyURL))
            keychain = Keychain(service: "svc", store: store)
        } catch {
            #expect(error is KeychainError || error is KeychainFileError, "\(label): \(type(of: error)) \(error)")
            #expect(!String(describing: error).isEmpty)
            return .openFailed(Self.name(error))
        }
        var decode = 0
        var notFound = 0
        var other = 0
        for (key, value) in values {
            do {
                // The secret, then the attributes (each blob is opened by one of these).
                let read = try keychain.string(forKey: key)
                if read == nil { notFound += 1 }
                #expect(read == nil || read == value, "\(label): WRONG PLAINTEXT for \(key)")
                let accessibility = try keychain.accessibility(forKey: key)
                #expect(accessibility == nil || accessibility == .whenUnlocked, "\(label): wrong attributes for \(key)")
            } catch KeychainError.decode {
                decode += 1
            } catch {
                #expect(error is KeychainError, "\(label): \(key): \(type(of: error)) \(error)")
                other += 1
            }
        }
        if let keys = try? keychain.allKeys() {
            #expect(Set(keys).isSubset(of: values.keys), "\(label): allKeys listed \(keys)")
        }
        return decode + notFound + other == 0 ? .intact : .itemsFailed(decode: decode, notFound: notFound, other: other)
    }

    static func name(_ error: any Error) -> String { Reliability.name(error) }

    @Test(.timeLimit(.minutes(30)))
    func changingAnyByteOfTheFileNeverYieldsWrongPlaintext() async throws {
        let fixture = try Self.makeFixture()
        defer { try? FileManager.default.removeItem(at: fixture.folder) }
        let full = Reliability.isFullTamper
        let sealed = Set(fixture.sealed.flatMap { Array($0) })
        let sensitive = sealed.union(fixture.sensitive.flatMap { Array($0) })
        let positions = (0..<fixture.original.count).filter { full || sensitive.contains($0) || $0 % 16 == 0 }
        let changes: [(String, (UInt8) -> UInt8)] =
            full ? [("xor 01", { $0 ^ 0x01 }), ("xor ff", { $0 ^ 0xFF })] : [("xor 01", { $0 ^ 0x01 })]
        var outcomes: [String: Int] = [:]
        var blobOutcomes: [String: Int] = [:]
        var sealedOutcomes: [String: Int] = [:]
        let started = Date()
        var tried = 0
        for position in positions {
            for (changeName, change) in changes {
                var bytes = fixture.original
                bytes[position] = change(bytes[position])
                let outcome = Self.check(bytes, fixture, label: "byte \(position) \(changeName)")
                tried += 1
                // ~1 ms a change, ~2,000 changes: let the rest of the suite's tasks run between
                // them rather than hold one of the pool's two threads for seconds.
                if tried % 16 == 0 { await Task.yield() }
                let kind: String
                switch outcome {
                case .openFailed(let error): kind = "open failed \(error)"
                case .intact: kind = "harmless"
                case .itemsFailed(let decode, let notFound, let other):
                    kind = decode > 0 ? "item decode" : notFound > 0 ? "item not found" : "item other \(other)"
                }
                outcomes[kind, default: 0] += 1
                if sensitive.contains(position) { blobOutcomes[kind, default: 0] += 1 }
                if sealed.contains(position) { sealedOutcomes[kind, default: 0] += 1 }
            }
        }
        // Every byte of a sealed blob and of the wrapped key is covered by its tag.
        #expect(sealedOutcomes["harmless"] == nil, "changed sealed bytes went unnoticed: \(sealedOutcomes)")
        #expect(!sealed.isEmpty)
        let summary = outcomes.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
        Reliability.report(
            "tamper: \(tried) single-byte changes (\(positions.count) of \(fixture.original.count) bytes, "
                + "\(changes.count) per byte\(full ? ", every byte" : "")): \(summary); no wrong plaintext, no crash; "
                + "sealed bytes (\(sealed.count)): "
                + sealedOutcomes.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
                + "; hash/header/sealed bytes: "
                + blobOutcomes.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
                + String(format: " (%.1f s)", Date().timeIntervalSince(started)))
    }

    @Test func truncatedAndZeroedFilesGiveAClearErrorNotACrash() throws {
        let fixture = try Self.makeFixture()
        defer { try? FileManager.default.removeItem(at: fixture.folder) }
        let size = fixture.original.count
        var results: [String] = []
        var openedAsNew: [String] = []
        let lengths = [1, 2, 8, 16, 50, 99, 100, 511, 512, 4095, 4096, 4097, size / 2, size - 4096, size - 1]
        for length in lengths where length > 0 && length < size {
            let outcome = Self.check(Array(fixture.original.prefix(length)), fixture, label: "truncated to \(length)")
            results.append("truncated to \(length): \(outcome)")
            if case .itemsFailed(_, let notFound, _) = outcome, notFound > 0 { openedAsNew.append("\(length)") }
            #expect(outcome != .intact || length >= size - 4096, "truncated to \(length) read everything")
        }
        let zeroed = Self.check([UInt8](repeating: 0, count: size), fixture, label: "zeroed")
        results.append("all zero: \(zeroed)")
        #expect(zeroed == .openFailed("KeychainError.decode"), "\(zeroed)")
        for page in stride(from: 0, to: size, by: 4096) {
            var bytes = fixture.original
            for index in page..<min(size, page + 4096) { bytes[index] = 0 }
            results.append(
                "page \(page / 4096) zeroed: \(Self.check(bytes, fixture, label: "page \(page / 4096) zeroed"))")
        }
        #expect(openedAsNew.isEmpty, "files truncated to \(openedAsNew) opened as a new keychain")
        // An empty file is a keychain being created (a crash right after creating the file
        // leaves one): it opens as a new, empty keychain.
        let empty = Self.check([], fixture, label: "empty")
        results.append("empty: \(empty) (a new keychain)")
        Reliability.report("truncated/zeroed (\(size)-byte file): " + results.joined(separator: "; "))
    }
}
