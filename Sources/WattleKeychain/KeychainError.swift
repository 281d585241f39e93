#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// An error from a keychain operation, identified by Apple's `errSec` status numbers.
///
/// The numbers are the ones Apple's Security framework uses, so code ported from iOS that
/// compares statuses keeps working:
///
/// ```swift
/// do {
///     try store.add(item)
/// } catch KeychainError.duplicateItem {
///     try store.update(query, with: change)
/// }
/// ```
///
/// Convert both ways with ``init(status:)`` and ``status``. A description says what happened
/// and what to do; it never contains a secret, a service, an account or a key.
public enum KeychainError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No error (`errSecSuccess`, 0). Present so that every status maps to a value.
    case success
    /// The operation is not implemented (`errSecUnimplemented`, -4).
    case unimplemented
    /// The disk is full (`errSecDiskFull`, -34).
    case diskFull
    /// An input/output error occurred while reading or writing the keychain file (`errSecIO`, -36).
    case io
    /// A parameter was invalid, for example an empty service or key (`errSecParam`, -50).
    case param
    /// Memory could not be allocated (`errSecAllocate`, -108).
    case allocate
    /// The keychain file is read-only (`errSecReadOnly`, -25292).
    case readOnly
    /// The keychain is not available, for example its file cannot be opened or is busy
    /// (`errSecNotAvailable`, -25291).
    case notAvailable
    /// The passphrase or key does not open this keychain (`errSecAuthFailed`, -25293).
    case authFailed
    /// An item with the same identity already exists (`errSecDuplicateItem`, -25299).
    case duplicateItem
    /// An item's data or attributes are too large to store (`errSecDataTooLarge`, -25302): one
    /// value of a keychain file holds at most SQLite's length limit (about 1 GB by default).
    case dataTooLarge
    /// No item matches the query (`errSecItemNotFound`, -25300).
    case itemNotFound
    /// The keychain is locked and the item's accessibility needs it unlocked
    /// (`errSecInteractionNotAllowed`, -25308).
    case interactionNotAllowed
    /// Stored data could not be decoded: it was damaged or tampered with, or a typed read asked
    /// for a different type than was stored (`errSecDecode`, -26275).
    case decode
    /// Any other status.
    case unhandled(Int32)

    /// Creates the error for a raw `OSStatus`-style status; unknown statuses become ``unhandled(_:)``.
    ///
    /// ```swift
    /// KeychainError(status: -25300) == .itemNotFound  // true
    /// ```
    public init(status: Int32) {
        switch status {
        case 0: self = .success
        case -4: self = .unimplemented
        case -34: self = .diskFull
        case -36: self = .io
        case -50: self = .param
        case -108: self = .allocate
        case -25292: self = .readOnly
        case -25291: self = .notAvailable
        case -25293: self = .authFailed
        case -25299: self = .duplicateItem
        case -25302: self = .dataTooLarge
        case -25300: self = .itemNotFound
        case -25308: self = .interactionNotAllowed
        case -26275: self = .decode
        default: self = .unhandled(status)
        }
    }

    /// The raw `OSStatus`-style status, as Apple's Security framework would return it.
    public var status: Int32 {
        switch self {
        case .success: 0
        case .unimplemented: -4
        case .diskFull: -34
        case .io: -36
        case .param: -50
        case .allocate: -108
        case .readOnly: -25292
        case .notAvailable: -25291
        case .authFailed: -25293
        case .duplicateItem: -25299
        case .dataTooLarge: -25302
        case .itemNotFound: -25300
        case .interactionNotAllowed: -25308
        case .decode: -26275
        case .unhandled(let status): status
        }
    }

    /// What happened and what to do, with the status number; never contains a secret.
    public var description: String {
        let text: String
        switch self {
        case .success:
            text = "The operation succeeded."
        case .unimplemented:
            text =
                "This keychain operation is not implemented, or the keychain file is in a format this version does not read (made by a later Wattle)."
        case .diskFull:
            text = "The disk holding the keychain is full; free some space and try again."
        case .io:
            text = "Reading or writing the keychain file failed; check the disk and the file, then try again."
        case .param:
            text =
                "A parameter was invalid (for example an empty service or key, a key that is not 32 bytes, "
                + "or a keychain name that is empty, \".\" or \"..\", or holds \"/\" or NUL)."
        case .allocate:
            text = "Memory for key material could not be allocated."
        case .readOnly:
            text = "The keychain file is read-only; check its permissions and the file system."
        case .notAvailable:
            text = "The keychain is not available (it cannot be opened or stayed busy); try again."
        case .authFailed:
            text = "The passphrase or key does not open this keychain; supply the one it was created with."
        case .duplicateItem:
            text = "An item with the same identity already exists; update it instead, or use set, which replaces."
        case .dataTooLarge:
            text =
                "The item is too large for the keychain (its data or attributes exceed the size one stored value may have); "
                + "store a smaller value, or keep large data in a file and only its key in the keychain."
        case .itemNotFound:
            text = "No keychain item matches the query."
        case .interactionNotAllowed:
            text = "The keychain is locked and this item is only readable when unlocked; call unlock first."
        case .decode:
            text =
                "Stored data could not be decoded: the item was damaged or tampered with, "
                + "or was read as a different type than it was stored as."
        case .unhandled:
            text = "The keychain returned an unexpected status."
        }
        return "\(text) (status \(status))"
    }
}

extension KeychainError: LocalizedError {
    /// The same text as ``description``, so `error.localizedDescription` carries it.
    public var errorDescription: String? { description }
}
