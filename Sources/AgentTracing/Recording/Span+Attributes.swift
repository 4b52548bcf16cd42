public import Tracing
import ValueFormats

extension Span {
    /// Sets one typed attribute: on hostscope's own spans directly (one lock, no rebuilt attribute
    /// set), on any other tracer's spans through `attributes`, and not at all on a span that records
    /// nothing (a no-op tracer's).
    public func setAttribute(_ key: String, value: AttributeValue) {
        if let span = self as? RecordingSpan {
            span.setAttribute(key, value)
        } else if isRecording {
            attributes[key] = value.spanAttribute
        }
    }

    /// Adds an event at an explicit instant with typed attributes.
    public func addEvent(_ name: String, at nanosecondsSinceEpoch: UInt64, attributes: [Attribute]) {
        var spanAttributes = SpanAttributes()
        for attribute in attributes { spanAttributes.set(attribute.key, value: attribute.value.spanAttribute) }
        addEvent(
            SpanEvent(
                name: name, at: TraceInstant(nanosecondsSinceEpoch: nanosecondsSinceEpoch),
                attributes: spanAttributes))
    }

    /// Ends the span at an explicit instant (nanoseconds since the Unix epoch).
    public func end(atNanoseconds nanosecondsSinceEpoch: UInt64) {
        end(at: TraceInstant(nanosecondsSinceEpoch: nanosecondsSinceEpoch))
    }
}

/// The wall clock as the bootstrapped tracer reads it, for instants computed from measured durations.
public enum TraceClock {
    /// Now, in nanoseconds since the Unix epoch: the tracer's injected clock when hostscope's tracer is
    /// bootstrapped, `CLOCK_REALTIME` otherwise.
    public static func now() -> UInt64 {
        if let tracer = InstrumentationSystem.tracer as? RingBufferTracer {
            return tracer.clock.nanosecondsSinceEpoch()
        }
        return SystemTracingClock().nanosecondsSinceEpoch()
    }

    /// A duration in whole nanoseconds (negative durations count as zero).
    public static func nanoseconds(_ duration: Duration) -> UInt64 {
        UInt64(max(0, duration.wholeNanoseconds))
    }
}
