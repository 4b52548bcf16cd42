import Foundation
public import MCP
public import OrderedJSON

/// Conversions between hostscope's ordered JSON and the protocol library's `Value`.
public enum MCPValues {
    /// `json` as a protocol value.
    public static func value(_ json: JSONValue) -> Value {
        switch json {
        case .null: .null
        case .bool(let value): .bool(value)
        case .int(let value): Int(exactly: value).map(Value.int) ?? .double(Double(value))
        case .uint(let value): Int(exactly: value).map(Value.int) ?? .double(Double(value))
        case .double(let value): .double(value)
        case .string(let value): .string(value)
        case .array(let values): .array(values.map(value))
        case .object(let object): .object(Dictionary(object.map { ($0.key, value($0.value)) }) { first, _ in first })
        }
    }

    /// A protocol value as ordered JSON (object keys sorted, since `Value` keeps no order).
    public static func json(_ value: Value) -> JSONValue {
        switch value {
        case .null: .null
        case .bool(let value): .bool(value)
        case .int(let value): .int(Int64(value))
        case .double(let value): .double(value)
        case .string(let value): .string(value)
        case .data(_, let data): .string(data.base64EncodedString())
        case .array(let values): .array(values.map(json))
        case .object(let object):
            .object(JSONObject(object.sorted { $0.key < $1.key }.map { ($0.key, json($0.value)) }))
        }
    }
}

/// Pieces of JSON Schema shared by the tools' input and output schemas.
enum Schema {
    /// A closed object: unknown keys are refused.
    static func object(_ properties: JSONObject, required: [String] = [], description: String? = nil) -> JSONValue {
        var schema: JSONObject = ["type": "object"]
        if let description { schema.append("description", .string(description)) }
        schema.append("properties", .object(properties))
        if !required.isEmpty { schema.append("required", .array(required.map(JSONValue.string))) }
        schema.append("additionalProperties", false)
        return .object(schema)
    }

    static func string(_ description: String, maxLength: Int? = nil) -> JSONValue {
        var schema: JSONObject = ["type": "string", "description": .string(description)]
        if let maxLength {
            schema.append("minLength", 1)
            schema.append("maxLength", .number(maxLength))
        }
        return .object(schema)
    }

    static func integer(_ minimum: Int, _ maximum: Int, _ description: String) -> JSONValue {
        .object([
            "type": "integer", "minimum": .number(minimum), "maximum": .number(maximum),
            "description": .string(description),
        ])
    }

    static func boolean(_ description: String) -> JSONValue {
        .object(["type": "boolean", "description": .string(description)])
    }

    /// A value that may be absent: the type or `null`.
    static func nullable(_ type: String, _ description: String) -> JSONValue {
        .object(["type": [.string(type), "null"], "description": .string(description)])
    }

    static func array(of items: JSONValue, _ description: String) -> JSONValue {
        .object(["type": "array", "items": items, "description": .string(description)])
    }

    /// The fields every bounded result carries: whether it was cut, and how to ask for less.
    static let truncation: JSONObject = [
        "truncated": boolean("whether the result was cut to its bounds"),
        "note": string("when truncated: how to ask for less"),
    ]

    /// A closed object with the truncation fields added.
    static func result(_ properties: JSONObject, required: [String]) -> JSONValue {
        var all = properties
        for (key, value) in truncation { all.append(key, value) }
        return object(all, required: required + ["truncated"])
    }
}
