internal import CSodium

/// Key material in libsodium's guarded memory (`sodium_malloc`): guard pages around it, a
/// canary, locked against swapping where allowed, and zeroed by `sodium_free` when released.
///
/// Master and wrapping keys are kept `noaccess` and opened read-only only while used;
/// subkeys used on every operation are kept read-only.
final class SecureBytes {
    let count: Int
    private let base: UnsafeMutableRawPointer

    init(count: Int) throws(KeychainError) {
        try Sodium.ensureReady()
        guard let pointer = sodium_malloc(count) else { throw .allocate }
        base = pointer
        self.count = count
    }

    /// Copies bytes into new guarded memory, read-only.
    convenience init(copying bytes: [UInt8]) throws(KeychainError) {
        try self.init(count: bytes.count)
        bytes.withUnsafeBytes { base.copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
        makeReadOnly()
    }

    var bytes: UnsafePointer<UInt8> { UnsafePointer(base.assumingMemoryBound(to: UInt8.self)) }
    var mutableBytes: UnsafeMutablePointer<UInt8> { base.assumingMemoryBound(to: UInt8.self) }

    func makeReadOnly() { sodium_mprotect_readonly(base) }
    func makeNoAccess() { sodium_mprotect_noaccess(base) }

    /// Runs `body` with the memory readable, then makes it inaccessible again.
    func withReadAccess<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        sodium_mprotect_readonly(base)
        defer { sodium_mprotect_noaccess(base) }
        return try body()
    }

    deinit { sodium_free(base) }
}
