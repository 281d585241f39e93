/// Writes bytes into a fixed buffer: hash inputs and associated data are built this way on the
/// stack, instead of in arrays that are allocated, grown and freed on every read and upsert.
/// Writing past the capacity is a programming error and stops the process.
struct ByteWriter {
    private let buffer: UnsafeMutableRawBufferPointer
    private(set) var count = 0

    private init(_ buffer: UnsafeMutableRawBufferPointer) { self.buffer = buffer }

    /// Runs `build` on a writer over a temporary buffer of `capacity` bytes (on the stack when
    /// small), then `use` on the bytes written. The buffer lives only for the call.
    static func withBytes<R, E: Error>(
        capacity: Int, _ build: (inout ByteWriter) -> Void, use: (UnsafeRawBufferPointer) throws(E) -> R
    ) throws(E) -> R {
        try withUnsafeTemporaryAllocation(byteCount: max(capacity, 1), alignment: 1) { (raw) throws(E) -> R in
            var writer = ByteWriter(raw)
            build(&writer)
            return try use(UnsafeRawBufferPointer(rebasing: raw[..<writer.count]))
        }
    }

    mutating func append(_ byte: UInt8) {
        precondition(count < buffer.count, "ByteWriter: capacity exceeded")
        buffer[count] = byte
        count += 1
    }

    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        precondition(bytes.count <= buffer.count - count, "ByteWriter: capacity exceeded")
        if let source = bytes.baseAddress, !bytes.isEmpty {
            (buffer.baseAddress! + count).copyMemory(from: source, byteCount: bytes.count)
        }
        count += bytes.count
    }

    mutating func append(_ bytes: [UInt8]) { bytes.withUnsafeBytes { append($0) } }

    mutating func append(littleEndian value: UInt32) {
        precondition(4 <= buffer.count - count, "ByteWriter: capacity exceeded")
        buffer.storeBytes(of: value.littleEndian, toByteOffset: count, as: UInt32.self)
        count += 4
    }

    mutating func append(utf8 text: String) {
        let copied: Void? = text.utf8.withContiguousStorageIfAvailable { append(UnsafeRawBufferPointer($0)) }
        if copied == nil { for byte in text.utf8 { append(byte) } }
    }

    /// One string field as `AttributeCoding` lays it out: tag, 4-byte little-endian length, UTF-8.
    mutating func appendField(_ tag: UInt8, _ text: String) {
        append(tag)
        append(littleEndian: UInt32(text.utf8.count))
        append(utf8: text)
    }

    /// The bytes ``appendField(_:_:)`` writes for `text`.
    static func fieldCount(_ text: String) -> Int { 5 + text.utf8.count }
}
