/// When an item's secret can be read, as in Apple's `kSecAttrAccessible`.
///
/// Wattle keeps two class keys: items whose accessibility needs the keychain unlocked
/// (``whenUnlocked``, ``whenUnlockedThisDeviceOnly``, ``whenPasscodeSetThisDeviceOnly``) are
/// sealed with one that ``KeychainStore/lock()`` wipes from memory, so their secrets fail with
/// ``KeychainError/interactionNotAllowed`` until ``KeychainStore/unlock(with:)``. The
/// ``afterFirstUnlock`` classes use a key kept while the keychain is open, so they stay readable
/// (for background work). "This device only" is recorded and returned but changes nothing on
/// Linux: nothing is synchronised anywhere by Wattle.
public enum KeychainAccessibility: String, Sendable, Hashable, CaseIterable, Codable {
    /// Readable only while the keychain is unlocked (Apple's default).
    case whenUnlocked
    /// Readable after the keychain was first opened, also while it is locked.
    case afterFirstUnlock
    /// Like ``whenUnlocked``, and marked as never to leave this device.
    case whenUnlockedThisDeviceOnly
    /// Like ``afterFirstUnlock``, and marked as never to leave this device.
    case afterFirstUnlockThisDeviceOnly
    /// Like ``whenUnlockedThisDeviceOnly`` (there is no device passcode on Linux).
    case whenPasscodeSetThisDeviceOnly

    /// Whether the item never leaves this device (the `…ThisDeviceOnly` ones): a synchronizable
    /// item cannot have it.
    var isThisDeviceOnly: Bool {
        switch self {
        case .whenUnlockedThisDeviceOnly, .afterFirstUnlockThisDeviceOnly, .whenPasscodeSetThisDeviceOnly: true
        case .whenUnlocked, .afterFirstUnlock: false
        }
    }

    /// Whether reading the secret needs the keychain unlocked.
    public var requiresUnlock: Bool {
        switch self {
        case .whenUnlocked, .whenUnlockedThisDeviceOnly, .whenPasscodeSetThisDeviceOnly: true
        case .afterFirstUnlock, .afterFirstUnlockThisDeviceOnly: false
        }
    }
}
