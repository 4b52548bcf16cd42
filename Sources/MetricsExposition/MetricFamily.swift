/// What a metric family's samples mean to a scraper, as Prometheus and OpenMetrics name it.
public enum MetricType: String, Sendable, Equatable {
    /// A cumulative count that only goes up (or restarts from zero when its source restarts).
    case counter
    /// A value that can go up and down.
    case gauge
    /// A value of no stated kind (node_exporter's netstat and vmstat figures; OpenMetrics' `unknown`).
    case untyped

    /// The type's name in OpenMetrics.
    public var openMetricsName: String { self == .untyped ? "unknown" : rawValue }
}

/// One metric family: its name, help text, type and unit, the same for every host.
///
/// `name` is the name of its samples in the Prometheus text format: a counter's ends in `_total`
/// (OpenMetrics names the family without that suffix, see ``openMetricsName``).
public struct MetricFamily: Sendable, Equatable, Hashable {
    public let name: String
    public let help: String
    public let type: MetricType
    /// The OpenMetrics unit (`seconds`, `bytes`), when the family name ends with it.
    public let unit: String?

    /// A family; the unit is read off the name (`…_seconds`, `…_bytes`, before `_total`).
    public init(_ name: String, _ type: MetricType, help: String) {
        self.name = name
        self.help = help
        self.type = type
        let base = type == .counter && name.hasSuffix("_total") ? String(name.dropLast(6)) : name
        self.unit = ["seconds", "bytes"].first { base.hasSuffix("_" + $0) }
    }

    /// The family's name in OpenMetrics: a counter's without `_total`.
    public var openMetricsName: String {
        type == .counter && name.hasSuffix("_total") ? String(name.dropLast(6)) : name
    }

    public static func == (lhs: MetricFamily, rhs: MetricFamily) -> Bool { lhs.name == rhs.name }
    public func hash(into hasher: inout Hasher) { hasher.combine(name) }
}

/// One sample of a family: its labels (in order) and value.
public struct MetricSample: Sendable, Equatable {
    public let family: MetricFamily
    public let labels: [Label]
    public let value: Double

    /// A label name and value.
    public struct Label: Sendable, Equatable {
        public let name: String
        public let value: String

        public init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    public init(_ family: MetricFamily, _ labels: [Label] = [], _ value: Double) {
        self.family = family
        self.labels = labels
        self.value = value
    }

    /// The value of the label named `name`, if the sample has it.
    public func label(_ name: String) -> String? {
        labels.first { $0.name == name }?.value
    }
}
