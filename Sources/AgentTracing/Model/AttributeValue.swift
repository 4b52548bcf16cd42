/// A typed attribute value, the subset of OTLP's `AnyValue` that OpenTelemetry attributes allow:
/// a primitive or a homogeneous array of one.
public enum AttributeValue: Sendable, Equatable {
    case string(String)
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case stringArray([String])
    case boolArray([Bool])
    case intArray([Int64])
    case doubleArray([Double])

    /// The value when it is a string.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The value when it is an integer.
    public var intValue: Int64? {
        if case .int(let value) = self { return value }
        return nil
    }

    /// The value when it is a boolean.
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The value when it is a double.
    public var doubleValue: Double? {
        if case .double(let value) = self { return value }
        return nil
    }

    /// The value as a person reads it in `trace show`: strings bare, arrays bracketed.
    public var displayText: String {
        switch self {
        case .string(let value): value
        case .bool(let value): String(value)
        case .int(let value): String(value)
        case .double(let value): String(value)
        case .stringArray(let values): "[" + values.joined(separator: ", ") + "]"
        case .boolArray(let values): "[" + values.map(String.init).joined(separator: ", ") + "]"
        case .intArray(let values): "[" + values.map(String.init).joined(separator: ", ") + "]"
        case .doubleArray(let values): "[" + values.map { String($0) }.joined(separator: ", ") + "]"
        }
    }
}

extension AttributeValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

/// One attribute: a key and its typed value.
public struct Attribute: Sendable, Equatable {
    public var key: String
    public var value: AttributeValue

    public init(_ key: String, _ value: AttributeValue) {
        self.key = key
        self.value = value
    }
}

extension Array where Element == Attribute {
    /// The value of the first attribute with this key.
    public subscript(key: String) -> AttributeValue? {
        first(where: { $0.key == key })?.value
    }
}
