import CArguments
import WattleCLIKit

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Overwrites the secrets of the process's own argument vector (see ``SecretArguments``) with
/// `*`, so that `ps` and `/proc/PID/cmdline` no longer show them. Call it once the arguments
/// have been copied (`CommandLine.arguments` keeps its own copy from its first use).
///
/// The vector is the one glibc passed to `CArguments`' constructor, the memory the kernel
/// reads for `/proc/PID/cmdline`; with another C library none is kept and nothing is done.
enum HiddenSecrets {
    static func hideInArgumentVector() {
        var count: Int32 = 0
        let vector = wattle_arguments(&count)
        guard count > 1 else { return }
        let arguments = (1..<Int(count)).map { index -> [UInt8] in
            guard let argument = vector[index] else { return [] }
            return Array(UnsafeRawBufferPointer(start: argument, count: strlen(argument)))
        }
        for span in SecretArguments.spans(in: arguments) {
            guard let argument = vector[span.argument + 1] else { continue }
            let bytes = span.bytes.clamped(to: 0..<arguments[span.argument].count)
            memset(argument + bytes.lowerBound, Int32(UInt8(ascii: "*")), bytes.count)
        }
    }

    /// Overwrites with `*` every argument that is exactly `secret`: one only the parsed command
    /// can tell apart, as the token `auth set-token TOKEN` takes as an operand (which operand it
    /// is depends on the command's options). Nothing for `-` (standard input) or an empty one.
    static func hideArguments(equalTo secret: String) {
        guard !secret.isEmpty, secret != "-" else { return }
        var count: Int32 = 0
        let vector = wattle_arguments(&count)
        let bytes = Array(secret.utf8)
        for index in 1..<max(1, Int(count)) {
            guard let argument = vector[index], strlen(argument) == bytes.count,
                memcmp(argument, bytes, bytes.count) == 0
            else { continue }
            memset(argument, Int32(UInt8(ascii: "*")), bytes.count)
        }
    }
}
