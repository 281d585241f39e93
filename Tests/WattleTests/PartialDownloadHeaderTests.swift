import Foundation
import Testing

@testable import Wattle

/// What a resumable download reads from a response's head: the validator `If-Range` may name
/// later, and where a `206`'s range starts.
@Suite("Resumable downloads: validators and Content-Range, as RFC 9110 has them")
struct PartialDownloadHeaderTests {
    @Test("a strong ETag is the validator; a weak one, or an encoded body, gives none")
    func entityTags() {
        #expect(PartialDownload.validator(of: ["ETag": "\"abc\""]) == "\"abc\"")
        #expect(PartialDownload.validator(of: ["ETag": "W/\"abc\""]) == nil)
        #expect(PartialDownload.validator(of: ["ETag": "abc"]) == nil)
        #expect(PartialDownload.validator(of: ["ETag": "\"abc\"", "Content-Encoding": "gzip"]) == nil)
        #expect(PartialDownload.validator(of: ["ETag": "\"abc\"", "Content-Encoding": "identity"]) == "\"abc\"")
        // With an entity tag, even a weak one, a date is never used (RFC 9110, 13.1.5).
        let dated: HTTPHeaders = [
            "ETag": "W/\"abc\"", "Last-Modified": "Mon, 02 Nov 2026 10:00:00 GMT",
            "Date": "Wed, 25 Nov 2026 10:00:00 GMT",
        ]
        #expect(PartialDownload.validator(of: dated) == nil)
    }

    @Test("a Last-Modified date is the validator only when it is a second or more before the response's Date")
    func dates() {
        let modified = "Mon, 02 Nov 2026 10:00:00 GMT"
        #expect(
            PartialDownload.validator(of: ["Last-Modified": modified, "Date": "Mon, 02 Nov 2026 10:00:01 GMT"])
                == modified)
        #expect(
            PartialDownload.validator(of: ["Last-Modified": modified, "Date": "Mon, 02 Nov 2026 10:00:00 GMT"]) == nil)
        #expect(PartialDownload.validator(of: ["Last-Modified": modified]) == nil)
        #expect(
            PartialDownload.validator(of: ["Last-Modified": "yesterday", "Date": "Mon, 02 Nov 2026 10:00:01 GMT"])
                == nil)
    }

    @Test("Content-Range: one range that runs to the end of a file of known length")
    func contentRange() {
        #expect(PartialDownload.rangeStart(of: ["Content-Range": "bytes 100-999/1000"]) == 100)
        // No length: nothing shows the range reaches the end.
        #expect(PartialDownload.rangeStart(of: ["Content-Range": "bytes 100-999/*"]) == nil)
        #expect(PartialDownload.rangeStart(of: ["Content-Range": "BYTES 0-0/1"]) == 0)
        // Stops short of the end (a capped range): not the whole rest.
        #expect(PartialDownload.rangeStart(of: ["Content-Range": "bytes 100-199/1000"]) == nil)
        #expect(PartialDownload.rangeStart(of: ["Content-Range": "bytes 100-1000/1000"]) == nil)
        #expect(PartialDownload.rangeStart(of: ["Content-Range": "bytes */1000"]) == nil)
        #expect(PartialDownload.rangeStart(of: ["Content-Range": "bytes 200-100/1000"]) == nil)
        #expect(PartialDownload.rangeStart(of: ["Content-Range": "items 0-9/10"]) == nil)
        #expect(PartialDownload.rangeStart(of: [:]) == nil)
        // A last byte at Int64.max has no length after it (a server's say-so must not trap).
        #expect(PartialDownload.rangeStart(of: ["Content-Range": "bytes 0-9223372036854775807/1"]) == nil)
        #expect(
            PartialDownload.rangeStart(of: ["Content-Range": "bytes 5-9223372036854775806/9223372036854775807"]) == 5)
    }

    @Test("the state file names the URL by a hash, without its user-info")
    func urlIdentity() throws {
        let plain = try #require(URL(string: "https://files.example/a.iso?v=2"))
        let withUser = try #require(URL(string: "https://ada:secret@files.example/a.iso?v=2"))
        #expect(PartialDownload.identity(of: withUser) == PartialDownload.identity(of: plain))
        #expect(!PartialDownload.identity(of: withUser).contains("secret"))
        let hash = PartialDownload.hash(PartialDownload.identity(of: plain))
        #expect(hash.count == 64 && hash.allSatisfy(\.isHexDigit))
        #expect(hash != PartialDownload.hash("https://files.example/a.iso?v=3"))
    }
}
