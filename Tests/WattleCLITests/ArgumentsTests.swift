#if canImport(Glibc)
import CArguments
import Testing

/// `CArguments`, which answers `CommandLine.arguments` in the static CLI (its header says why):
/// the vector it kept from glibc's constructor call is the process's own (with glibc only: other C
/// libraries may call constructors with no arguments, and nothing is kept).
@Suite("The CLI's argument vector, kept from the constructor call")
struct ArgumentsTests {
    /// In this process (shared runtime) `CommandLine.arguments` comes from the runtime's own
    /// reader, so the two are independent: they must agree on every argument.
    @Test("the kept vector is the process's argv, NUL-terminated")
    func keptVectorIsArgv() throws {
        var count: Int32 = -1
        let vector = wattle_arguments(&count)
        #expect(count > 0)
        let kept = try (0..<Int(count)).map { String(cString: try #require(vector[$0])) }
        #expect(kept == CommandLine.arguments)
        #expect(vector[Int(count)] == nil)
    }
}
#endif
