import Foundation
import Testing
import Wattle
import WattleDemoServer

@Suite("JSONValue: any JSON body as a value, without Foundation's JSONSerialization")
struct JSONValueTests {
    @Test("every kind of value parses, nests, and is reachable by subscripts")
    func parsesEveryKind() throws {
        let text =
            #"{"s":"x\"y","i":-42,"big":9007199254740993,"f":0.5,"e":1e3,"t":true,"n":null,"a":[1,"two",[3]],"o":{"k":false}}"#
        let value = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
        #expect(value["s"] == .string("x\"y"))
        #expect(value["i"]?.intValue == -42)
        // Past 2^53 a Double would round to ...992: integers keep every digit.
        #expect(value["big"] == .integer(9_007_199_254_740_993))
        #expect(value["f"] == .number(0.5) && value["f"]?.intValue == nil)
        #expect(value["e"]?.doubleValue == 1000)
        #expect(value["t"]?.boolValue == true && value["o"]?["k"]?.boolValue == false)
        #expect(value["n"]?.isNull == true && value["missing"] == nil)
        #expect(value["a"]?[1]?.stringValue == "two" && value["a"]?[2]?[0]?.intValue == 3)
        #expect(value["a"]?[3] == nil && value["s"]?[0] == nil && value["a"]?["k"] == nil)
        #expect(value.objectValue?.count == 9 && value["a"]?.arrayValue?.count == 3)
        // A Boolean is not a number, and a number is not a Boolean.
        #expect(value["t"]?.intValue == nil && value["i"]?.boolValue == nil)
    }

    @Test("top-level scalars parse; text that is not JSON does not")
    func fragmentsAndErrors() throws {
        for (text, expected) in [
            ("12", JSONValue.integer(12)), ("\"hi\"", .string("hi")), ("null", .null), ("[]", .array([])),
        ] {
            #expect(try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)) == expected)
        }
        for text in ["", "not json", "{\"a\":}", "[1,", "{'a':1}"] {
            #expect(throws: (any Error).self) { try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)) }
        }
    }

    @Test("it encodes back to the same value, and describes itself as compact JSON")
    func roundTrip() throws {
        let value: JSONValue = .object([
            "b": .array([.integer(1), .number(2.5), .null]), "a": .string("é/\n"), "c": .bool(true),
        ])
        let data = try JSONEncoder().encode(value)
        #expect(try JSONDecoder().decode(JSONValue.self, from: data) == value)
        #expect(value.description == #"{"a":"é/\n","b":[1,2.5,null],"c":true}"#)
    }

    @Test("a response's json() and a JSONValue inside parameters go through the server")
    func throughTheServer() async throws {
        let server = try await TestServer.shared()
        let session = makeSession(server)
        let user = try await session.get("user").json()
        #expect(user["name"]?.stringValue == "Ada Lovelace")
        let body = RequestBody.json([
            "user": user["id"]!, "tags": JSONValue.array([.string("a"), .null]), "none": JSONValue.null,
        ])
        let echo = try await session.send(Request("echo", method: .post, body: body)).decode(Echo.self)
        #expect(echo.body == #"{"user":42,"tags":["a",null],"none":null}"#)
    }

    @Test("Foundation's NSNull is still JSON null in parameters, and left out of a query")
    func foundationNull() async throws {
        let server = try await TestServer.shared()
        let session = makeSession(server)
        let echo = try await session.send(Request("echo", method: .post, body: .json(["a": NSNull(), "b": 1]))).decode(
            Echo.self)
        #expect(echo.body == #"{"a":null,"b":1}"#)
        let query = try await session.get("echo", parameters: ["a": NSNull(), "b": 1]).decode(Echo.self)
        #expect(query.query == "b=1")
        let wrapped: NSNull? = NSNull()
        let inOptional = try await session.send(Request("echo", method: .post, body: .json(["a": wrapped, "b": 1])))
            .decode(Echo.self)
        #expect(inOptional.body == #"{"a":null,"b":1}"#)
    }

    @Test("JSONValue scalars and arrays go into a query like Swift values; null is left out")
    func inAQuery() async throws {
        let server = try await TestServer.shared()
        let parameters: Parameters = [
            "id": JSONValue.integer(42), "q": JSONValue.string("a b"), "ok": JSONValue.bool(true),
            "r": JSONValue.number(0.5), "tags": JSONValue.array([.string("x"), .integer(2)]), "none": JSONValue.null,
        ]
        let echo = try await makeSession(server).get("echo", parameters: parameters).decode(Echo.self)
        #expect(echo.query == "id=42&q=a%20b&ok=true&r=0.5&tags=x&tags=2")
        await #expect(throws: WattleError.self) {
            _ = try await makeSession(server).get("echo", parameters: ["o": JSONValue.object(["k": .null])])
        }
    }
}
