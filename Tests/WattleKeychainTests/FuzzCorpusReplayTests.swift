import Foundation
import Testing

/// Each fuzz target, built without libFuzzer (a plain `swift build` builds it as a program that
/// replays inputs), runs over its committed corpus in Fuzz/Corpus: every input that once
/// mattered stays a regression test, in `make test`.
@Suite struct FuzzCorpusReplayTests {
    static let targets = ["FuzzCLIItem", "FuzzURLQuery", "FuzzHeaderParsing", "FuzzSealedRecord"]

    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static func binary(_ name: String) -> URL? {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return nil
    }

    @Test(arguments: targets)
    func theCommittedCorpusReplaysCleanly(target: String) throws {
        let program = try #require(Self.binary(target), "\(target) is not built next to the tests")
        let corpus = Self.repository.appendingPathComponent("Fuzz/Corpus/\(target)")
        let inputs = try FileManager.default.contentsOfDirectory(atPath: corpus.path).count
        #expect(inputs > 0)
        let result = Reliability.run(program.path, [corpus.path])
        #expect(result.status == 0, "\(target): \(result.output.suffix(2000))")
        #expect(result.output.contains("replayed \(inputs) inputs"), "\(result.output.suffix(500))")
    }
}
