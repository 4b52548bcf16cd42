public import AgentTracing
import Foundation

/// The resource attributes a user gives every export through OpenTelemetry's variables:
/// `OTEL_RESOURCE_ATTRIBUTES` (`key=value,key2=value2`, values percent-encoded, as the W3C Baggage form the
/// specification names) and `OTEL_SERVICE_NAME`, which wins over a `service.name` in the former.
///
/// Backends file traces by these: Phoenix by `openinference.project.name`, most others by `service.name`. So
/// that one variable is enough for both, a service name the user sets is also given as
/// `openinference.project.name` unless that is set explicitly.
public enum ResourceEnvironment {
    /// The attribute Phoenix files traces under.
    public static let projectNameKey = "openinference.project.name"

    /// The user's attributes, in the order given (service name last); empty when neither variable is set.
    public static func attributes(_ environment: [String: String]) throws(TracingError) -> [Attribute] {
        var attributes: [Attribute] = []
        func set(_ key: String, _ value: String) {
            if let index = attributes.firstIndex(where: { $0.key == key }) {
                attributes[index].value = .string(value)
            } else {
                attributes.append(Attribute(key, .string(value)))
            }
        }
        if let list = environment["OTEL_RESOURCE_ATTRIBUTES"], !list.allSatisfy({ $0 == " " }) {
            for (index, entry) in list.split(separator: ",", omittingEmptySubsequences: false).enumerated() {
                if entry.allSatisfy({ $0 == " " || $0 == "\t" }) { continue }
                guard let equals = entry.firstIndex(of: "=") else {
                    throw TracingError(
                        code: .invalidSetting,
                        message: "OTEL_RESOURCE_ATTRIBUTES is a comma-separated list of key=value pairs; entry "
                            + "\(index + 1) has no '=': set it like service.namespace=ops,deployment.environment=prod")
                }
                let key = Redaction.percentDecoded(entry[..<equals], plusAsSpace: false)
                    .trimmingCharacters(in: .whitespaces)
                guard !key.isEmpty else {
                    throw TracingError(
                        code: .invalidSetting,
                        message: "OTEL_RESOURCE_ATTRIBUTES entry \(index + 1) has no key before '='")
                }
                let value = Redaction.percentDecoded(entry[entry.index(after: equals)...], plusAsSpace: false)
                    .trimmingCharacters(in: .whitespaces)
                set(key, value)
            }
        }
        if let service = environment["OTEL_SERVICE_NAME"]?.trimmingCharacters(in: .whitespaces), !service.isEmpty {
            set("service.name", service)
        }
        if let service = attributes["service.name"]?.stringValue, attributes[projectNameKey] == nil {
            attributes.append(Attribute(projectNameKey, .string(service)))
        }
        return attributes
    }
}
