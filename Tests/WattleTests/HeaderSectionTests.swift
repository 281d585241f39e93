import Foundation
import Testing

@testable import Wattle

@Suite("A response's header section is parsed when its headers are first read")
struct HeaderSectionTests {
    static let block = Array(
        "Content-Type: application/json; charset=utf-8\r\nX-Folded: one\r\n two\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\n\r\n"
            .utf8)

    func response(_ section: HeaderSection) -> Response {
        Response(
            statusCode: 200, headerSection: section, data: Data("é".utf8), url: URL(string: "https://api.test/")!,
            method: .get, fileURL: nil, metrics: ResponseMetrics())
    }

    @Test("nothing is parsed until the headers are read; then they are the parser's, every time")
    func lazy() {
        let section = HeaderSection(Self.block)
        let response = response(section)
        #expect(response.statusCode == 200 && !section.isParsed)
        let expected = HeaderLineParser.fields(Self.block)
        #expect(response.headers == expected)
        #expect(section.isParsed)
        #expect(response.headers == expected)
        #expect(response.headers.values(for: "set-cookie") == ["a=1", "b=2"])
        #expect(response.headers["X-Folded"] == "one two")
        #expect(response.string == "é")
    }

    @Test("headers set on a response replace the section, in that copy only")
    func replaced() {
        let original = response(HeaderSection(Self.block))
        var changed = original
        changed.headers["Content-Type"] = "text/plain"
        #expect(changed.headers["content-type"] == "text/plain")
        #expect(changed.headers.count == HeaderLineParser.fields(Self.block).count)
        #expect(original.headers["content-type"] == "application/json; charset=utf-8")
        var emptied = original
        emptied.headers = [:]
        #expect(emptied.headers.count == 0 && emptied.headerSection == nil)
        #expect(original.headers.count == 4 && original.headerSection != nil)
    }

    @Test("dump shows the headers as fields with credentials redacted, never the section's bytes")
    func dumped() {
        let secret = "session=s3cr3t-cookie-value"
        let block = Array("Set-Cookie: \(secret)\r\nX-Trace: abc\r\n\r\n".utf8)
        let response = response(HeaderSection(block))
        var text = ""
        dump(response, to: &text)
        #expect(!text.contains("s3cr3t") && !text.contains("HeaderSection"))
        #expect(text.contains("Set-Cookie: <redacted>") && text.contains("X-Trace: abc"))
        #expect(text.contains("statusCode: 200") && text.contains("https://api.test/") && text.contains("2 bytes"))
        var stubbed = ""
        let token = Data(#"{"access_token":"t0ken-xyz"}"#.utf8)
        let stub = Response(
            statusCode: 200, headers: ["Authorization": "Bearer t0ken-xyz"], data: token,
            url: URL(string: "https://a.test/")!)
        dump(stub, to: &stubbed)
        #expect(stubbed.contains("Authorization: <redacted>") && stubbed.contains("\(token.count) bytes"))
        // Neither the header's value nor the body's bytes (as text or as numbers).
        #expect(!stubbed.contains("t0ken-xyz") && !stubbed.contains("116"))
    }

    @Test("first reads racing on one shared response all see the same fields (500 sections, 8 readers each)")
    func concurrentFirstReads() async {
        let expected = HeaderLineParser.fields(Self.block)
        for _ in 0..<500 {
            let shared = response(HeaderSection(Self.block))
            let seen = await withTaskGroup(of: HTTPHeaders.self) { group in
                for _ in 0..<8 { group.addTask { shared.headers } }
                return await group.reduce(into: [HTTPHeaders]()) { $0.append($1) }
            }
            #expect(seen.count == 8 && seen.allSatisfy { $0 == expected })
        }
    }

    @Test("a response from the network parses its headers only when they are read")
    func fromTheNetwork() async throws {
        let server = try await TestServer.shared()
        let response = try await makeSession(server).get("echo")
        let section = try #require(response.headerSection)
        #expect(response.statusCode == 200 && !section.isParsed)
        #expect(response.headers["Content-Type"]?.hasPrefix("application/json") == true)
        #expect(section.isParsed)
        #expect(response.headers.contains("Content-Length") || response.headers.contains("Transfer-Encoding"))
    }
}
