/// Little-endian integer encoding helpers.
enum Bytes {
    static func littleEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        withUnsafeBytes(of: value.littleEndian) { Array($0) }
    }

    /// Appends `value` little-endian, without the intermediate array of ``littleEndian(_:)``
    /// (hashing and sealing inputs are built from many small fields).
    static func append<T: FixedWidthInteger>(littleEndian value: T, to bytes: inout [UInt8]) {
        // Byte by byte: appending the value's raw buffer went through the generic sequence
        // path, which showed in profiles of the upsert.
        for shift in stride(from: 0, to: T.bitWidth, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> shift)) }
    }

    static func uint32(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(as: UInt32.self)) }
    }

    static func uint64(_ bytes: some Collection<UInt8>) -> UInt64 {
        var value: UInt64 = 0
        for (index, byte) in bytes.prefix(8).enumerated() { value |= UInt64(byte) << (8 * UInt64(index)) }
        return value
    }
}
