import AgentTracing
public import HostStats
import Tracing

/// The `collect snapshot` span: one per snapshot or `watch` tick of one host, the parent of the
/// connect and command spans the collection causes (they start in its context).
///
/// Attributes: `hostscope.host`, `hostscope.collector` (asked: auto, proc, tools; then the one used),
/// `hostscope.collection.mode` (`snapshot` or `tick`), `hostscope.snapshot.warnings` (count),
/// `hostscope.snapshot.duration_ms`. The record comes back with registered secrets scrubbed
/// (``SnapshotRecord/scrubbingSecrets()``). A failed collection has error status with the record's message and
/// `hostscope.error.kind` (`timeout|auth|host_key|connect|command|parse`), as in the error record.
public enum SnapshotTracing {
    /// Runs one collection in a `collect snapshot` span.
    public static func collect(
        host: String, options: CollectorOptions, mode: String = "snapshot",
        _ body: () async -> SnapshotRecord
    ) async -> SnapshotRecord {
        await withSpan("collect snapshot", ofKind: .internal) { span in
            span.setAttribute("hostscope.host", value: .string(host))
            span.setAttribute("hostscope.collector", value: .string(options.kind.rawValue))
            span.setAttribute("hostscope.collection.mode", value: .string(mode))
            // Scrubbed here, where both snapshot and watch records pass, before any output or store sees them.
            let result = await body().scrubbingSecrets()
            record(result, in: span)
            return result
        }
    }

    static func record(_ record: SnapshotRecord, in span: any Span) {
        switch record {
        case .snapshot(let snapshot):
            span.setAttribute("hostscope.collector", value: .string(snapshot.collector))
            span.setAttribute("hostscope.snapshot.warnings", value: .int(Int64(snapshot.warnings.count)))
            span.setAttribute("hostscope.snapshot.duration_ms", value: .double(snapshot.durationMs))
        case .failure(let failure):
            span.setAttribute("hostscope.error.kind", value: .string(failure.kind.rawValue))
            span.setAttribute("error.type", value: .string(failure.kind.rawValue))
            span.setStatus(SpanStatus(code: .error, message: failure.message))
        }
    }
}
