#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Ordered name/value pairs, used as query parameters, a JSON object or a form body.
///
/// A dictionary literal keeps its order, so `["q": "swift", "page": 2]` is sent as
/// `?q=swift&page=2`. Values may be `String`, `Bool`, any integer type, `Double`, `Float`,
/// `Decimal`, `URL`, `Date` (ISO 8601), `nil`, arrays of these, and (in JSON bodies) nested
/// `Parameters` or `[String: any Sendable]`. In a query, `nil` is left out and an array
/// repeats its name (`tag=a&tag=b`).
public struct Parameters: Sendable, ExpressibleByDictionaryLiteral, CustomReflectable {
    /// The pairs in order.
    public var items: [(name: String, value: any Sendable)]

    /// Creates parameters from a literal, keeping its order.
    public init(dictionaryLiteral elements: (String, any Sendable)...) {
        items = elements.map { (name: $0.0, value: $0.1) }
    }

    /// Creates parameters from ordered pairs.
    public init(_ pairs: [(String, any Sendable)]) {
        items = pairs.map { (name: $0.0, value: $0.1) }
    }

    /// Creates parameters from a dictionary, sorted by name so the result is deterministic.
    public init(_ dictionary: [String: any Sendable]) {
        items = dictionary.sorted { $0.key < $1.key }.map { (name: $0.key, value: $0.value) }
    }

    /// What `dump` shows: each name with its value, `<redacted>` for a credential-looking name
    /// (`password`, `api_key`, `pin`), and only the type of a nested value (which may hold one).
    public var customMirror: Mirror {
        Mirror(
            self,
            children: items.lazy.map { item -> Mirror.Child in
                let value: Any
                switch item.value {
                case _ where Redaction.isSensitiveName(item.name): value = "<redacted>"
                case let scalar as String: value = scalar
                case let scalar as Bool: value = scalar
                case let scalar as Int: value = scalar
                case let scalar as Double: value = scalar
                case _ where Self.isNil(item.value): value = "nil"
                default: value = "<\(type(of: item.value))>"
                }
                return (label: item.name, value: value)
            },
            displayStyle: .dictionary)
    }

    /// Whether there are no pairs.
    public var isEmpty: Bool { items.isEmpty }

    /// Appends a pair.
    public mutating func append(_ name: String, _ value: any Sendable) { items.append((name: name, value: value)) }

    /// The pairs flattened to strings for a query or a form: `nil` dropped, arrays repeated.
    func flattened() throws(WattleError) -> [(String, String)] {
        var result: [(String, String)] = []
        for (name, value) in items {
            try Self.flatten(name: name, value: value, into: &result)
        }
        return result
    }

    private static func flatten(name: String, value: any Sendable, into result: inout [(String, String)])
        throws(WattleError)
    {
        // The common case first, without the casts and reflection below.
        if let string = value as? String {
            result.append((name, string))
            return
        }
        if let array = value as? [any Sendable] {
            for element in array { try flatten(name: name, value: element, into: &result) }
            return
        }
        // A JSONValue as the Swift value it stands for; an object stays, and is refused below.
        if let json = value as? JSONValue, json.objectValue == nil {
            try flatten(name: name, value: json.parameterValue, into: &result)
            return
        }
        if isNil(value) { return }
        if Self.isNonFiniteNumber(value) {
            throw .invalidRequest(reason: "the parameter \"\(name)\" is not a finite number")
        }
        guard let string = scalarString(value) else {
            throw .invalidRequest(
                reason:
                    "the parameter \"\(name)\" has a value of type \(type(of: value)), which cannot be put in a query or form"
            )
        }
        result.append((name, string))
    }

    /// Whether a value is a `Double`, `Float` or `Decimal` that is not a finite number, or a
    /// `Date` at no finite time (`Date(timeIntervalSince1970: .nan)`, which Foundation's
    /// formatting traps on).
    static func isNonFiniteNumber(_ value: Any) -> Bool {
        switch value {
        case let value as Double: !value.isFinite
        case let value as Float: !value.isFinite
        case let value as Decimal: value.isNaN
        case let value as Date: !value.timeIntervalSinceReferenceDate.isFinite
        default: false
        }
    }

    /// A finite floating-point number as `JSONEncoder` writes it: `2.0` as `2` (a strict
    /// integer parser on the server refuses `2.0`), `0.5` and `1e+20` as they are.
    static func numberText<Number: BinaryFloatingPoint & LosslessStringConvertible>(_ number: Number) -> String {
        let text = number.description
        return text.hasSuffix(".0") ? String(text.dropLast(2)) : text
    }

    /// The text form of a scalar parameter value, or nil for a non-scalar.
    static func scalarString(_ value: Any) -> String? {
        switch value {
        case let value as String: value
        case let value as Substring: String(value)
        case let value as Bool: value ? "true" : "false"
        case let value as any BinaryInteger: "\(value)"
        case let value as Double: value.isFinite ? numberText(value) : nil
        case let value as Float: value.isFinite ? numberText(value) : nil
        case let value as Decimal: value.isNaN ? nil : "\(value)"
        case let value as URL: value.absoluteString
        case let value as Date: value.timeIntervalSinceReferenceDate.isFinite ? dateText(value) : nil
        case let value as UUID: value.uuidString
        default: nil
        }
    }

    /// A date in ISO 8601, in UTC, with milliseconds when it has a fraction of a second
    /// (`2024-05-01T12:00:00.750Z`): a cursor taken from a server's timestamp does not move
    /// back to the whole second. A whole second is written without them (`2024-05-01T12:00:00Z`).
    static func dateText(_ date: Date) -> String {
        // Rounded to the millisecond here, and written by hand: the format style's fractional
        // seconds truncate the binary fraction (`.123` is stored as 0.12299…, written `.122`).
        let milliseconds = (date.timeIntervalSince1970 * 1000).rounded()
        guard abs(milliseconds) < 1e17 else { return date.formatted(.iso8601) }
        let whole = Int64(milliseconds)
        var fraction = whole % 1000
        var seconds = whole / 1000
        if fraction < 0 {
            fraction += 1000
            seconds -= 1
        }
        let text = Date(timeIntervalSince1970: TimeInterval(seconds)).formatted(.iso8601)
        guard fraction != 0, text.hasSuffix("Z") else { return text }
        let digits = String(fraction)
        return text.dropLast() + "." + String(repeating: "0", count: 3 - digits.count) + digits + "Z"
    }

    /// Whether a value is `nil` wrapped in `Any`, or Foundation's `NSNull` (also inside an
    /// optional).
    static func isNil(_ value: Any) -> Bool {
        // Not reflected: `Parameters`' own mirror would be built, for nothing.
        if value is Parameters || value is String { return false }
        if isFoundationNull(value) { return true }
        let mirror = Mirror(reflecting: value)
        guard mirror.displayStyle == .optional else { return false }
        guard let wrapped = mirror.children.first else { return true }
        return isNil(wrapped.value)
    }

    /// Whether a value is Foundation's `NSNull`. Where the library links `FoundationEssentials`
    /// only, which has no `NSNull`, a caller's `NSNull()` (from `Foundation`) is recognised by
    /// its class name.
    private static func isFoundationNull(_ value: Any) -> Bool {
        #if canImport(FoundationEssentials)
        guard type(of: value) is AnyClass else { return false }
        let name = String(reflecting: type(of: value))
        return name == "Foundation.NSNull" || name == "NSNull"
        #else
        return value is NSNull
        #endif
    }
}
