import Foundation
import Testing

@Suite("README snippets")
struct ReadmeSnippetTests {
    @Test("every Swift snippet in README.md is in ReadmeSnippets.swift, which the test target compiles")
    func snippetsAreCompiled() throws {
        let here = URL(fileURLWithPath: #filePath)
        let root = here.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let compiled = try String(
            contentsOf: here.deletingLastPathComponent().appendingPathComponent("ReadmeSnippets.swift"), encoding: .utf8
        )
        let blocks = readme.components(separatedBy: "```swift\n").dropFirst().compactMap {
            $0.components(separatedBy: "```").first
        }
        .filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix(".package(") }
        #expect(blocks.count >= 5)
        for block in blocks {
            #expect(
                compiled.contains(block.trimmingCharacters(in: .newlines)), "README snippet not compiled:\n\(block)")
        }
    }
}
