import Foundation
import Testing
import WattleKeychain

@testable import Wattle

/// `StoredTokenReader` reads what `KeychainTokenStore.save` writes exactly as `JSONDecoder` does,
/// or declines and leaves it to `JSONDecoder`.
@Suite struct StoredTokenReaderTests {
    static let plain = Array("abcXYZ0189-_.~+=")
    static let awkward: [Character] = ["/", "\"", "\\", "\n", "\u{01}", "\u{7F}", "é", "😀", "\u{2028}", " "]

    static func string(_ generator: inout SeededGenerator, awkwardness: Int) -> String {
        let count = Int.random(in: 0...40, using: &generator)
        return String(
            (0..<count).map { _ in
                Int.random(in: 0..<100, using: &generator) < awkwardness
                    ? awkward.randomElement(using: &generator)! : plain.randomElement(using: &generator)!
            })
    }

    static func token(_ generator: inout SeededGenerator, awkwardness: Int) -> AuthToken {
        let seconds: [Double] = [
            0, -1, 1.5, 785_000_000.123_456, -978_307_200, 1e15, 1e-7, 4_102_444_800.999,
            Double.random(in: -1e10...1e10, using: &generator),
            Double(Int.random(in: 0...2_000_000_000, using: &generator)),
        ]
        var token = AuthToken(
            accessToken: string(&generator, awkwardness: awkwardness),
            refreshToken: Bool.random(using: &generator) ? string(&generator, awkwardness: awkwardness) : nil,
            expiresAt: Bool.random(using: &generator)
                ? Date(timeIntervalSinceReferenceDate: seconds.randomElement(using: &generator)!) : nil,
            tokenType: Bool.random(using: &generator) ? "Bearer" : string(&generator, awkwardness: awkwardness))
        // A client's binding on some (as `Authenticator.clientCredentials` stores them).
        if Bool.random(using: &generator) { token.binding = string(&generator, awkwardness: awkwardness) }
        return token
    }

    /// The bytes `save` stores for `token`.
    static func stored(_ token: AuthToken, in store: KeychainTokenStore) async throws -> Data {
        try await store.save(token)
        return try #require(try store.keychain.data(forKey: store.key))
    }

    @Test("tokens as stored: the reader gives JSONDecoder's token, and reads every one written without an escape")
    func agreesWithJSONDecoder() async throws {
        let store = KeychainTokenStore(origin: URL(string: "https://api.example.com")!, store: .inMemory())
        var generator = SeededGenerator(seed: 42)
        var read = 0
        for round in 0..<2_000 {
            // The in-memory store never suspends: yield now and then, so that the suite's other
            // tasks do not wait for one of the pool's two threads.
            if round % 100 == 0 { await Task.yield() }
            let token = Self.token(&generator, awkwardness: round % 2 == 0 ? 0 : 15)
            let data = try await Self.stored(token, in: store)
            let decoded = try JSONDecoder().decode(AuthToken.self, from: data)
            #expect(decoded == token)
            let fast = StoredTokenReader.token(from: data)
            if let fast {
                read += 1
                #expect(fast == decoded, "\(String(decoding: data, as: UTF8.self))")
            }
            if !data.contains(UInt8(ascii: "\\")) {
                #expect(fast != nil, "declined \(String(decoding: data, as: UTF8.self))")
            }
            #expect(try store.loadNow() == token)
        }
        #expect(read >= 1_000)
    }

    @Test("a Basic token's base64, slashes and all, is stored without an escape and read directly")
    func basicTokenReadDirectly() async throws {
        let store = KeychainTokenStore(origin: URL(string: "https://api.example.com")!, store: .inMemory())
        // "???" encodes to "Pz8/": JSONEncoder escapes the slash unless told not to.
        let token = try AuthToken.basic(username: "???", password: "???")
        #expect(token.accessToken.contains("/"))
        let data = try await Self.stored(token, in: store)
        #expect(!data.contains(UInt8(ascii: "\\")), "\(String(decoding: data, as: UTF8.self))")
        #expect(StoredTokenReader.token(from: data) == token)
    }

    @Test("damaged or foreign JSON: the reader declines, or agrees with JSONDecoder")
    func mutatedInputs() async throws {
        let store = KeychainTokenStore(origin: URL(string: "https://api.example.com")!, store: .inMemory())
        var generator = SeededGenerator(seed: 7)
        let inserts = Array(" \t{}[]:,\"\\0123456789.eE+-nulltrue".utf8)
        var accepted = 0
        for round in 0..<3_000 {
            if round % 100 == 0 { await Task.yield() }  // as above
            var bytes = Array(try await Self.stored(Self.token(&generator, awkwardness: 0), in: store))
            for _ in 0..<Int.random(in: 1...3, using: &generator) {
                let index = Int.random(in: 0..<bytes.count, using: &generator)
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: bytes[index] = inserts.randomElement(using: &generator)!
                case 1: bytes.remove(at: index)
                default: bytes.insert(inserts.randomElement(using: &generator)!, at: index)
                }
                if bytes.isEmpty { bytes = [UInt8(ascii: "{")] }
            }
            let data = Data(bytes)
            guard let fast = StoredTokenReader.token(from: data) else { continue }
            accepted += 1
            let decoded = try JSONDecoder().decode(AuthToken.self, from: data)
            #expect(decoded == fast, "\(String(decoding: data, as: UTF8.self))")
        }
        // Some mutations leave a valid token (a digit changed in the expiry, a letter in a string).
        #expect(accepted > 0)
        for text in [
            #"{"accessToken":"a","tokenType":"Bearer"} "#, #"{"tokenType":"Bearer","accessToken":"a"}"#,
            #"{"accessToken":"a","accessToken":"b","tokenType":"Bearer"}"#, #"{"accessToken":"a","tokenType":null}"#,
            #"{"accessToken":"a","expiresAt":01,"tokenType":"Bearer"}"#,
            #"{"accessToken":"a","expiresAt":1e999,"tokenType":"B"}"#,
            #"{"accessToken":"a","expiresAt":+1,"tokenType":"B"}"#, #"{"accessToken":"a","other":1,"tokenType":"B"}"#,
            #"{"accessToken":"a\/b","tokenType":"B"}"#, #"{"accessToken":"a"}"#, "{}", "",
        ] {
            #expect(StoredTokenReader.token(from: Data(text.utf8)) == nil, "\(text)")
        }
        // Strings that are not UTF-8 (a stray byte, an encoded surrogate), in otherwise valid tokens.
        for bad: [UInt8] in [[0xFF], [0xED, 0xA0, 0x80]] {
            let bytes = Array(#"{"accessToken":""#.utf8) + bad + Array(#"","tokenType":"Bearer"}"#.utf8)
            #expect(StoredTokenReader.token(from: Data(bytes)) == nil)
            let valid = Array(#"{"accessToken":"a","tokenType":"Bearer"}"#.utf8)
            #expect(StoredTokenReader.token(from: Data(valid)) == AuthToken(accessToken: "a"))
        }
    }
}
