public import WattleKeychain

extension Keychain {
    /// A keychain for a service in a new in-memory store: nothing touches the disk, and the
    /// semantics (identity, lock state, errors) are those of a file, with two exceptions:
    /// ``KeychainStore/unlock()`` with no credential always works (the store keeps its random
    /// key bytes, where a file's store keeps only a key file's location), and there are no
    /// ``KeychainFileError``s. Use ``TemporaryKeychain`` to test those.
    ///
    /// ```swift
    /// let keychain = Keychain.inMemory(service: "tests")
    /// try keychain.setCodable(token, forKey: "token")
    /// ```
    public static func inMemory(service: String = "test") -> Keychain {
        Keychain(service: service, store: .inMemory())
    }
}
