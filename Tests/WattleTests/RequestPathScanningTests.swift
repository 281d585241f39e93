import Foundation
import Testing

@testable import Wattle

/// The request path scans URLs and header blocks on raw bytes (`memchr`, bit masks) for speed;
/// these pin the results to the plain definitions they replace.
@Suite("The request path's byte scanners agree with their plain definitions")
struct RequestPathScanningTests {
    @Test("the URL byte mask is the encoder's rule, for all 256 bytes")
    func urlByteMask() {
        for value in 0...255 {
            let byte = UInt8(value)
            let expected =
                PercentEncoding.needsEncodingInURL(byte) || byte == UInt8(ascii: "%")
                || byte == UInt8(ascii: "[") || byte == UInt8(ascii: "]")
            #expect(PercentEncoding.mayNeedEncodingInURL(byte) == expected, "byte \(value)")
        }
    }

    @Test("http and https are recognised in any case; other schemes and scheme-less strings by the general rule")
    func schemes() {
        let cases: [(String, String?)] = [
            ("http://h/", "http"), ("HTTP://h/", "http"), ("hTtP://h", "http"), ("https://h/", "https"),
            ("HTTPS://h", "https"), ("HttPs://h", "https"), ("http:x", "http"), ("https:", "https"),
            ("http:/", "http"), ("httpx://h", "httpx"), ("ftp://h", "ftp"), ("localhost:8080/x", nil),
            ("users", nil), ("http", nil), ("", nil), ("1http://h", nil), ("htt://h", "htt"), ("https//h", nil),
        ]
        for (string, scheme) in cases {
            #expect(EndpointResolver.scheme(of: string) == scheme, "\(string)")
        }
    }

    @Test("the fragment is dropped before encoding and before the parameters")
    func fragments() throws {
        func resolved(_ endpoint: String, _ query: Parameters = [:]) throws -> String {
            try Request(endpoint, query: query).url(relativeTo: nil).absoluteString
        }
        #expect(try resolved("http://h.test/a b#frag") == "http://h.test/a%20b")
        #expect(try resolved("http://h.test/x#a b") == "http://h.test/x")
        #expect(try resolved("http://h.test/é?q=1#x") == "http://h.test/%C3%A9?q=1")
        #expect(try resolved("http://h.test/x#frag", ["a": 1]) == "http://h.test/x?a=1")
        #expect(try resolved("http://h.test/x?y=1#") == "http://h.test/x?y=1")
        #expect(try resolved("http://h.test/a%2Fb%zz") == "http://h.test/a%2Fb%25zz")
    }

    @Test("a header block parses as its plain line-by-line definition: fixed cases")
    func headerBlocks() {
        let block = Array(
            " orphan\r\nServer: nginx\r\nX-Folded: a\r\n  b c \r\nNoColon\r\n: empty name\r\nEmpty:\r\nSpaced :  v  \r\n\r\nLast: no newline"
                .utf8)
        let fields = HeaderLineParser.fields(block).fields
        // The blank line ends the head: `Last` is a trailer field.
        #expect(fields.map(\.name) == ["Server", "X-Folded", "Empty", "Spaced "])
        #expect(fields.map(\.value) == ["nginx", "a b c", "", "v"])
        let latin1 = HeaderLineParser.fields(Array("A: caf".utf8) + [0xE9] + Array("\r\n \u{E9}t".utf8)).fields
        #expect(latin1.map(\.value) == ["caf\u{E9} \u{E9}t"])
        #expect(HeaderLineParser.fields([]).fields.isEmpty)
        #expect(HeaderLineParser.fields(Array("\n\n\r\n".utf8)).fields.isEmpty)
    }

    @Test("a header block parses as its plain line-by-line definition: 3,000 random blocks")
    func randomHeaderBlocks() {
        var generator = SeededGenerator(seed: 20_261_124)
        let alphabet: [UInt8] = Array("ab:: \t\r\n\n".utf8) + [0xC3, 0xA9, 0xFF, 0x00]
        for _ in 0..<3_000 {
            let block = (0..<Int.random(in: 0...80, using: &generator)).map { _ in
                alphabet.randomElement(using: &generator)!
            }
            let parsed = HeaderLineParser.fields(block).fields
            let expected = Self.plainFields(block)
            #expect(parsed == expected, "\(block)")
        }
    }

    /// The definition, on arrays: lines end after each LF; a line of nothing but CR and LF ends
    /// the head (trailer fields follow); `name: value` when the line does not start with a space
    /// or tab and has a colon after at least one byte; a line starting with space or tab
    /// continues the previous field. Values are UTF-8, else ISO-8859-1 byte for byte.
    static func plainFields(_ block: [UInt8]) -> [HTTPHeaders.Field] {
        var fields: [HTTPHeaders.Field] = []
        var lines: [[UInt8]] = []
        var current: [UInt8] = []
        for byte in block {
            current.append(byte)
            if byte == 0x0A {
                lines.append(current)
                current = []
            }
        }
        if !current.isEmpty { lines.append(current) }
        let space = UInt8(ascii: " "), tab = UInt8(ascii: "\t")
        func text(_ bytes: some Collection<UInt8>) -> String {
            String(validating: bytes, as: UTF8.self) ?? String(String.UnicodeScalarView(bytes.map(Unicode.Scalar.init)))
        }
        for line in lines {
            guard let first = line.first else { continue }
            if line.allSatisfy({ $0 == 0x0D || $0 == 0x0A }) { break }
            if first != space, first != tab, let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > 0 {
                var value = Array(line[(colon + 1)...])
                while let last = value.last, [space, tab, 0x0D, 0x0A].contains(last) { value.removeLast() }
                while let head = value.first, head == space || head == tab { value.removeFirst() }
                fields.append(
                    HTTPHeaders.Field(
                        name: String(decoding: line[..<colon], as: UTF8.self),
                        value: text(value)))
            } else if first == space || first == tab, !fields.isEmpty {
                let folded = text(line).trimmingWhitespace()
                if !folded.isEmpty { fields[fields.count - 1].value += " " + folded }
            }
        }
        return fields
    }
}

/// SplitMix64: a reproducible generator for the random cases.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
