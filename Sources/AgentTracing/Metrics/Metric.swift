/// A metric with its data points at one moment, as OTLP's `Metric` carries it: a gauge, or a cumulative sum.
///
/// Only the number kinds hostscope reports exist here: gauges (a reading such as a utilization) and
/// cumulative sums, monotonic for counters the kernel keeps (CPU time, bytes sent) and not monotonic for
/// up-down figures (memory in use by state).
public struct Metric: Sendable, Equatable {
    /// The metric's name, e.g. `system.cpu.time`.
    public var name: String
    /// What it measures, for a reader.
    public var description: String
    /// The UCUM unit: `s`, `By`, `1`.
    public var unit: String
    /// Gauge or sum.
    public var kind: Kind
    /// The data points, one per attribute set.
    public var points: [MetricPoint]

    /// Creates a metric.
    public init(name: String, description: String = "", unit: String = "", kind: Kind, points: [MetricPoint]) {
        self.name = name
        self.description = description
        self.unit = unit
        self.kind = kind
        self.points = points
    }

    /// OTLP's metric data types, as far as hostscope uses them.
    public enum Kind: Sendable, Equatable {
        /// A value read at the point's time.
        case gauge
        /// A cumulative sum since the point's start time; `monotonic` for counters that only grow.
        case cumulativeSum(monotonic: Bool)
    }
}

/// One data point: a number for one set of attributes at one time.
public struct MetricPoint: Sendable, Equatable {
    /// What distinguishes this point from the metric's others (`cpu.mode`, `system.device` …).
    public var attributes: [Attribute]
    /// When a cumulative sum started counting (boot, for the kernel's counters), in nanoseconds since the
    /// Unix epoch; `nil` when unknown or for a gauge.
    public var startNanoseconds: UInt64?
    /// When the value was read, in nanoseconds since the Unix epoch.
    public var timeNanoseconds: UInt64
    /// The value.
    public var value: Value

    /// Creates a data point.
    public init(attributes: [Attribute] = [], startNanoseconds: UInt64? = nil, timeNanoseconds: UInt64, value: Value) {
        self.attributes = attributes
        self.startNanoseconds = startNanoseconds
        self.timeNanoseconds = timeNanoseconds
        self.value = value
    }

    /// An integer (`asInt`) or a floating-point (`asDouble`) value.
    public enum Value: Sendable, Equatable {
        case int(Int64)
        case double(Double)
    }
}

/// The metrics of one resource (one host) at one collection: OTLP's `ResourceMetrics` with one scope.
public struct ResourceMetrics: Sendable, Equatable {
    /// The entity measured: `host.name`, `os.type`, `service.name` …
    public var resource: TraceResource
    /// The metrics.
    public var metrics: [Metric]

    /// Creates a resource's metrics.
    public init(resource: TraceResource, metrics: [Metric]) {
        self.resource = resource
        self.metrics = metrics
    }

    /// How many data points the metrics hold: what OTLP's partial success counts in `rejectedDataPoints`.
    public var pointCount: Int { metrics.reduce(0) { $0 + $1.points.count } }
}
