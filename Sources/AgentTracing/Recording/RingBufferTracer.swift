public import Tracing

/// hostscope's `Tracer`: records every span into a bounded in-memory store of ended spans.
///
/// - Ids: W3C-compatible 16-byte trace and 8-byte span ids from the injected ``TraceIDGenerator``;
///   a child span takes its trace id and parent from the ``SpanContext`` in the `ServiceContext` it
///   starts in (a local span, or a remote one extracted from `traceparent`).
/// - Time: span starts, ends and events read the injected ``TracingClock``. Instants passed as
///   `DefaultTracerClock` timestamps (the swift-distributed-tracing default argument) mean "now" and
///   are read from that clock too; an instant of any other `TracerInstant` type, such as
///   ``TraceInstant``, is used as given.
/// - Overflow: the store holds exactly the newest ``capacity`` spans and drops the oldest to make
///   room, counting them in ``droppedSpanCount``; memory is bounded by `capacity` spans of at most
///   ``SpanLimits`` each.
/// - Threads: spans may start, change and end on any thread. Each span's state is behind its own lock;
///   an ended span goes into one ring under one lock (``SpanStore``). Every read sees every span that
///   ended before it began; readers get spans in end-time order.
/// - Secrets: every value is redacted at the source (``Redaction`` rules by key, then the
///   ``SecretScrubber``) before it is stored.
/// - Seams: ``FinishedSpanSink``s hear of each finished span as it ends, and
///   ``finishedSpans(after:limit:)`` lets a batching reader poll with its own cursor instead.
public final class RingBufferTracer: Tracer, Sendable {
    public typealias Span = RecordingSpan

    /// The most finished spans held at once.
    public let capacity: Int
    /// `service.name`, `service.version`, `host.name` stamped on every span.
    public let resource: TraceResource
    /// Per-span bounds.
    public let limits: SpanLimits
    /// The registry of secrets scrubbed from every recorded string.
    public let scrubber: SecretScrubber

    let clock: any TracingClock
    private let idGenerator: any TraceIDGenerator
    private let sinks: [any FinishedSpanSink]
    private let store: SpanStore
    /// What spans keep alive instead of the tracer.
    private let core: TracerCore

    /// A tracer holding at most `capacity` finished spans.
    public init(
        capacity: Int = 10_000,
        resource: TraceResource,
        limits: SpanLimits = SpanLimits(),
        clock: any TracingClock = SystemTracingClock(),
        idGenerator: any TraceIDGenerator = RandomTraceIDGenerator(),
        scrubber: SecretScrubber = SecretScrubber(),
        sinks: [any FinishedSpanSink] = []
    ) {
        self.capacity = capacity
        self.resource = resource
        self.limits = limits
        self.clock = clock
        self.idGenerator = idGenerator
        self.scrubber = scrubber
        self.sinks = sinks
        let store = SpanStore(capacity: capacity)
        self.store = store
        core = TracerCore(
            limits: limits, scrubber: scrubber, clock: clock, resource: resource, sinks: sinks, store: store)
    }

    deinit {
        // Held spans keep the core alive, and the core keeps the store: empty it so all of them go.
        _ = store.removeAll()
    }

    // MARK: Tracer

    public func startSpan<Instant: TracerInstant>(
        _ operationName: String,
        context: @autoclosure () -> ServiceContext,
        ofKind kind: SpanKind,
        at instant: @autoclosure () -> Instant,
        function: String,
        file fileID: String,
        line: UInt
    ) -> RecordingSpan {
        let start = core.nanoseconds(instant)
        let context = context()
        let spanContext: SpanContext
        let parentSpanID: SpanID?
        // The ambient context is usually empty (no span yet): skip the keyed lookup then.
        if !context.isEmpty, let parent = context.spanContext {
            spanContext = SpanContext(
                traceID: parent.traceID, spanID: idGenerator.nextSpanID(), traceFlags: parent.traceFlags,
                traceState: parent.traceState)
            parentSpanID = parent.spanID
        } else {
            spanContext = SpanContext(traceID: idGenerator.nextTraceID(), spanID: idGenerator.nextSpanID())
            parentSpanID = nil
        }
        return RecordingSpan(
            name: core.sanitize(operationName), parentContext: context, spanContext: spanContext,
            parentSpanID: parentSpanID, kind: FinishedSpan.Kind(kind), startNanoseconds: start, core: core)
    }

    /// Tells every sink to flush; the ring itself holds nothing back.
    public func forceFlush() {
        for sink in sinks { sink.forceFlush() }
    }

    // MARK: Reading the store

    /// The finished spans held now, oldest first (by end time; spans that ended at the same instant in
    /// the order they were stored).
    public func finishedSpans() -> [FinishedSpan] {
        Self.inEndOrder(store.all())
    }

    /// Up to `limit` spans finished after `cursor` (``SpanCursor/start`` for "from the start"), in end-time
    /// order, with the cursor to pass next time and how many spans were dropped before this reader saw
    /// them.
    public func finishedSpans(after cursor: SpanCursor, limit: Int = .max) -> FinishedSpanBatch {
        let read = store.spans(after: cursor, limit: limit)
        return FinishedSpanBatch(spans: Self.inEndOrder(read.spans), cursor: read.cursor, missed: read.missed)
    }

    /// Spans dropped because the store was full, since the tracer started. Never decreases.
    public var droppedSpanCount: UInt64 { store.counts.dropped }

    /// Spans finished since the tracer started (held or not).
    public var finishedSpanCount: UInt64 { store.counts.stored }

    /// Spans held now.
    public var count: Int { store.counts.held }

    /// Empties the store, returning what it held (oldest first); counts and cursors go on.
    @discardableResult
    public func removeAll() -> [FinishedSpan] {
        Self.inEndOrder(store.removeAll())
    }

    /// The spans' finished values, stably sorted by end time (they arrive almost sorted).
    private static func inEndOrder(_ spans: [RecordingSpan]) -> [FinishedSpan] {
        let finished = spans.map { $0.finished() }
        let isSorted = zip(finished, finished.dropFirst()).allSatisfy { $0.endNanoseconds <= $1.endNanoseconds }
        guard !isSorted else { return finished }
        let order = finished.indices.sorted {
            (finished[$0].endNanoseconds, $0) < (finished[$1].endNanoseconds, $1)
        }
        return order.map { finished[$0] }
    }
}

/// Hears of every finished span as it ends, on the thread that ended it.
///
/// The seam for persistence and push exporters: an implementation must not block, only hand the
/// span to its own queue (a batching persister wakes on its own schedule).
public protocol FinishedSpanSink: Sendable {
    /// Called once per span, after it is in the ring.
    func spanFinished(_ span: FinishedSpan)
    /// Called by `RingBufferTracer.forceFlush()`, e.g. before the process exits.
    func forceFlush()
}

extension FinishedSpanSink {
    public func forceFlush() {}
}

/// An explicit instant for `startSpan(at:)`, `end(at:)` and events, bypassing the tracer's clock.
public struct TraceInstant: TracerInstant {
    public let nanosecondsSinceEpoch: UInt64

    public init(nanosecondsSinceEpoch: UInt64) {
        self.nanosecondsSinceEpoch = nanosecondsSinceEpoch
    }

    public static func < (lhs: TraceInstant, rhs: TraceInstant) -> Bool {
        lhs.nanosecondsSinceEpoch < rhs.nanosecondsSinceEpoch
    }
}

extension FinishedSpan.Kind {
    /// The kind for a swift-distributed-tracing `SpanKind`.
    public init(_ kind: SpanKind) {
        switch kind {
        case .server: self = .server
        case .client: self = .client
        case .producer: self = .producer
        case .consumer: self = .consumer
        case .internal: self = .internal
        }
    }
}
