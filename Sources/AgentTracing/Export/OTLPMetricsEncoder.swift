/// Writes metrics as one OTLP `ExportMetricsServiceRequest`: binary protobuf (`application/x-protobuf`) or
/// OTLP/JSON (`application/json`).
///
/// Each ``ResourceMetrics`` becomes one `ResourceMetrics` with one `ScopeMetrics` under ``scope``. Sums are
/// cumulative (`aggregationTemporality` 2); gauges carry no start time. Field numbers follow
/// `opentelemetry-proto`'s `metrics.proto`; the JSON form follows the OTLP/JSON mapping (lowerCamelCase
/// keys, 64-bit integers as decimal strings, enums as integers), as ``OTLPJSONEncoder`` writes spans.
public struct OTLPMetricsEncoder: Sendable {
    /// The scope every metric is exported under.
    public var scope: InstrumentationScope

    /// An encoder for the given scope.
    public init(scope: InstrumentationScope) {
        self.scope = scope
    }

    /// The request as protobuf.
    public func protobuf(_ batches: some Collection<ResourceMetrics>) -> [UInt8] {
        var writer = ProtobufWriter(capacity: batches.count * 4096)
        for batch in batches {
            writer.message(1, expectedSize: 4000) { resourceMetrics in
                resourceMetrics.resource(batch.resource)
                resourceMetrics.message(2, expectedSize: 4000) { scopeMetrics in
                    scopeMetrics.scope(scope, droppedSpanCount: nil)
                    for metric in batch.metrics {
                        scopeMetrics.message(2, expectedSize: 400) { $0.metric(metric) }
                    }
                }
            }
        }
        return writer.bytes
    }

    /// The request as one line of OTLP/JSON (no newline).
    public func json(_ batches: some Collection<ResourceMetrics>) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(batches.count * 8192)
        bytes.appendRaw("{\"resourceMetrics\":[")
        for (index, batch) in batches.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes.appendRaw("{\"resource\":{")
            if !batch.resource.attributes.isEmpty {
                bytes.appendRaw("\"attributes\":")
                bytes.appendOTLPAttributes(batch.resource.attributes[...], truncation: .none)
            }
            bytes.appendRaw("},\"scopeMetrics\":[{\"scope\":{\"name\":")
            bytes.appendJSONString(scope.name)
            bytes.appendRaw(",\"version\":")
            bytes.appendJSONString(scope.version)
            bytes.appendRaw("},\"metrics\":[")
            for (position, metric) in batch.metrics.enumerated() {
                if position > 0 { bytes.append(UInt8(ascii: ",")) }
                bytes.appendOTLPMetric(metric)
            }
            bytes.appendRaw("]}]}")
        }
        bytes.appendRaw("]}")
        return bytes
    }
}

extension ProtobufWriter {
    /// The fields of one `Metric`.
    mutating func metric(_ metric: Metric) {
        stringField(1, metric.name)
        stringField(2, metric.description)
        stringField(3, metric.unit)
        switch metric.kind {
        case .gauge:
            message(5, expectedSize: metric.points.count * 60) { gauge in
                for point in metric.points { gauge.message(1, expectedSize: 60) { $0.numberDataPoint(point) } }
            }
        case .cumulativeSum(let monotonic):
            message(7, expectedSize: metric.points.count * 60 + 4) { sum in
                for point in metric.points { sum.message(1, expectedSize: 60) { $0.numberDataPoint(point) } }
                sum.uintField(2, 2)  // AGGREGATION_TEMPORALITY_CUMULATIVE
                sum.boolField(3, monotonic)
            }
        }
    }

    /// The fields of one `NumberDataPoint`.
    mutating func numberDataPoint(_ point: MetricPoint) {
        fixed64Field(2, point.startNanoseconds ?? 0)
        fixed64Field(3, point.timeNanoseconds)
        switch point.value {
        case .double(let number): doubleField(4, number)
        case .int(let number): sfixed64Field(6, number)
        }
        for attribute in point.attributes { keyValue(7, attribute) }
    }
}

extension Array where Element == UInt8 {
    /// One OTLP/JSON `Metric` object.
    mutating func appendOTLPMetric(_ metric: Metric) {
        appendRaw("{\"name\":")
        appendJSONString(metric.name)
        if !metric.description.isEmpty {
            appendRaw(",\"description\":")
            appendJSONString(metric.description)
        }
        if !metric.unit.isEmpty {
            appendRaw(",\"unit\":")
            appendJSONString(metric.unit)
        }
        switch metric.kind {
        case .gauge:
            appendRaw(",\"gauge\":{\"dataPoints\":")
            appendOTLPDataPoints(metric.points)
            append(UInt8(ascii: "}"))
        case .cumulativeSum(let monotonic):
            appendRaw(",\"sum\":{\"dataPoints\":")
            appendOTLPDataPoints(metric.points)
            appendRaw(",\"aggregationTemporality\":2")
            if monotonic { appendRaw(",\"isMonotonic\":true") }
            append(UInt8(ascii: "}"))
        }
        append(UInt8(ascii: "}"))
    }

    private mutating func appendOTLPDataPoints(_ points: [MetricPoint]) {
        append(UInt8(ascii: "["))
        for (index, point) in points.enumerated() {
            if index > 0 { append(UInt8(ascii: ",")) }
            append(UInt8(ascii: "{"))
            if !point.attributes.isEmpty {
                appendRaw("\"attributes\":")
                appendOTLPAttributes(point.attributes[...], truncation: .none)
                append(UInt8(ascii: ","))
            }
            if let start = point.startNanoseconds, start > 0 {
                appendRaw("\"startTimeUnixNano\":")
                appendQuotedDecimal(start)
                append(UInt8(ascii: ","))
            }
            appendRaw("\"timeUnixNano\":")
            appendQuotedDecimal(point.timeNanoseconds)
            switch point.value {
            case .double(let number):
                appendRaw(",\"asDouble\":")
                appendDouble(number, nonFiniteAsStrings: true)
            case .int(let number):
                appendRaw(",\"asInt\":\"")
                appendDecimal(number)
                append(UInt8(ascii: "\""))
            }
            append(UInt8(ascii: "}"))
        }
        append(UInt8(ascii: "]"))
    }
}
