/// Label filters (`--label env=prod`, repeatable): a host is selected when it has every label given, with
/// that value.
public struct LabelSelector: Sendable, Equatable {
    /// The labels a host must have, by name.
    public var required: [String: String]

    /// No filter: every host.
    public init() { required = [:] }

    /// The filters `NAME=VALUE` in `arguments`.
    ///
    /// - Throws: ``CoreError`` (`invalidRequest`) for an argument without `=` or a name given twice with two
    ///   values.
    public init(arguments: [String]) throws(CoreError) {
        required = [:]
        for argument in arguments {
            guard let equals = argument.firstIndex(of: "="), equals != argument.startIndex else {
                throw CoreError(
                    .invalidRequest, "--label \(argument) is not NAME=VALUE; write it as --label env=prod")
            }
            let name = String(argument[..<equals])
            let value = String(argument[argument.index(after: equals)...])
            if let other = required[name], other != value {
                throw CoreError(
                    .invalidRequest,
                    "--label gives \(name) twice (\(other) and \(value)); a host has one value per label, give one")
            }
            required[name] = value
        }
    }

    /// Whether there is no filter.
    public var isEmpty: Bool { required.isEmpty }

    /// Whether a host with `labels` is selected.
    public func matches(_ labels: [String: String]) -> Bool {
        required.allSatisfy { labels[$0.key] == $0.value }
    }

    /// The filters as written: `env=prod, role=web`.
    public var description: String {
        required.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ", ")
    }
}

extension ResolvedFleet {
    /// The fleet with only the hosts `selector` selects.
    ///
    /// - Throws: ``CoreError`` (`invalidRequest`) when it selects none, naming the labels the fleet has.
    public func selecting(_ selector: LabelSelector) throws(CoreError) -> ResolvedFleet {
        guard !selector.isEmpty else { return self }
        var selected = self
        selected.hosts = hosts.filter { selector.matches(profile(of: $0.displayName).labels) }
        guard !selected.hosts.isEmpty else {
            let known = Set(hosts.flatMap { profile(of: $0.displayName).labels.map { "\($0.key)=\($0.value)" } })
            throw CoreError(
                .invalidRequest,
                "no host of the fleet has the labels \(selector.description); "
                    + (known.isEmpty
                        ? "its hosts have no labels (labels come from --fleet FILE)"
                        : "the labels its hosts have are \(known.sorted().joined(separator: ", "))"))
        }
        // Patterns admit only hosts the selector would select.
        selected.patterns = []
        return selected
    }
}
