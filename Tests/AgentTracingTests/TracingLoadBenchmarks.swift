import AgentTracing
import Foundation
import Testing
import Tracing

/// What the tracer costs for spans hostscope really recorded: each file of flat spans named in
/// HOSTSCOPE_BENCH_REPLAY (colon-separated; `trace export --format spans` output, which
/// Scripts/bench/tracing/real_load.sh writes) is recorded again, span by span as the instrumentation
/// recorded it, and read back through a cursor as the database writer reads the store. Off unless that
/// variable is set, and meaningful only in a release build.
@Suite(
    .enabled(
        if: ProcessInfo.processInfo.environment["HOSTSCOPE_BENCH_REPLAY"] != nil,
        "runs only with HOSTSCOPE_BENCH_REPLAY=FILE[:FILE…], in release mode: Scripts/bench/tracing/real_load.sh"))
struct TracingLoadBenchmarks {
    static let environment = ProcessInfo.processInfo.environment
    /// Spans recorded per file, the file's spans over and over (at least once).
    static let replaySpans = Int(environment["HOSTSCOPE_BENCH_REPLAY_SPANS"] ?? "") ?? 300_000

    /// One recorded span, with what starting it again needs prepared outside the measured loop.
    struct Recorded {
        let span: FinishedSpan
        let context: ServiceContext
        let kind: SpanKind
    }

    static func recorded(_ span: FinishedSpan) -> Recorded {
        var context = ServiceContext.topLevel
        if let parent = span.parentSpanID {
            context.spanContext = SpanContext(traceID: span.traceID, spanID: parent)
        }
        let kinds: [FinishedSpan.Kind: SpanKind] = [
            .internal: .internal, .server: .server, .client: .client, .producer: .producer, .consumer: .consumer,
        ]
        return Recorded(span: span, context: context, kind: kinds[span.kind] ?? .internal)
    }

    /// Records `span` as its instrumentation did: `withSpan` in its parent's context (which makes the span
    /// the current one for its body), attributes one by one, events, status.
    @inline(never)
    static func record(_ recorded: Recorded, into tracer: RingBufferTracer) {
        let source = recorded.span
        tracer.withSpan(source.name, context: recorded.context, ofKind: recorded.kind) { span in
            for attribute in source.attributes { span.setAttribute(attribute.key, attribute.value) }
            for event in source.events { span.addEvent(event.name, attributes: event.attributes) }
            if source.status.code != .unset { span.setStatus(source.status.code, message: source.status.message) }
        }
    }

    static func threadCPUSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    @Test func recordedSpansReplayedThroughTheTracer() throws {
        var results: [String: [String: Double]] = [:]
        for path in Self.environment["HOSTSCOPE_BENCH_REPLAY", default: ""].split(separator: ":").map(String.init) {
            let text = try String(contentsOfFile: path, encoding: .utf8)
            let spans = try text.split(separator: "\n").map { try FinishedSpan(flatJSONLine: String($0)) }
            try #require(!spans.isEmpty, "\(path) holds no spans")
            let replay = spans.map(Self.recorded)
            let rounds = max(1, Self.replaySpans / replay.count)
            // As hostscope runs it: the default store size, one registered secret to scrub every string for.
            let tracer = RingBufferTracer(
                resource: .hostscope(version: "0.1.0", hostName: "bench"),
                scrubber: SecretScrubber(secrets: ["a-registered-secret"]))
            for recorded in replay.prefix(1_000) { Self.record(recorded, into: tracer) }  // Warm-up.
            var cursor = tracer.finishedSpans(after: .start).cursor

            var recordCPU = 0.0
            var readCPU = 0.0
            var read = 0
            for _ in 0..<rounds {
                var start = Self.threadCPUSeconds()
                for recorded in replay { Self.record(recorded, into: tracer) }
                recordCPU += Self.threadCPUSeconds() - start
                // The database writer's read: every span after its cursor, built into a FinishedSpan.
                start = Self.threadCPUSeconds()
                let batch = tracer.finishedSpans(after: cursor, limit: tracer.capacity)
                readCPU += Self.threadCPUSeconds() - start
                cursor = batch.cursor
                read += batch.spans.count
            }
            let total = Double(rounds * replay.count)
            #expect(tracer.finishedSpanCount == UInt64(rounds * replay.count + min(1_000, replay.count)))
            let attributes = spans.reduce(0) { $0 + $1.attributes.count }
            results[URL(fileURLWithPath: path).lastPathComponent] = [
                "spans_in_file": Double(spans.count),
                "attributes_per_span": Double(attributes) / Double(spans.count),
                "events_per_span": Double(spans.reduce(0) { $0 + $1.events.count }) / Double(spans.count),
                "replayed_spans": total,
                "record_cpu_ns_per_span": recordCPU / total * 1e9,
                "read_cpu_ns_per_span": readCPU / Double(max(read, 1)) * 1e9,
                "read_spans": Double(read),
            ]
        }
        let json = try JSONSerialization.data(withJSONObject: results, options: [.sortedKeys, .prettyPrinted])
        if let path = Self.environment["HOSTSCOPE_BENCH_OUT"] {
            try json.write(to: URL(fileURLWithPath: path))
        }
        print(String(decoding: json, as: UTF8.self))
    }
}
