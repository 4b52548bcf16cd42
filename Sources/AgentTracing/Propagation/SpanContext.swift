public import Tracing

/// What a `ServiceContext` carries about the current span: enough to parent a child span or to
/// fill a W3C `traceparent` header.
public struct SpanContext: Hashable, Sendable {
    /// The trace the span belongs to.
    public var traceID: TraceID
    /// The span itself.
    public var spanID: SpanID
    /// W3C trace-flags; bit 0 is "sampled".
    public var traceFlags: UInt8
    /// The W3C `tracestate` header value received from upstream, passed on unchanged ("" when none).
    public var traceState: String
    /// Whether the context arrived from another process through `traceparent`.
    public var isRemote: Bool

    /// The sampled flag: hostscope records every span, so its own spans always set it.
    public static let sampledFlag: UInt8 = 0x01

    public init(
        traceID: TraceID, spanID: SpanID, traceFlags: UInt8 = SpanContext.sampledFlag, traceState: String = "",
        isRemote: Bool = false
    ) {
        self.traceID = traceID
        self.spanID = spanID
        self.traceFlags = traceFlags
        self.traceState = traceState
        self.isRemote = isRemote
    }
}

/// The `ServiceContext` key under which hostscope keeps the current span's ``SpanContext``.
public enum SpanContextKey: ServiceContextKey {
    public typealias Value = SpanContext
    public static var nameOverride: String? { "hostscope.span-context" }
}

extension ServiceContext {
    /// The span context of the span this context belongs to, if any.
    public var spanContext: SpanContext? {
        get { self[SpanContextKey.self] }
        set { self[SpanContextKey.self] = newValue }
    }
}
