/// The keys of an open keychain, derived from the master key with `crypto_kdf`.
///
/// Subkeys: 1 identity hash, 2 group hash, 3 attribute sealing, 4 the `afterFirstUnlock`
/// class, 5 the `whenUnlocked` class. ``lock()`` releases (and so zeroes) the master key and
/// the `whenUnlocked` class key; the others stay so that `afterFirstUnlock` items and item
/// attributes remain readable.
final class KeyRing {
    enum Subkey: UInt64 {
        case identity = 1
        case group = 2
        case attributes = 3
        case afterFirstUnlock = 4
        case whenUnlocked = 5
    }

    /// Protection classes stored with each row.
    enum Protection: UInt8 {
        case afterFirstUnlock = 0
        case whenUnlocked = 1

        init(_ accessibility: KeychainAccessibility) {
            self = accessibility.requiresUnlock ? .whenUnlocked : .afterFirstUnlock
        }
    }

    private(set) var master: SecureBytes?
    let identity: SecureBytes
    let group: SecureBytes
    let attributes: SecureBytes
    let afterFirstUnlock: SecureBytes
    private(set) var whenUnlocked: SecureBytes?

    init(master: SecureBytes) throws(KeychainError) {
        self.master = master
        // The four that live as long as the keychain share one allocation; `whenUnlocked` has
        // its own, released by `lock()`.
        let lasting: [Subkey] = [.identity, .group, .attributes, .afterFirstUnlock]
        let keys = try Sodium.deriveSubkeys(lasting.map(\.rawValue), from: master)
        (identity, group, attributes, afterFirstUnlock) = (keys[0], keys[1], keys[2], keys[3])
        whenUnlocked = try Sodium.deriveSubkey(Subkey.whenUnlocked.rawValue, from: master)
    }

    var isLocked: Bool { whenUnlocked == nil }

    func lock() {
        master = nil
        whenUnlocked = nil
    }

    func unlock(master: SecureBytes) throws(KeychainError) {
        whenUnlocked = try Sodium.deriveSubkey(Subkey.whenUnlocked.rawValue, from: master)
        self.master = master
    }

    /// The class key for a protection class; nil while locked.
    func classKey(_ protection: Protection) -> SecureBytes? {
        switch protection {
        case .afterFirstUnlock: afterFirstUnlock
        case .whenUnlocked: whenUnlocked
        }
    }
}
