import Tracing

/// What a span needs of its tracer while it records and when it ends: the limits, the scrubber, the
/// clock, the resource, the sinks and the store of ended spans.
///
/// Spans keep this core alive instead of the tracer: the store holds ended spans, so a span that
/// held its tracer would keep the tracer alive for as long as the store held the span. A span that
/// outlives its tracer still has all it needs, and the tracer empties the store when it goes.
final class TracerCore: Sendable {
    let limits: SpanLimits
    let scrubber: SecretScrubber
    let clock: any TracingClock
    let resource: TraceResource
    let sinks: [any FinishedSpanSink]
    let store: SpanStore

    init(
        limits: SpanLimits, scrubber: SecretScrubber, clock: any TracingClock, resource: TraceResource,
        sinks: [any FinishedSpanSink], store: SpanStore
    ) {
        self.limits = limits
        self.scrubber = scrubber
        self.clock = clock
        self.resource = resource
        self.sinks = sinks
        self.store = store
    }

    /// Stores an ended span and tells the sinks.
    func record(_ span: RecordingSpan) {
        store.record(span)
        guard !sinks.isEmpty else { return }
        let finished = span.finished()
        for sink in sinks { sink.spanFinished(finished) }
    }

    @inline(__always)
    func nanoseconds<Instant: TracerInstant>(_ instant: () -> Instant) -> UInt64 {
        Instant.self == DefaultTracerClock.Timestamp.self
            ? clock.nanosecondsSinceEpoch() : instant().nanosecondsSinceEpoch
    }

    /// A free-text string (name, message) scrubbed of secrets and cut to the string limit.
    func sanitize(_ text: String) -> String {
        let scrubbed = scrubber.scrub(text)
        return scrubbed.utf8.count > limits.maximumStringBytes
            ? SpanLimits.truncate(scrubbed, toBytes: limits.maximumStringBytes) : scrubbed
    }

    /// An attribute value after the key rules, the secret scrubber and the string limit.
    func sanitize(key: String, value: AttributeValue) -> AttributeValue {
        switch value {
        case .string(let text): .string(sanitize(Redaction.attributeText(key: key, text)))
        case .stringArray(let texts): .stringArray(texts.map { sanitize(Redaction.attributeText(key: key, $0)) })
        default: value  // Only text can carry a credential or exceed the string limit.
        }
    }

    /// Attributes for an event or link: sanitized, de-duplicated (last wins) and bounded.
    func sanitize(_ attributes: [Attribute]) -> (attributes: [Attribute], dropped: Int) {
        var result: [Attribute] = []
        result.reserveCapacity(min(attributes.count, limits.maximumAttributesPerEvent))
        var dropped = 0
        for attribute in attributes {
            let value = sanitize(key: attribute.key, value: attribute.value)
            if let index = result.firstIndex(where: { $0.key == attribute.key }) {
                result[index].value = value
            } else if result.count < limits.maximumAttributesPerEvent {
                result.append(Attribute(attribute.key, value))
            } else {
                dropped += 1
            }
        }
        return (result, dropped)
    }
}
