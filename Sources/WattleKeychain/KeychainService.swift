/// Reads and writes values by key: what a credential consumer (a token store) depends on.
///
/// ``Keychain`` conforms; a test can substitute its own conformer or an in-memory keychain.
public protocol KeychainService: KeychainReader, KeychainWriter {}
