public import WattleKeychain

extension Keychain {
    /// A keychain for a service in a new in-memory store: nothing touches the disk, and the
    /// semantics (identity, lock state, errors) are those of a file.
    ///
    /// ```swift
    /// let keychain = Keychain.inMemory(service: "tests")
    /// try keychain.setCodable(token, forKey: "token")
    /// ```
    public static func inMemory(service: String = "test") -> Keychain {
        Keychain(service: service, store: .inMemory())
    }
}
