#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Entry points for the sealed-record fuzz target under `Fuzz/` (`make fuzz`). Package access
/// only: not part of the public API, and nothing in the library calls them.
///
/// They run the code that turns stored bytes back into items: opening a row's two sealed
/// blobs, decoding the attributes plaintext, removing the secret's padding, reading the header
/// from the `meta` table and the typed value encodings.
package enum FuzzEntryPoints {
    /// An engine over an in-memory store with fixed key bytes, opened once (libFuzzer runs
    /// inputs one at a time on one thread).
    nonisolated(unsafe) private static let engine: KeychainEngine = {
        do {
            return try KeychainEngine.open(
                storage: MemoryStorage(), credential: .key([UInt8](repeating: 0x5A, count: Sodium.keyBytes)))
        } catch {
            fatalError("cannot open the fuzzing keychain: \(error)")
        }
    }()

    /// Opens a row whose columns are arbitrary bytes, as a read does after SQLite returned it.
    /// Returns the error of each blob, nil when it opened.
    package static func openStoredRow(
        id: [UInt8], itemClass: UInt8, group: [UInt8], protection: UInt8, attributes: [UInt8], secret: [UInt8]
    ) -> (secret: KeychainError?, attributes: KeychainError?) {
        let row = StoredRow(
            id: id, itemClass: itemClass, group: group, protection: protection, attributes: attributes, secret: secret)
        return (error { _ = try engine.openSecret(row) }, error { _ = try engine.openAttributes(row) })
    }

    /// Seals `plaintext` as the attributes blob of a row with the engine's real key and opens it
    /// again, so that the attribute decoder sees arbitrary authenticated input. Returns the
    /// error, or the canonical encoding of what was decoded and whether decoding that encoding
    /// gives the same bytes again.
    package static func openAuthenticatedAttributes(_ plaintext: [UInt8], itemClass: UInt8, protection: UInt8)
        -> Result<(canonical: [UInt8], stable: Bool), KeychainError>
    {
        let id = [UInt8](repeating: 0x11, count: Sodium.hashBytes)
        let group = [UInt8](repeating: 0x22, count: Sodium.hashBytes)
        let ad = engine.associatedData(.attributes, itemClass: itemClass, protection: protection, id: id, group: group)
        let sealed = plaintext.withUnsafeBytes { Sodium.seal($0, additionalData: ad, key: engine.keys.attributes) }
        let row = StoredRow(
            id: id, itemClass: itemClass, group: group, protection: protection, attributes: sealed, secret: [])
        do {
            let decoded = try engine.openAttributes(row)
            let canonical = AttributeCoding.encode(
                decoded.attributes, accessibility: decoded.accessibility, synchronizable: decoded.synchronizable)
            let again = try AttributeCoding.decode(canonical)
            let reencoded = AttributeCoding.encode(
                again.attributes, accessibility: again.accessibility, synchronizable: again.synchronizable)
            return .success((canonical, reencoded == canonical))
        } catch let error as KeychainError {
            return .failure(error)
        } catch {
            return .failure(.unhandled(0))
        }
    }

    /// Seals `padded` (taken as an already padded secret) with the class key of `protection`
    /// and opens it: the padding check sees arbitrary authenticated input.
    package static func openAuthenticatedSecret(_ padded: [UInt8], protection: UInt8) -> Result<[UInt8], KeychainError>
    {
        let id = [UInt8](repeating: 0x33, count: Sodium.hashBytes)
        let group = [UInt8](repeating: 0x44, count: Sodium.hashBytes)
        let itemClass = KeychainItemClass.genericPassword.rawValue
        let key = engine.keys.classKey(KeyRing.Protection(rawValue: protection) ?? .afterFirstUnlock)!
        // Any attributes blob: the secret is bound to its tag.
        let attributes = [UInt8](repeating: 0x55, count: Sodium.nonceBytes + Sodium.tagBytes)
        let ad = engine.associatedData(
            .secret, itemClass: itemClass, protection: protection, id: id, group: group,
            binding: engine.secretBinding(attributes: attributes) ?? [])
        let sealed = padded.withUnsafeBytes { Sodium.seal($0, additionalData: ad, key: key) }
        let row = StoredRow(
            id: id, itemClass: itemClass, group: group, protection: protection, attributes: attributes, secret: sealed)
        do {
            return .success(Array(try engine.openSecret(row)))
        } catch let error as KeychainError {
            return .failure(error)
        } catch {
            return .failure(.unhandled(0))
        }
    }

    /// Reads a header from `meta` entries, as opening a keychain file does; nil when valid.
    package static func decodeHeader(_ meta: [String: [UInt8]]) -> KeychainError? {
        error { _ = try KeychainHeader(meta: meta) }
    }

    /// Decodes `data` with every typed value encoding and checks that what decodes encodes
    /// back to the same bytes; returns the names of the encodings that did not.
    package static func valueEncodingsThatDoNotRoundTrip(_ bytes: [UInt8]) -> [String] {
        let data = Data(bytes)
        var broken: [String] = []
        if let value = try? ValueEncoding.string(data), ValueEncoding.encode(value) != data { broken.append("String") }
        if let value = try? ValueEncoding.bool(data), ValueEncoding.encode(value) != data { broken.append("Bool") }
        if let value = try? ValueEncoding.integer(data), ValueEncoding.encode(value) != data { broken.append("Int") }
        if let value = try? ValueEncoding.double(data), ValueEncoding.encode(value) != data { broken.append("Double") }
        if let value = try? ValueEncoding.float(data), ValueEncoding.encode(value) != data { broken.append("Float") }
        _ = try? ValueEncoding.decode([String: String].self, from: data)
        return broken
    }

    private static func error(_ body: () throws -> Void) -> KeychainError? {
        do {
            try body()
            return nil
        } catch let error as KeychainError {
            return error
        } catch {
            return .unhandled(0)
        }
    }
}
