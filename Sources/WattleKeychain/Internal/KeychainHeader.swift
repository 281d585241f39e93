/// The keychain's header, kept in the `meta` table: format, identifier, key version, how the
/// master key is wrapped (Argon2id parameters and salt, or a 32-byte key), and the wrapped key.
struct KeychainHeader {
    /// The format new keychains are made in. Format 2 binds each secret to its row's sealed
    /// attributes as well (see ``KeychainEngine/secretBinding(attributes:)``); format 1, which
    /// did not, is still read and written in its own way.
    static let currentFormat: UInt8 = 2
    /// The formats this version opens.
    static let readableFormats: ClosedRange<UInt8> = 1...2

    enum Wrapping: Equatable {
        case passphrase(salt: [UInt8], opsLimit: UInt64, memLimit: UInt64)
        case key

        var tag: UInt8 {
            switch self {
            case .passphrase: 1
            case .key: 2
            }
        }
    }

    var format: UInt8
    var keychainID: [UInt8]
    var keyVersion: UInt32
    var wrapping: Wrapping
    var wrappedKey: [UInt8]

    init(format: UInt8, keychainID: [UInt8], keyVersion: UInt32, wrapping: Wrapping, wrappedKey: [UInt8]) {
        self.format = format
        self.keychainID = keychainID
        self.keyVersion = keyVersion
        self.wrapping = wrapping
        self.wrappedKey = wrappedKey
    }

    /// Reads a header from the `meta` table's entries; `decode` when it is malformed.
    init(meta: [String: [UInt8]]) throws(KeychainError) {
        guard let format = meta["format"], format.count == 1,
            let id = meta["keychain_id"], id.count == 16,
            let version = meta["key_version"], version.count == 4,
            let kind = meta["wrapping"], kind.count == 1,
            let wrapped = meta["wrapped_key"]
        else { throw .decode }
        guard Self.readableFormats.contains(format[0]) else { throw .unimplemented }
        self.format = format[0]
        keychainID = id
        keyVersion = Bytes.uint32(version)
        wrappedKey = wrapped
        switch kind[0] {
        case 1:
            guard let salt = meta["salt"], salt.count == Sodium.saltBytes, let ops = meta["opslimit"], ops.count == 8,
                let mem = meta["memlimit"], mem.count == 8
            else { throw .decode }
            wrapping = .passphrase(salt: salt, opsLimit: Bytes.uint64(ops), memLimit: Bytes.uint64(mem))
        case 2:
            wrapping = .key
        default:
            throw .decode
        }
    }

    /// The `meta` table's entries for this header.
    var meta: [String: [UInt8]] {
        var entries: [String: [UInt8]] = [
            "format": [format],
            "keychain_id": keychainID,
            "key_version": Bytes.littleEndian(keyVersion),
            "wrapping": [wrapping.tag],
            "wrapped_key": wrappedKey,
        ]
        if case .passphrase(let salt, let ops, let mem) = wrapping {
            entries["salt"] = salt
            entries["opslimit"] = Bytes.littleEndian(ops)
            entries["memlimit"] = Bytes.littleEndian(mem)
        }
        return entries
    }

    /// Associated data of the wrapped master key: binds it to this keychain and wrapping.
    var wrapAssociatedData: [UInt8] {
        Array("wattle.keychain.wrap".utf8) + [format] + keychainID + Bytes.littleEndian(keyVersion) + [wrapping.tag]
    }
}
