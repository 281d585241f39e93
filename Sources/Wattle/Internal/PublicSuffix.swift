#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Whether a domain is a public suffix (`com`, `co.uk`, `github.io`), by the libpsl that libcurl
/// itself loads to refuse a server's cookie for one: looked up in the process, never loaded
/// here (`RTLD_NOLOAD`). Without it (a libcurl built without libpsl), only a name of one label
/// counts.
enum PublicSuffix {
    private typealias Builtin = @convention(c) () -> OpaquePointer?
    private typealias IsPublicSuffix = @convention(c) (OpaquePointer?, UnsafePointer<CChar>) -> Int32

    /// libpsl's built-in list and its check, when libpsl is in the process.
    private static let check: (@Sendable (String) -> Bool)? = {
        guard let library = dlopen("libpsl.so.5", RTLD_NOW | RTLD_NOLOAD),
            let builtin = dlsym(library, "psl_builtin"), let isPublic = dlsym(library, "psl_is_public_suffix")
        else { return nil }
        let context = unsafeBitCast(builtin, to: Builtin.self)()
        guard let context else { return nil }
        let function = unsafeBitCast(isPublic, to: IsPublicSuffix.self)
        let address = UInt(bitPattern: context)
        return { domain in function(OpaquePointer(bitPattern: address), domain) != 0 }
    }()

    /// Whether a cookie for `domain` and its subdomains would reach hosts of unrelated owners:
    /// a public suffix, or a name of one label (`test`, `internal`), which no server can set
    /// either. `localhost` is not one (a development host's subdomains are its own).
    static func isSuffix(_ domain: String) -> Bool {
        let bare = domain.lowercased()
        if bare == "localhost" { return false }
        if !bare.contains(".") { return true }
        return check?(bare) ?? false
    }
}
