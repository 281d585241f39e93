internal import CSodium

/// Key material in libsodium's guarded memory (`sodium_malloc`): guard pages around it, a
/// canary, locked against swapping where allowed, and zeroed by `sodium_free` when released.
///
/// Master and wrapping keys are kept `noaccess` and opened read-only only while used;
/// subkeys used on every operation are kept read-only, those that live as long as the keychain
/// in one allocation (``parts(_:of:fill:)``): each allocation costs five system calls and a
/// locked page. The guard pages and the canary are around the allocation, so they catch an
/// overrun past its last part, not one from a part into the next (parts are written once, by
/// the key derivation, then read-only).
final class SecureBytes {
    let count: Int
    private let base: UnsafeMutableRawPointer
    /// The allocation this is a part of (which it keeps alive); nil when `base` is its own.
    private let allocation: SecureBytes?

    init(count: Int) throws(KeychainError) {
        try Sodium.ensureReady()
        guard let pointer = sodium_malloc(count) else { throw .allocate }
        base = pointer
        self.count = count
        allocation = nil
    }

    private init(part base: UnsafeMutableRawPointer, count: Int, of allocation: SecureBytes) {
        self.base = base
        self.count = count
        self.allocation = allocation
    }

    /// `number` values of `size` bytes in one guarded allocation, each written by `fill` (its
    /// index, its bytes), then all made read-only for good. The allocation is zeroed and freed
    /// when the last part goes.
    static func parts(
        _ number: Int, of size: Int, fill: (Int, UnsafeMutablePointer<UInt8>) -> Void
    ) throws(KeychainError) -> [SecureBytes] {
        let whole = try SecureBytes(count: number * size)
        for index in 0..<number { fill(index, whole.mutableBytes + index * size) }
        whole.makeReadOnly()
        return (0..<number).map { SecureBytes(part: whole.base + $0 * size, count: size, of: whole) }
    }

    /// Copies bytes into new guarded memory, read-only.
    convenience init(copying bytes: [UInt8]) throws(KeychainError) {
        try self.init(count: bytes.count)
        bytes.withUnsafeBytes { base.copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
        makeReadOnly()
    }

    var bytes: UnsafePointer<UInt8> { UnsafePointer(base.assumingMemoryBound(to: UInt8.self)) }
    var mutableBytes: UnsafeMutablePointer<UInt8> { base.assumingMemoryBound(to: UInt8.self) }

    // Protection applies to a whole allocation, so never to a part.
    func makeReadOnly() {
        precondition(allocation == nil, "a part stays read-only")
        sodium_mprotect_readonly(base)
    }

    func makeNoAccess() {
        precondition(allocation == nil, "a part stays read-only")
        sodium_mprotect_noaccess(base)
    }

    /// Runs `body` with the memory readable, then makes it inaccessible again.
    func withReadAccess<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        precondition(allocation == nil, "a part stays read-only")
        sodium_mprotect_readonly(base)
        defer { sodium_mprotect_noaccess(base) }
        return try body()
    }

    deinit { if allocation == nil { sodium_free(base) } }
}
