public import OrderedJSON

/// Checks tool arguments against the subset of JSON Schema that hostscope's tool definitions use.
///
/// Keywords: `type` (a name or a list of names; `integer` accepts whole numbers written as floats), `enum`,
/// `const`, `properties`, `required`, `additionalProperties` (`false` or a schema), `items`, `minimum`,
/// `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, `minLength`, `maxLength` (in Unicode scalars, as the
/// specification counts), `minItems` and `maxItems`. Other keywords are ignored, so a schema written for a
/// fuller validator is checked at least as far as these go.
public enum JSONSchemaValidator {
    /// The problems found, each as `path: what is wrong` (the root is `$`); empty when the value is valid.
    public static func validate(_ value: JSONValue, against schema: JSONValue) -> [String] {
        var problems: [String] = []
        check(value, schema, path: "$", into: &problems)
        return problems
    }

    private static func check(_ value: JSONValue, _ schema: JSONValue, path: String, into problems: inout [String]) {
        guard case .object(let rules) = schema else {
            // `true` or an empty schema accepts anything; `false` accepts nothing.
            if schema == .bool(false) {
                problems.append("\(path): no value is allowed here")
            }
            return
        }
        if let type = rules["type"] {
            let names = type.arrayValue?.compactMap(\.stringValue) ?? type.stringValue.map { [$0] } ?? []
            if !names.isEmpty, !names.contains(where: { matches(value, type: $0) }) {
                problems.append("\(path): expected \(names.joined(separator: " or ")), got \(typeName(value))")
                return
            }
        }
        if let allowed = rules["enum"]?.arrayValue, !allowed.contains(where: { equal($0, value) }) {
            let list = allowed.map(\.jsonString).joined(separator: ", ")
            problems.append("\(path): \(value.jsonString) is not one of \(list)")
        }
        if let constant = rules["const"], !equal(constant, value) {
            problems.append("\(path): must be \(constant.jsonString)")
        }
        switch value {
        case .string(let text):
            let length = text.unicodeScalars.count
            if let minimum = rules["minLength"]?.intValue, length < minimum {
                problems.append("\(path): shorter than \(minimum) characters")
            }
            if let maximum = rules["maxLength"]?.intValue, length > maximum {
                problems.append("\(path): longer than \(maximum) characters (\(length))")
            }
        case .int, .uint, .double:
            checkNumber(value, rules, path: path, into: &problems)
        case .array(let items):
            if let minimum = rules["minItems"]?.intValue, items.count < minimum {
                problems.append("\(path): fewer than \(minimum) items")
            }
            if let maximum = rules["maxItems"]?.intValue, items.count > maximum {
                problems.append("\(path): more than \(maximum) items (\(items.count))")
            }
            if let itemSchema = rules["items"] {
                for (index, item) in items.enumerated() {
                    check(item, itemSchema, path: "\(path)[\(index)]", into: &problems)
                }
            }
        case .object(let members):
            checkObject(members, rules, path: path, into: &problems)
        case .null, .bool:
            break
        }
    }

    private static func checkNumber(
        _ value: JSONValue, _ rules: JSONObject, path: String, into problems: inout [String]
    ) {
        guard let number = value.doubleValue else {
            return
        }
        if let minimum = rules["minimum"]?.doubleValue, number < minimum {
            problems.append("\(path): \(value.jsonString) is less than the minimum \(rules["minimum"]!.jsonString)")
        }
        if let maximum = rules["maximum"]?.doubleValue, number > maximum {
            problems.append("\(path): \(value.jsonString) is more than the maximum \(rules["maximum"]!.jsonString)")
        }
        if let minimum = rules["exclusiveMinimum"]?.doubleValue, number <= minimum {
            problems.append("\(path): \(value.jsonString) must be more than \(rules["exclusiveMinimum"]!.jsonString)")
        }
        if let maximum = rules["exclusiveMaximum"]?.doubleValue, number >= maximum {
            problems.append("\(path): \(value.jsonString) must be less than \(rules["exclusiveMaximum"]!.jsonString)")
        }
    }

    private static func checkObject(
        _ members: JSONObject, _ rules: JSONObject, path: String, into problems: inout [String]
    ) {
        let properties = rules["properties"]?.objectValue ?? JSONObject()
        for name in rules["required"]?.arrayValue?.compactMap(\.stringValue) ?? [] where members[name] == nil {
            problems.append("\(path): the required property \"\(name)\" is missing")
        }
        for (name, member) in members {
            let memberPath = "\(path).\(name)"
            if let propertySchema = properties[name] {
                check(member, propertySchema, path: memberPath, into: &problems)
            } else if let extra = rules["additionalProperties"] {
                if extra == .bool(false) {
                    let known = properties.keys.joined(separator: ", ")
                    problems.append("\(memberPath): unknown property (allowed: \(known.isEmpty ? "none" : known))")
                } else {
                    check(member, extra, path: memberPath, into: &problems)
                }
            }
        }
    }

    private static func matches(_ value: JSONValue, type: String) -> Bool {
        switch (type, value) {
        case ("string", .string), ("boolean", .bool), ("null", .null), ("object", .object), ("array", .array):
            true
        case ("number", .int), ("number", .uint), ("number", .double):
            true
        case ("integer", .int), ("integer", .uint):
            true
        case ("integer", .double(let number)):
            number.isFinite && number == number.rounded()
        default:
            false
        }
    }

    private static func typeName(_ value: JSONValue) -> String {
        switch value {
        case .null: "null"
        case .bool: "boolean"
        case .int, .uint: "integer"
        case .double: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }

    /// JSON equality, where 1 and 1.0 are the same number.
    private static func equal(_ left: JSONValue, _ right: JSONValue) -> Bool {
        if let a = left.doubleValue, let b = right.doubleValue {
            return a == b
        }
        return left == right
    }
}
