/// Which items a query matches by their synchronizable flag, as in Apple's
/// `kSecAttrSynchronizable` (with `kSecAttrSynchronizableAny`).
///
/// A query matches only non-synchronizable items unless it says otherwise (``no`` is the
/// default), and ``any`` matches both. The flag is part of an item's identity: a synchronizable
/// and a non-synchronizable item with the same other attributes are two items. Wattle stores
/// and matches the flag; nothing is synchronised by itself.
public enum KeychainSynchronizable: Sendable, Hashable, CaseIterable {
    /// Only items that are not synchronizable (the default).
    case no
    /// Only synchronizable items.
    case yes
    /// Both.
    case any

    /// The flag values this matches.
    var flags: [Bool] {
        switch self {
        case .no: [false]
        case .yes: [true]
        case .any: [false, true]
        }
    }
}
