internal import CSodium

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// libsodium, initialised exactly once, and the few primitives the keychain uses.
enum Sodium {
    /// `sodium_init()`, run once for the process.
    static let isReady: Bool = sodium_init() >= 0

    static let keyBytes = 32
    static let hashBytes = 32
    static let nonceBytes = 24
    static let tagBytes = 16
    static let padBlock = 64

    /// Throws when libsodium could not be initialised.
    static func ensureReady() throws(KeychainError) {
        guard isReady else { throw .notAvailable }
    }

    static func randomBytes(_ count: Int) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            randombytes_buf(buffer.baseAddress!, count)
            initialized = count
        }
    }

    static func fillRandom(_ pointer: UnsafeMutableRawPointer, count: Int) {
        randombytes_buf(pointer, count)
    }

    /// Keyed BLAKE2b-256 (`crypto_generichash`).
    static func keyedHash(_ input: UnsafeRawBufferPointer, key: SecureBytes) -> [UInt8] {
        Bytes.make(count: hashBytes) { out in
            _ = crypto_generichash(
                out.baseAddress!.assumingMemoryBound(to: UInt8.self), hashBytes,
                input.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(input.count), key.bytes, key.count)
        }
    }

    static func keyedHash(_ input: [UInt8], key: SecureBytes) -> [UInt8] {
        input.withUnsafeBytes { keyedHash($0, key: key) }
    }

    /// XChaCha20-Poly1305 IETF with a random nonce; returns nonce || ciphertext || tag.
    static func seal(
        _ message: UnsafeRawBufferPointer, additionalData: UnsafeRawBufferPointer, key: SecureBytes
    ) -> [UInt8] {
        Bytes.make(count: nonceBytes + message.count + tagBytes) { out in
            let base = out.baseAddress!.assumingMemoryBound(to: UInt8.self)
            randombytes_buf(base, nonceBytes)
            var written: UInt64 = 0
            _ = crypto_aead_xchacha20poly1305_ietf_encrypt(
                base + nonceBytes, &written,
                message.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(message.count),
                additionalData.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(additionalData.count), nil,
                base, key.bytes)
        }
    }

    static func seal(_ message: UnsafeRawBufferPointer, additionalData: [UInt8], key: SecureBytes) -> [UInt8] {
        additionalData.withUnsafeBytes { seal(message, additionalData: $0, key: key) }
    }

    /// Opens nonce || ciphertext || tag into `output` (which must hold `sealed.count - 40`
    /// bytes); false when the blob or its associated data was altered.
    static func open(
        _ sealed: [UInt8], additionalData: UnsafeRawBufferPointer, key: SecureBytes,
        into output: UnsafeMutableRawPointer
    ) -> Bool {
        guard sealed.count >= nonceBytes + tagBytes else { return false }
        return sealed.withUnsafeBufferPointer { blob in
            var written: UInt64 = 0
            let base = blob.baseAddress!
            return crypto_aead_xchacha20poly1305_ietf_decrypt(
                output.assumingMemoryBound(to: UInt8.self), &written, nil,
                base + nonceBytes, UInt64(blob.count - nonceBytes),
                additionalData.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(additionalData.count),
                base, key.bytes) == 0
        }
    }

    static func open(
        _ sealed: [UInt8], additionalData: [UInt8], key: SecureBytes, into output: UnsafeMutableRawPointer
    ) -> Bool {
        additionalData.withUnsafeBytes { open(sealed, additionalData: $0, key: key, into: output) }
    }

    /// Derives subkey `id` of a master key (`crypto_kdf_derive_from_key`, context "WattleKC").
    static func deriveSubkey(_ id: UInt64, from master: SecureBytes) throws(KeychainError) -> SecureBytes {
        try deriveSubkeys([id], from: master)[0]
    }

    /// Derives several subkeys of a master key into one read-only allocation
    /// (``SecureBytes/parts(_:of:fill:)``), in the order of `ids`.
    static func deriveSubkeys(_ ids: [UInt64], from master: SecureBytes) throws(KeychainError) -> [SecureBytes] {
        let context: [CChar] = Array("WattleKC".utf8CString)
        return try master.withReadAccess { () throws(KeychainError) -> [SecureBytes] in
            try context.withUnsafeBufferPointer { ctx throws(KeychainError) -> [SecureBytes] in
                try SecureBytes.parts(ids.count, of: keyBytes) { index, subkey in
                    _ = crypto_kdf_derive_from_key(subkey, keyBytes, ids[index], ctx.baseAddress!, master.bytes)
                }
            }
        }
    }

    /// Argon2id (`crypto_pwhash`) of a passphrase into guarded memory.
    static func stretch(
        _ passphrase: String, salt: [UInt8], opsLimit: UInt64, memLimit: UInt64
    ) throws(KeychainError) -> SecureBytes {
        // All three come from the file's header: a damaged one must fail as `decode`, not read
        // past the salt, trap converting the limit, or run Argon2id for hours or over all memory.
        guard salt.count == saltBytes, acceptedOpsLimits.contains(opsLimit), acceptedMemLimits.contains(memLimit),
            let memLimit = Int(exactly: memLimit)
        else { throw .decode }
        let key = try SecureBytes(count: keyBytes)
        // Sized once, with room for the terminator: an append that grew the array would free
        // a first copy of the passphrase without wiping it.
        let length = passphrase.utf8.count
        var utf8 = [UInt8](repeating: 0, count: length + 1)  // never empty, so the buffer has an address
        defer { sodium_memzero(&utf8, utf8.count) }
        utf8.withUnsafeMutableBufferPointer { buffer in _ = buffer.initialize(from: passphrase.utf8) }
        let status = utf8.withUnsafeBufferPointer { pass in
            salt.withUnsafeBufferPointer { saltBytes in
                pass.withMemoryRebound(to: CChar.self) { chars in
                    crypto_pwhash(
                        key.mutableBytes, UInt64(keyBytes), chars.baseAddress!, UInt64(length),
                        saltBytes.baseAddress!, opsLimit, memLimit, crypto_pwhash_ALG_ARGON2ID13)
                }
            }
        }
        guard status == 0 else { throw .allocate }
        key.makeNoAccess()
        return key
    }

    static let saltBytes = Int(crypto_pwhash_SALTBYTES)

    /// The Argon2id limits a header may name: from libsodium's minimum to the
    /// ``KeychainCredential/PassphraseStrength/sensitive`` ones, the strongest Wattle writes
    /// (1 GiB, 4 passes). Beyond that a header is taken as damaged: a hostile one must not make
    /// the open allocate gigabytes (an out-of-memory kill on a small machine) or run for minutes.
    static let acceptedOpsLimits = UInt64(crypto_pwhash_opslimit_min())...UInt64(crypto_pwhash_opslimit_sensitive())
    static let acceptedMemLimits = UInt64(crypto_pwhash_memlimit_min())...UInt64(crypto_pwhash_memlimit_sensitive())

    static func limits(for strength: KeychainCredential.PassphraseStrength) -> (ops: UInt64, mem: UInt64) {
        switch strength {
        case .minimum: (UInt64(crypto_pwhash_opslimit_min()), UInt64(crypto_pwhash_memlimit_min()))
        case .interactive:
            (UInt64(crypto_pwhash_opslimit_interactive()), UInt64(crypto_pwhash_memlimit_interactive()))
        case .moderate: (UInt64(crypto_pwhash_opslimit_moderate()), UInt64(crypto_pwhash_memlimit_moderate()))
        case .sensitive: (UInt64(crypto_pwhash_opslimit_sensitive()), UInt64(crypto_pwhash_memlimit_sensitive()))
        }
    }

    /// ISO/IEC 7816-4 padding to a multiple of ``padBlock`` (`sodium_pad`), at least one byte.
    static func paddedCount(_ count: Int) -> Int { (count / padBlock + 1) * padBlock }

    static func pad(_ buffer: UnsafeMutablePointer<UInt8>, count: Int, capacity: Int) -> Bool {
        var padded = 0
        return sodium_pad(&padded, buffer, count, padBlock, capacity) == 0 && padded == capacity
    }

    static func unpaddedCount(_ buffer: UnsafePointer<UInt8>, paddedCount: Int) -> Int? {
        var count = 0
        guard paddedCount > 0, sodium_unpad(&count, buffer, paddedCount, padBlock) == 0 else { return nil }
        return count
    }

    static func wipe(_ pointer: UnsafeMutableRawPointer, count: Int) {
        sodium_memzero(pointer, count)
    }

    /// Overwrites the bytes of a plaintext the engine opened for its own use (to seal it again,
    /// or to test it) once done with it. In place when `data` is its buffer's only owner, as
    /// such a plaintext is; a copy someone else still holds is theirs and is left alone.
    static func wipe(_ data: inout Data) {
        data.withUnsafeMutableBytes { bytes in
            if let base = bytes.baseAddress { wipe(base, count: bytes.count) }
        }
    }
}
