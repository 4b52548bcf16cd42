/// One trace as `trace list` shows it: its root span, when it started, how long it took, how many spans it
/// holds and why it failed, if it did.
///
/// A pure function of the trace's spans. The root is the earliest span whose parent is not among them: the
/// real root, or, when that was never stored (evicted from the ring, or recorded by another process), the
/// outermost span that was.
public struct TraceOverview: Sendable, Equatable {
    public var traceID: TraceID
    /// The outermost span.
    public var root: FinishedSpan
    /// Whether the root's own parent is missing (the trace's real root was not stored).
    public var rootIsPartial: Bool
    /// The earliest start and the latest end of the trace's spans, in nanoseconds since the Unix epoch.
    public var startNanoseconds: UInt64
    public var endNanoseconds: UInt64
    public var spanCount: Int
    /// Spans with error status.
    public var errorCount: Int
    /// The error that explains the trace: the root's when it failed, else the earliest failed span's.
    public var error: FinishedSpan?

    /// From the first span's end to the last one's.
    public var durationNanoseconds: UInt64 { endNanoseconds - startNanoseconds }

    /// The summary of `spans` (all of one trace; spans of other traces are ignored), or `nil` when empty.
    public static func summarize(_ spans: [FinishedSpan]) -> TraceOverview? {
        guard let first = spans.first else { return nil }
        let trace = spans.filter { $0.traceID == first.traceID }
        let ids = Set(trace.map(\.spanID))
        let byStart = trace.sorted { ($0.startNanoseconds, $0.spanID) < ($1.startNanoseconds, $1.spanID) }
        let roots = byStart.filter { span in span.parentSpanID.map { !ids.contains($0) } ?? true }
        guard let root = roots.first(where: { $0.parentSpanID == nil }) ?? roots.first ?? byStart.first else {
            return nil
        }
        let failed = byStart.filter { $0.status.code == .error }
        return TraceOverview(
            traceID: first.traceID, root: root, rootIsPartial: root.parentSpanID != nil,
            startNanoseconds: trace.map(\.startNanoseconds).min() ?? root.startNanoseconds,
            endNanoseconds: max(trace.map(\.endNanoseconds).max() ?? 0, trace.map(\.startNanoseconds).max() ?? 0),
            spanCount: trace.count, errorCount: failed.count,
            error: root.status.code == .error ? root : failed.first)
    }
}
