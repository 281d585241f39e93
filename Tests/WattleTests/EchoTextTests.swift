import Testing

@testable import WattleDemoServer

/// The demo server's `/echo` shows a body as text as `String(decoding:as:)` would, without that
/// initializer's throw per ill-formed sequence (see ``TestRoutes/text(_:)``).
@Suite("The demo server's /echo text repairs ill-formed UTF-8 as the standard library does")
struct EchoTextTests {
    @Test("every ill-formed kind, alone, cut short and between well-formed text, repairs to the same U+FFFDs")
    func illFormedKinds() {
        let pieces: [[UInt8]] = [
            [0x80], [0xBF], [0xC0, 0x80], [0xC1, 0xBF], [0xC2], [0xDF], [0xE0, 0x80, 0x80], [0xE0, 0xA0],
            [0xED, 0xA0, 0x80], [0xED, 0x9F], [0xEF, 0xBF], [0xF0, 0x80, 0x80, 0x80], [0xF0, 0x90, 0x80],
            [0xF4, 0x90, 0x80, 0x80], [0xF4, 0x8F, 0xBF], [0xF5, 0x80, 0x80, 0x80], [0xFE], [0xFF],
        ]
        for piece in pieces {
            for bytes in [piece, Array("a".utf8) + piece + Array("é🐨".utf8), piece + piece, piece + [0x41] + piece] {
                #expect(TestRoutes.text(bytes) == String(decoding: bytes, as: UTF8.self), "\(bytes)")
            }
        }
    }

    @Test("well-formed text, random bytes and the byte pattern come out as String(decoding:as:) makes them")
    func agreesOnWholeBodies() {
        var generator = SystemRandomNumberGenerator()
        var bodies: [[UInt8]] = [[], Array("plain ASCII".utf8), Array("é🐨 über ✓".utf8), Pattern.bytes(4096)]
        for size in [1, 2, 3, 4, 17, 4096] {
            bodies.append((0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) })
            // Mostly continuation and lead bytes: long runs of sequences cut short.
            bodies.append((0..<size).map { _ in UInt8.random(in: 0x80...0xF7, using: &generator) })
        }
        for bytes in bodies {
            #expect(TestRoutes.text(bytes) == String(decoding: bytes, as: UTF8.self), "\(bytes.prefix(32))")
        }
    }
}
