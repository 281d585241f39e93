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

    /// A new array of `count` bytes, all written by `body`. Up to 1 KiB the bytes are written on
    /// the stack and copied into the array: callgrind counted ~400 instructions for that against
    /// ~700 for `Array(unsafeUninitializedCapacity:initializingWith:)` or
    /// `Array(repeating:count:)`, which look up `_ContiguousArrayStorage<UInt8>`'s metadata
    /// through the runtime's slow path on each call. Hashes and sealed blobs are made this way.
    static func make(count: Int, _ body: (UnsafeMutableRawBufferPointer) -> Void) -> [UInt8] {
        guard count <= 1024 else {
            return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
                body(UnsafeMutableRawBufferPointer(buffer))
                initialized = count
            }
        }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: count) { buffer in
            body(UnsafeMutableRawBufferPointer(buffer))
            return Array(UnsafeBufferPointer(buffer))
        }
    }

    static func uint64(_ bytes: some Collection<UInt8>) -> UInt64 {
        var value: UInt64 = 0
        for (index, byte) in bytes.prefix(8).enumerated() { value |= UInt64(byte) << (8 * UInt64(index)) }
        return value
    }
}
