import Foundation
import Testing
import WattleKeychain
import WattleTesting

struct Token: Codable, Equatable {
    var access: String
    var refresh: String?
    var expires: Date
}

/// A service that keeps the `Data` it is given, as it is, and hands the same back: the typed
/// accessors wipe their own copies of a secret, and must never wipe the one a store keeps.
final class KeepingService: KeychainService, @unchecked Sendable {
    private var values: [String: Data] = [:]
    func data(forKey key: String) throws -> Data? { values[key] }
    func hasValue(forKey key: String) throws -> Bool { values[key] != nil }
    func accessibility(forKey key: String) throws -> KeychainAccessibility? { nil }
    func allKeys() throws -> [String] { values.keys.sorted() }
    func set(_ data: Data, forKey key: String) throws { values[key] = data }
    func removeValue(forKey key: String) throws { values[key] = nil }
    func removeAll() throws { values = [:] }
}

@Suite struct TypedValueTests {
    @Test(
        "the typed setters and getters wipe only their own copies: a store's kept value reads back whole, again and again"
    )
    func typedAccessorsLeaveKeptValuesWhole() throws {
        let service = KeepingService()
        let token = Token(
            access: "access-0123456789abcdef", refresh: "refresh-0123456789", expires: Date(timeIntervalSince1970: 1e9))
        try service.set("a secret longer than fourteen bytes", forKey: "long")
        try service.set("short", forKey: "short")
        try service.set(42, forKey: "int")
        try service.setCodable(token, forKey: "token")
        for _ in 0..<2 {
            #expect(try service.string(forKey: "long") == "a secret longer than fourteen bytes")
            #expect(try service.string(forKey: "short") == "short")
            #expect(try service.integer(forKey: "int") == 42)
            #expect(try service.codable(Token.self, forKey: "token") == token)
            #expect(try service.data(forKey: "long") == Data("a secret longer than fourteen bytes".utf8))
        }
    }

    @Test(arguments: StoreKind.allCases)
    func everyTypedValueRoundTrips(kind: StoreKind) throws {
        let keychain = try kind.make().keychain()
        try keychain.set("héllo ✓", forKey: "string")
        try keychain.set(Data([0, 1, 2, 255]), forKey: "data")
        try keychain.set(true, forKey: "bool")
        try keychain.set(-1234567890123, forKey: "int")
        try keychain.set(3.141592653589793, forKey: "double")
        try keychain.set(Float(2.5), forKey: "float")
        let token = Token(access: "a", refresh: nil, expires: Date(timeIntervalSinceReferenceDate: 1000))
        try keychain.setCodable(token, forKey: "codable")
        try keychain.set("", forKey: "empty")

        #expect(try keychain.string(forKey: "string") == "héllo ✓")
        #expect(try keychain.data(forKey: "data") == Data([0, 1, 2, 255]))
        #expect(try keychain.bool(forKey: "bool") == true)
        #expect(try keychain.integer(forKey: "int") == -1234567890123)
        #expect(try keychain.double(forKey: "double") == 3.141592653589793)
        #expect(try keychain.float(forKey: "float") == 2.5)
        #expect(try keychain.codable(Token.self, forKey: "codable") == token)
        let inferred: Token? = try keychain.codable(forKey: "codable")
        #expect(inferred == token)
        #expect(try keychain.string(forKey: "empty") == "")
        #expect(try keychain.string(forKey: "missing") == nil)
        #expect(try keychain.codable(Token.self, forKey: "missing") == nil)
    }

    @Test func eachTypeHasItsDocumentedByteEncoding() throws {
        let keychain = Keychain(service: "enc", store: .inMemory())
        try keychain.set("é", forKey: "s")
        try keychain.set(true, forKey: "t")
        try keychain.set(false, forKey: "f")
        try keychain.set(258, forKey: "i")
        try keychain.set(1.0, forKey: "d")
        try keychain.set(Float(1.0), forKey: "fl")
        try keychain.setCodable(["b": 1, "a": 2], forKey: "c")
        #expect(try keychain.data(forKey: "s") == Data([0xC3, 0xA9]))
        #expect(try keychain.data(forKey: "t") == Data([1]))
        #expect(try keychain.data(forKey: "f") == Data([0]))
        #expect(try keychain.data(forKey: "i") == Data([2, 1, 0, 0, 0, 0, 0, 0]))
        #expect(try keychain.data(forKey: "d") == Data([0, 0, 0, 0, 0, 0, 0xF0, 0x3F]))
        #expect(try keychain.data(forKey: "fl") == Data([0, 0, 0x80, 0x3F]))
        #expect(try keychain.data(forKey: "c") == Data(#"{"a":2,"b":1}"#.utf8))
    }

    @Test func readingAsTheWrongTypeFailsWithDecode() throws {
        let keychain = Keychain(service: "enc", store: .inMemory())
        try keychain.set("not a bool", forKey: "k")
        #expect(keychainError { _ = try keychain.bool(forKey: "k") } == .decode)
        #expect(keychainError { _ = try keychain.integer(forKey: "k") } == .decode)
        #expect(keychainError { _ = try keychain.float(forKey: "k") } == .decode)
        #expect(keychainError { _ = try keychain.codable(Token.self, forKey: "k") } == .decode)
        try keychain.set(Data([0xFF, 0xFE]), forKey: "bytes")
        #expect(keychainError { _ = try keychain.string(forKey: "bytes") } == .decode)
    }

    @Test(arguments: StoreKind.allCases)
    func setReplacesInPlaceKeepingOneItemAndItsCreationDate(kind: StoreKind) throws {
        let fixture = try kind.make()
        let keychain = fixture.keychain("svc").label("My label")
        try keychain.set("one", forKey: "k")
        let query = KeychainQuery.genericPassword(service: "svc", account: "k").withAttributes()
        let created = try fixture.store.copyMatching(query).first?.attributes?.creationDate
        try fixture.keychain("svc").set("two", forKey: "k")
        let items = try fixture.store.copyMatching(query.all())
        #expect(items.count == 1)
        #expect(items.first?.data == Data("two"))
        #expect(items.first?.attributes?.creationDate == created)
        #expect(items.first?.attributes?.label == "My label")
        #expect(try keychain.string(forKey: "k") == "two")
    }

    /// Access groups (and services) are bytes, as item identities are: two canonically
    /// equivalent spellings are two groups, whose values one another never lists or removes.
    @Test(arguments: StoreKind.allCases)
    func accessGroupsCompareByBytesInAllKeysAndRemoveAll(kind: StoreKind) throws {
        let fixture = try kind.make()
        let composed = fixture.keychain("s").accessGroup("caf\u{E9}")
        let decomposed = fixture.keychain("s").accessGroup("cafe\u{301}")
        #expect("caf\u{E9}" == "cafe\u{301}", "Swift's == takes them for equal")
        try decomposed.set("x", forKey: "theirs")
        try composed.set("y", forKey: "mine")
        #expect(try composed.allKeys() == ["mine"])
        #expect(try decomposed.allKeys() == ["theirs"])
        try composed.removeAll()
        #expect(try composed.allKeys() == [])
        #expect(try decomposed.string(forKey: "theirs") == "x")
    }

    @Test(arguments: StoreKind.allCases)
    func hasValueRemoveValueAllKeysAndRemoveAllStayWithinTheService(kind: StoreKind) throws {
        let fixture = try kind.make()
        let mine = fixture.keychain("mine")
        let theirs = fixture.keychain("theirs")
        let grouped = mine.accessGroup("group")
        try mine.set("1", forKey: "b")
        try mine.set("2", forKey: "a")
        try theirs.set("3", forKey: "a")
        try grouped.set("4", forKey: "c")
        #expect(try mine.allKeys() == ["a", "b"])
        #expect(try grouped.allKeys() == ["c"])
        #expect(try mine.hasValue(forKey: "a"))
        #expect(try !mine.hasValue(forKey: "c"))
        try mine.removeValue(forKey: "a")
        try mine.removeValue(forKey: "never-there")
        #expect(try !mine.hasValue(forKey: "a"))
        #expect(try theirs.string(forKey: "a") == "3")
        try mine.removeAll()
        #expect(try mine.allKeys() == [])
        #expect(try theirs.allKeys() == ["a"])
        #expect(try grouped.allKeys() == ["c"])
    }

    @Test(arguments: StoreKind.allCases)
    func anItemAddedWithoutAnAccountIsNotListedAsAKeyAndRemoveAllRemovesIt(kind: StoreKind) throws {
        let fixture = try kind.make()
        let keychain = fixture.keychain("svc")
        try keychain.set("1", forKey: "a")
        // As an iOS app may add one: a service and no account.
        try fixture.store.add(
            KeychainItem(.genericPassword, attributes: KeychainAttributes(service: "svc"), data: Data("2".utf8)))
        let query = KeychainQuery.genericPassword(service: "svc").all()
        #expect(try fixture.store.copyMatching(query).count == 2)
        #expect(try keychain.allKeys() == ["a"])
        try keychain.removeAll()
        #expect(throws: KeychainError.itemNotFound) { try fixture.store.copyMatching(query) }
    }

    @Test func anEmptyServiceOrKeyIsAParameterError() {
        let keychain = Keychain(service: "", store: .inMemory())
        #expect(keychainError { try keychain.set("x", forKey: "k") } == .param)
        #expect(keychainError { try Keychain(service: "s", store: .inMemory()).set("x", forKey: "") } == .param)
    }

    @Test func modifiersReturnACopyAndLeaveTheOriginalAlone() {
        let keychain = Keychain(service: "s", store: .inMemory())
        let changed = keychain.accessibility(.afterFirstUnlock).synchronizable(true).accessGroup("g").label("l")
        #expect(keychain.accessibility == .whenUnlocked)
        #expect(keychain.synchronizable == false)
        #expect(keychain.accessGroup == nil)
        #expect(changed.accessibility == .afterFirstUnlock)
        #expect(changed.synchronizable)
        #expect(changed.accessGroup == "g")
        #expect(changed.label == "l")
    }

    @Test(arguments: StoreKind.allCases)
    func manyTasksReadingAndWritingAtOnceSeeConsistentValues(kind: StoreKind) async throws {
        let keychain = try kind.make().keychain()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    for index in 0..<25 {
                        try keychain.set("\(task)-\(index)", forKey: "k\(task)-\(index)")
                        #expect(try keychain.string(forKey: "k\(task)-\(index)") == "\(task)-\(index)")
                        try keychain.set(index, forKey: "shared")
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try keychain.allKeys().count == 8 * 25 + 1)
    }

    @Test func aServiceDependsOnlyOnTheProtocols() throws {
        func save(_ token: Token, in service: some KeychainService) throws {
            try service.setCodable(token, forKey: "token")
        }
        func load(from reader: some KeychainReader) throws -> Token? {
            try reader.codable(Token.self, forKey: "token")
        }
        let keychain = Keychain.inMemory(service: "api")
        let token = Token(access: "x", refresh: "y", expires: Date(timeIntervalSince1970: 0))
        try save(token, in: keychain)
        #expect(try load(from: keychain) == token)
    }
}
