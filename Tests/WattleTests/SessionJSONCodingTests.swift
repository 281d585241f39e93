import Foundation
import Testing
import Wattle
import WattleDemoServer
import WattleTesting

@Suite("The session's JSON decoder and encoder, set once for every call")
struct SessionJSONCodingTests {
    struct Tokens: Decodable { var accessToken: String; var refreshToken: String; var tokenType: String }
    struct NewUser: Encodable, Sendable { var firstName: String; var createdAt: Date }
    struct APIError: Decodable { var error: String; var message: String }

    @Test("json: bodies use the session's encoder, decode uses its decoder (error bodies too); a call's own wins")
    func setOnce() async throws {
        let server = try await DemoServer.start()
        let session = makeSession(server) {
            $0.jsonDecoder.keyDecodingStrategy = .convertFromSnakeCase
            $0.jsonEncoder.keyEncodingStrategy = .convertToSnakeCase
            $0.jsonEncoder.dateEncodingStrategy = .iso8601
            $0.jsonEncoder.outputFormatting = .sortedKeys
            $0.authenticator = Authenticator(store: InMemoryTokenStore())
        }
        let ada = NewUser(firstName: "Ada", createdAt: Date(timeIntervalSince1970: 0))
        for sent in [
            try await session.post("echo", json: ada), try await session.put("echo", json: ada),
            try await session.patch("echo", json: ada),
        ] {
            #expect(try sent.decode(Echo.self).body == #"{"created_at":"1970-01-01T00:00:00Z","first_name":"Ada"}"#)
        }
        let ownEncoder = try await session.post("echo", json: ada, encoder: JSONEncoder()).decode(Echo.self)
        #expect(ownEncoder.body.contains(#""firstName":"Ada""#) && ownEncoder.body.contains(#""createdAt":-978307200"#))

        // The OAuth answer's snake_case keys, read by the session's decoder.
        let login = try await session.send(
            Request(
                "api/login", method: .post, body: .json(["username": "demo", "password": "wattle"]),
                authentication: .none))
        let tokens = try login.decode(Tokens.self)
        #expect(!tokens.accessToken.isEmpty && !tokens.refreshToken.isEmpty && tokens.tokenType == "Bearer")
        // A call's own decoder wins: a plain one does not map access_token to accessToken.
        #expect(throws: WattleError.self) { _ = try login.decode(Tokens.self, decoder: JSONDecoder()) }
        // An error response thrown by the session decodes with it too.
        await expectWattleError({
            _ = try await session.send(
                Request(
                    "api/login", method: .post, body: .json(["username": "demo", "password": "wrong"]),
                    authentication: .none))
        }) { error in
            guard let body = try? error.response?.decode(APIError.self) else { return false }
            return error.response?.statusCode == 401 && !body.error.isEmpty && !body.message.isEmpty
        }
        // Sign-in reads the token response as it is, whatever the session's key strategy.
        let token = try await session.signIn(at: "api/login", parameters: ["username": "demo", "password": "wattle"])
        #expect(token.refreshToken != nil && token.expiresAt != nil)
        #expect(try await session.get("api/whoami").statusCode == 200)
        try await server.stop()
    }

    @Test("an error response the session throws decodes with the session's decoder")
    func errorBodies() async throws {
        struct Problem: Decodable { var errorCode: String; var retryAfterSeconds: Int }
        let stub = StubTransport()
        stub.on(.get, "/orders/7", status: 422, json: #"{"error_code":"out_of_stock","retry_after_seconds":30}"#)
        let session = Session(
            configuration: Configuration {
                $0.baseURL = URL(string: "https://api.test/")
                $0.jsonDecoder.keyDecodingStrategy = .convertFromSnakeCase
            }, transport: stub)
        await expectWattleError({ _ = try await session.get("orders/7") }) { error in
            guard let problem = try? error.response?.decode(Problem.self) else { return false }
            return problem.errorCode == "out_of_stock" && problem.retryAfterSeconds == 30
        }
    }
}
