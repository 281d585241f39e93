// Every Swift snippet of README.md, compiled. ReadmeSnippetTests checks this file holds
// each snippet verbatim, so the README cannot drift from code that builds.
// Regenerate with: make readme-snippets
// swift-format-ignore-file
import Foundation

import Foundation
import Wattle

struct User: Codable, Sendable {
    var id: Int
    var name: String
}

func tour() async throws {
    let session = Session(configuration: Configuration {
        $0.baseURL = URL(string: "https://api.example.com/v1/")
        $0.defaultHeaders["Accept"] = "application/json"
        $0.timeouts.total = .seconds(20)
        $0.jsonDecoder.dateDecodingStrategy = .iso8601  // used by every decode(_:) of this session
        $0.willSend = { _ in ["X-Request-ID": UUID().uuidString] }  // per attempt: IDs, signatures
    })

    // GET with query parameters, encoded per RFC 3986 in the order given:
    // https://api.example.com/v1/users?q=ada%20lovelace&page=2
    let page = try await session.get("users", parameters: ["q": "ada lovelace", "page": 2])
    let users = try page.decode([User].self)

    // POST a JSON body, from parameters or from any Encodable.
    let created = try await session.post("users", json: User(id: 0, name: "Grace"))
    print(created.statusCode, users.count)

    // Errors say what happened; a non-2xx status keeps the whole response, body included.
    do {
        _ = try await session.delete("users/42")
    } catch .httpStatus(let response) {
        print("HTTP \(response.statusCode): \(response.string ?? "")")
    } catch .timedOut(let phase, let after, _) {
        print("timed out in the \(phase) phase after \(after)")
    } catch {
        print(error)  // one clear line, never a token
    }

    // A status that is an answer, not an error: accept it and get the response.
    var lookup = Request("users/42", headers: ["If-None-Match": "\"v7\""])
    lookup.acceptedStatuses = [304, 404]
    let answer = try await session.send(lookup)
    print(answer.statusCode == 304 ? "unchanged" : answer.statusCode == 404 ? "no such user" : "changed")
}

import Foundation
import Wattle

func endpoints() async throws {
    Session.configureShared { $0.baseURL = URL(string: "https://api.example.com/v1/") }
    let users = try await "users".get(parameters: ["page": 1])
    print(users.statusCode)
    "users".post(parameters: ["name": "Ada"]) { response in
        if let error = response.error { print(error) } else { print(response.statusCode) }
    }
}

import Wattle

func developmentHost(pem: String) async throws {
    let session = Session(configuration: Configuration {
        $0.trust.selfSignedHosts = ["localhost", "*.dev.example.test"]   // exact names, or *. for one label
        $0.trust.trust(certificatePEM: pem, for: "staging.example.test")  // stronger
    })
    _ = try await session.get("https://localhost:8443/health")
}

import Wattle
import WattleKeychain

func mutualTLS(keychain: Keychain) async throws {
    guard let identity = try ClientCertificate.load(from: keychain, forKey: "client-certificate") else { return }
    let session = Session(configuration: Configuration {
        $0.trust.present(identity, to: "mtls.example.com")   // that host only; redirects elsewhere go without
    })
    _ = try await session.get("https://mtls.example.com/v1/status")
}

import Wattle

func behindAProxy() async throws {
    let session = Session(configuration: Configuration {
        $0.proxy = .url("http://user:password@proxy.internal:3128")  // default: http_proxy and kin
    })
    _ = try await session.get("https://api.example.com/health")
}

import Foundation
import Wattle

func fetchImage(session: Session) async throws {
    let destination = URL(fileURLWithPath: "/tmp/image.iso")
    let response = try await session.download("images/latest.iso", to: destination) { progress in
        print(progress.fractionCompleted ?? 0)
    }
    print(response.fileURL?.path ?? "")
}

import Foundation
import Wattle

func fetchDataset(session: Session) async throws {
    let destination = URL(fileURLWithPath: "/tmp/dataset.parquet")
    let response = try await session.download("exports/dataset.parquet", to: destination, resumable: true)
    print(response.statusCode)  // 206: continued from an earlier attempt's bytes
}

import Foundation
import Wattle

func uploadVideo(session: Session) async throws {
    let video = URL(fileURLWithPath: "/tmp/talk.mp4")
    let request = Request("videos", method: .put, body: .file(video, contentType: "video/mp4"))
    print(try await session.send(request).statusCode)

    let form = RequestBody.multipart([
        .field("title", "Koalas up close"),
        .file("video", contentsOf: video, contentType: "video/mp4"),  // filename "talk.mp4"
    ])
    print(try await session.send(Request("albums/7/videos", method: .post, body: form)).statusCode)
}

import Wattle

func followEvents(session: Session) async throws {
    let stream = try await session.stream(Request("events", headers: ["Accept": "text/event-stream"]))
    for try await line in stream.lines where line.hasPrefix("data: ") {
        print(line.dropFirst(6))
    }
}

import Wattle

func explore() async throws {
    let user = try await "users/42".get().json()
    print(user["name"]?.stringValue ?? "", user["tags"]?[0]?.stringValue ?? "", user["id"]?.intValue ?? 0)
}

import Wattle

func crawl(session: Session) async throws -> [String] {
    try await session.withNetworkThreadExecutor {
        var names: [String] = []
        for id in 1...100 { names.append(try await session.get("users/\(id)").json()["name"]?.stringValue ?? "") }
        return names
    }
}

import WattleKeychain

func remember() throws {
    let keychain = Keychain(service: "api.example.com")
    try keychain.set("s3cret", forKey: "password")
    let password = try keychain.string(forKey: "password")
    print(password != nil)
}

import Foundation
import Wattle

func signedIn(username: String, password: String) async throws {
    let api = URL(string: "https://api.example.com/v1/")!
    let session = Session(configuration: Configuration {
        $0.baseURL = api
        $0.authenticator = Authenticator(
            store: KeychainTokenStore(origin: api),
            refresh: Authenticator.postRefreshToken(to: "auth/refresh"))
    })
    if try await !session.isSignedIn {
        try await session.signIn(at: "auth/login", parameters: ["username": username, "password": password])
    }
    print(try await session.get("me").statusCode)  // sent with Authorization: Bearer …
}

import Foundation
import Wattle

func serviceSession(clientID: String, clientSecret: String) -> Session {
    let api = URL(string: "https://api.example.com/v1/")!
    return Session(configuration: Configuration {
        $0.baseURL = api
        $0.authenticator = Authenticator.clientCredentials(
            store: KeychainTokenStore(origin: api, profile: "reports-service"),  // apart from people's tokens
            endpoint: "https://auth.example.com/oauth/token", clientID: clientID, clientSecret: clientSecret,
            scope: "reports:read")
    })
}

import Foundation
import Wattle

func basicSession(apiKey: String) throws -> Session {
    let credentials = try AuthToken.basic(username: apiKey, password: "")
    return Session(configuration: Configuration {
        $0.baseURL = URL(string: "https://api.example.com/v1/")
        $0.authenticator = Authenticator(store: InMemoryTokenStore(credentials))
    })
}

import Foundation
import Wattle
import WattleTesting

func stubbed() async throws {
    let stub = StubTransport()
    stub.on(.get, "/v1/users/42", json: #"{"id":42,"name":"Ada"}"#)
    let session = Session(
        configuration: Configuration { $0.baseURL = URL(string: "https://api.example.com/v1/") },
        transport: stub)
    let response = try await session.get("users/42")
    print(response.statusCode, stub.requests.count, stub.unusedRoutes)  // 200 1 []
}

import Foundation
import Wattle
import WattleTesting

func refreshedInATest() async throws {
    let api = URL(string: "https://api.example.com/v1/")!
    let tokens = KeychainTokenStore(origin: api, store: .inMemory())
    try await tokens.save(AuthToken(accessToken: "expired", refreshToken: "r1"))
    let stub = StubTransport()
    stub.on(.get, "/v1/me", status: 401, times: 1)
    stub.on(.post, "/v1/auth/refresh", json: #"{"access_token":"fresh","refresh_token":"r2","expires_in":3600}"#)
    stub.on(.get, "/v1/me", json: #"{"name":"Ada"}"#)
    let session = Session(
        configuration: Configuration {
            $0.baseURL = api
            $0.authenticator = Authenticator(store: tokens, refresh: Authenticator.postRefreshToken(to: "auth/refresh"))
        },
        transport: stub)
    print(try await session.get("me").statusCode)  // 200, after one refresh
    print(stub.requests.last?.headers["Authorization"] ?? "", try await tokens.load()?.refreshToken ?? "")  // Bearer fresh r2
}
