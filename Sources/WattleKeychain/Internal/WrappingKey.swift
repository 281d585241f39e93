/// The key that wraps the master key, from a passphrase, a key file or key bytes.
enum WrappingKey {
    /// Makes the wrapping for a new keychain (or a new credential): fresh salt for a passphrase,
    /// a key file created when missing.
    static func create(for credential: KeychainCredential) throws -> (KeychainHeader.Wrapping, SecureBytes) {
        switch credential.kind {
        case .passphrase(let passphrase, let strength):
            let salt = Sodium.randomBytes(Sodium.saltBytes)
            let limits = Sodium.limits(for: strength)
            let key = try Sodium.stretch(passphrase, salt: salt, opsLimit: limits.ops, memLimit: limits.mem)
            return (.passphrase(salt: salt, opsLimit: limits.ops, memLimit: limits.mem), key)
        case .keyFile(let url):
            return (.key, try KeyFile.readOrCreate(url))
        case .key(let bytes):
            return (.key, try copy(bytes))
        }
    }

    /// Derives the wrapping key of an existing keychain; `authFailed` when the credential is of
    /// the wrong kind.
    static func derive(for credential: KeychainCredential, wrapping: KeychainHeader.Wrapping) throws -> SecureBytes {
        switch (credential.kind, wrapping) {
        case (.passphrase(let passphrase, _), .passphrase(let salt, let ops, let mem)):
            return try Sodium.stretch(passphrase, salt: salt, opsLimit: ops, memLimit: mem)
        case (.keyFile(let url), .key):
            return try KeyFile.read(url)
        case (.key(let bytes), .key):
            return try copy(bytes)
        default:
            throw KeychainError.authFailed
        }
    }

    private static func copy(_ bytes: [UInt8]) throws(KeychainError) -> SecureBytes {
        guard bytes.count == Sodium.keyBytes else { throw .param }
        let key = try SecureBytes(copying: bytes)
        key.makeNoAccess()
        return key
    }

    /// Seals the master key with the wrapping key.
    static func wrap(_ master: SecureBytes, with key: SecureBytes, associatedData: [UInt8]) -> [UInt8] {
        key.withReadAccess {
            master.withReadAccess {
                Sodium.seal(
                    UnsafeRawBufferPointer(start: master.bytes, count: master.count),
                    additionalData: associatedData, key: key)
            }
        }
    }

    /// Opens the wrapped master key into guarded memory; `authFailed` when the key is wrong.
    static func unwrap(_ wrapped: [UInt8], with key: SecureBytes, associatedData: [UInt8]) throws(KeychainError)
        -> SecureBytes
    {
        guard wrapped.count == Sodium.nonceBytes + Sodium.keyBytes + Sodium.tagBytes else { throw .decode }
        let master = try SecureBytes(count: Sodium.keyBytes)
        let opened = key.withReadAccess {
            Sodium.open(wrapped, additionalData: associatedData, key: key, into: master.mutableBytes)
        }
        guard opened else { throw .authFailed }
        master.makeNoAccess()
        return master
    }

    /// A new random master key in guarded memory.
    static func newMaster() throws(KeychainError) -> SecureBytes {
        let master = try SecureBytes(count: Sodium.keyBytes)
        Sodium.fillRandom(master.mutableBytes, count: Sodium.keyBytes)
        master.makeNoAccess()
        return master
    }
}
