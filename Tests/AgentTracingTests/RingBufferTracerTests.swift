import AgentTracing
import Dispatch
import Synchronization
import Testing
import Tracing
import ValueFormats

@Suite struct RingBufferTracerTests {
    @Test func idsAndTimesComeFromTheInjectedGeneratorAndClock() throws {
        let (tracer, _) = SampleTraces.tracer(step: 1_000)
        let span = tracer.startSpan("first")
        span.end()
        let finished = try #require(tracer.finishedSpans().first)
        #expect(finished.traceID.hex == "00000000000000000000000000000001")
        #expect(finished.spanID.hex == "0000000000000001")
        #expect(finished.parentSpanID == nil)
        #expect(finished.startNanoseconds == SampleTraces.start)
        #expect(finished.endNanoseconds == SampleTraces.start + 1_000)
        #expect(finished.resource == SampleTraces.resource)
    }

    @Test func aSpanThatOutlivesItsTracerStillRecordsAndEnds() throws {
        let sink = CollectingSink()
        weak var released: RingBufferTracer?
        var span: RecordingSpan?
        do {
            let (tracer, _) = SampleTraces.tracer(secrets: ["hunter2"], sinks: [sink])
            released = tracer
            span = tracer.startSpan("orphan")
        }
        // Spans keep what they need of the tracer (its core), not the tracer itself.
        #expect(released == nil)
        span?.setAttribute("note", "password hunter2")
        span?.end()
        let finished = try #require(sink.spans.first)
        #expect(finished.name == "orphan")
        #expect(finished.attributes == [Attribute("note", .string("password REDACTED"))])
        #expect(finished.resource == SampleTraces.resource)
    }

    @Test func releasingATracerFreesTheSpansItHeld() {
        weak var held: RecordingSpan?
        do {
            let (tracer, _) = SampleTraces.tracer()
            let span = tracer.startSpan("held")
            span.end()
            held = span
            #expect(tracer.count == 1)
        }
        // A held span keeps the core, which keeps the store that holds the span: the tracer breaks that.
        #expect(held == nil)
    }

    @Test func explicitInstantsOfAnotherTypeAreUsedAsGiven() throws {
        let (tracer, _) = SampleTraces.tracer()
        let span = tracer.startSpan("explicit", at: TraceInstant(nanosecondsSinceEpoch: 5_000))
        span.end(at: TraceInstant(nanosecondsSinceEpoch: 9_000))
        let finished = try #require(tracer.finishedSpans().first)
        #expect(finished.startNanoseconds == 5_000)
        #expect(finished.endNanoseconds == 9_000)
        #expect(finished.durationNanoseconds == 4_000)
    }

    @Test func childrenStartedInAParentsContextShareItsTrace() throws {
        let (tracer, _) = SampleTraces.tracer()
        tracer.withSpan("parent") { parent in
            tracer.withSpan("child") { child in
                tracer.withSpan("grandchild") { _ in }
                #expect(child.parentSpanID == parent.spanID)
            }
            let explicit = tracer.startSpan("explicit child", context: parent.context)
            explicit.end()
        }
        tracer.withSpan("second root") { _ in }
        let spans = Dictionary(uniqueKeysWithValues: tracer.finishedSpans().map { ($0.name, $0) })
        let parent = try #require(spans["parent"])
        #expect(spans["child"]?.parentSpanID == parent.spanID)
        #expect(spans["child"]?.traceID == parent.traceID)
        #expect(spans["grandchild"]?.parentSpanID == spans["child"]?.spanID)
        #expect(spans["explicit child"]?.parentSpanID == parent.spanID)
        #expect(spans["second root"]?.parentSpanID == nil)
        #expect(spans["second root"]?.traceID != parent.traceID)
    }

    @Test func asyncChildrenFindTheirParentThroughTheTaskLocalContext() async throws {
        let (tracer, _) = SampleTraces.tracer()
        try await tracer.withSpan("async parent") { parent in
            try await Task.sleep(for: .milliseconds(1))
            await withTaskGroup(of: Void.self) { group in
                for index in 0..<3 {
                    group.addTask { tracer.withSpan("async child \(index)") { _ in } }
                }
            }
            #expect(parent.isRecording)
        }
        let spans = tracer.finishedSpans()
        let parent = try #require(spans.first { $0.name == "async parent" })
        let children = spans.filter { $0.name.hasPrefix("async child") }
        #expect(children.count == 3)
        #expect(children.allSatisfy { $0.parentSpanID == parent.spanID && $0.traceID == parent.traceID })
    }

    @Test func aRemoteParentFromTraceparentContinuesItsTrace() throws {
        let (tracer, _) = SampleTraces.tracer()
        var context = ServiceContext.topLevel
        let headers = [
            "traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "tracestate": "vendor=1",
        ]
        tracer.extract(headers, into: &context, using: DictionaryExtractor())
        let span = tracer.startSpan("server side", context: context, ofKind: .server)
        span.end()
        let finished = try #require(tracer.finishedSpans().first)
        #expect(finished.traceID.hex == "4bf92f3577b34da6a3ce929d0e0e4736")
        #expect(finished.parentSpanID?.hex == "00f067aa0ba902b7")
        #expect(finished.traceState == "vendor=1")
        #expect(finished.kind == .server)
    }

    @Test func injectionCarriesTheCurrentSpanAsTraceparent() {
        let (tracer, _) = SampleTraces.tracer()
        tracer.withSpan("http request", ofKind: .client) { span in
            var headers: [String: String] = [:]
            tracer.inject(span.context, into: &headers, using: DictionaryInjector())
            #expect(headers["traceparent"] == "00-\(span.traceID.hex)-\(span.spanID.hex)-01")
            #expect(headers["tracestate"] == nil)
            #expect(tracer.propagationHeaders(for: span.context).map(\.name) == ["traceparent"])
        }
        var empty: [String: String] = [:]
        tracer.inject(.topLevel, into: &empty, using: DictionaryInjector())
        #expect(empty.isEmpty)
    }

    @Test func theRingOverwritesTheOldestAndCountsWhatItDropped() {
        let (tracer, _) = SampleTraces.tracer(capacity: 3)
        for index in 0..<10 {
            tracer.startSpan("span \(index)").end()
        }
        #expect(tracer.finishedSpans().map(\.name) == ["span 7", "span 8", "span 9"])
        #expect(tracer.droppedSpanCount == 7)
        #expect(tracer.finishedSpanCount == 10)
        #expect(tracer.count == 3)
    }

    @Test func aCursorReaderGetsEachSpanOnceAndLearnsWhatItMissed() {
        let (tracer, _) = SampleTraces.tracer(capacity: 4)
        for index in 0..<3 { tracer.startSpan("a\(index)").end() }
        let first = tracer.finishedSpans(after: .start, limit: 2)
        #expect(first.spans.map(\.name) == ["a0", "a1"])
        #expect(first.cursor.passedSpanCount == 2)
        #expect(first.missed == 0)
        for index in 0..<6 { tracer.startSpan("b\(index)").end() }
        // Sequence 3 (a2) .. 9 (b5) were written; the ring keeps 6...9, so 3, 4, 5 are gone.
        let second = tracer.finishedSpans(after: first.cursor)
        #expect(second.missed == 3)
        #expect(second.spans.map(\.name) == ["b2", "b3", "b4", "b5"])
        #expect(second.cursor.passedSpanCount == 9)
        let third = tracer.finishedSpans(after: second.cursor)
        #expect(third.spans.isEmpty)
        #expect(third.cursor == second.cursor)
        #expect(third.missed == 0)
    }

    @Test func removingAllKeepsCountsAndCursorsGoing() {
        let (tracer, _) = SampleTraces.tracer(capacity: 2)
        for index in 0..<3 { tracer.startSpan("s\(index)").end() }
        let cursor = tracer.finishedSpans(after: .start).cursor
        #expect(tracer.removeAll().map(\.name) == ["s1", "s2"])
        #expect(tracer.count == 0)
        #expect(tracer.droppedSpanCount == 1)
        tracer.startSpan("after").end()
        #expect(tracer.finishedSpans(after: cursor).spans.map(\.name) == ["after"])
        #expect(tracer.finishedSpanCount == 4)
    }

    @Test func memoryStaysBoundedByCapacityUnderAMillionSpans() {
        let (tracer, _) = SampleTraces.tracer(capacity: 1_000, step: 1)
        for _ in 0..<1_000_000 {
            let span = tracer.startSpan("exec")
            span.setAttribute("process.exit.code", 0)
            span.end()
        }
        #expect(tracer.count == 1_000)
        #expect(tracer.droppedSpanCount == 999_000)
    }

    @Test func sinksHearOfEverySpanAfterItIsInTheRing() {
        let sink = CollectingSink()
        let (tracer, _) = SampleTraces.tracer(capacity: 2, sinks: [sink])
        for index in 0..<5 { tracer.startSpan("s\(index)").end() }
        tracer.forceFlush()
        #expect(sink.names == ["s0", "s1", "s2", "s3", "s4"])
        #expect(sink.flushes == 1)
    }

    @Test func manyTasksRecordingAtOnceLoseNothingAndKeepTheirParents() async {
        let (tracer, _) = SampleTraces.tracer(capacity: 100_000)
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    for index in 0..<2_000 {
                        tracer.withSpan("task \(task) op \(index)") { parent in
                            parent.setAttribute("task", task)
                            tracer.withSpan("child") { child in child.setAttribute("index", index) }
                        }
                    }
                }
            }
        }
        let spans = tracer.finishedSpans()
        #expect(spans.count == 32_000)
        #expect(Set(spans.map(\.spanID)).count == 32_000)
        #expect(tracer.droppedSpanCount == 0)
        let byID = Dictionary(uniqueKeysWithValues: spans.map { ($0.spanID, $0) })
        let children = spans.filter { $0.name == "child" }
        #expect(children.count == 16_000)
        #expect(children.allSatisfy { child in byID[child.parentSpanID!]?.traceID == child.traceID })
    }

    @Test func concurrentOverflowDropsExactlyTheExcess() async {
        let (tracer, _) = SampleTraces.tracer(capacity: 500)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    for _ in 0..<5_000 { tracer.startSpan("x").end() }
                }
            }
        }
        #expect(tracer.count == 500)
        #expect(tracer.droppedSpanCount == 19_500)
    }
}

/// Several threads ending spans into one tracer: every span reaches the one ring, and readers see them in end-time
/// order.
@Suite struct RingBufferTracerThreadTests {
    @Test func aSpanIsReadableAsSoonAsItHasEnded() throws {
        let (tracer, _) = SampleTraces.tracer(capacity: 10_000)
        tracer.startSpan("first").end()
        #expect(tracer.finishedSpans().map(\.name) == ["first"])
        let cursor = tracer.finishedSpans(after: .start).cursor
        DispatchQueue.concurrentPerform(iterations: 2) { thread in tracer.startSpan("thread \(thread)").end() }
        #expect(tracer.count == 3)
        #expect(tracer.finishedSpanCount == 3)
        #expect(Set(tracer.finishedSpans(after: cursor).spans.map(\.name)) == ["thread 0", "thread 1"])
    }

    @Test func spansComeBackInEndTimeOrderWhateverOrderTheyEndedIn() {
        let (tracer, _) = SampleTraces.tracer(capacity: 10_000)
        let spans = ["third", "first", "second"].map { tracer.startSpan($0) }
        for (span, end) in zip(spans, [3_000, 1_000, 2_000] as [UInt64]) { span.end(atNanoseconds: end) }
        #expect(tracer.finishedSpans().map(\.name) == ["first", "second", "third"])
        #expect(tracer.finishedSpans(after: .start).spans.map(\.name) == ["first", "second", "third"])
        #expect(tracer.removeAll().map(\.name) == ["first", "second", "third"])
    }

    @Test func twoThreadsRecordingAtOnceLoseNothingAndReadBackInEndTimeOrder() {
        let (tracer, _) = SampleTraces.tracer(capacity: 100_000, step: 1)
        DispatchQueue.concurrentPerform(iterations: 2) { thread in
            for index in 0..<20_000 {
                let span = tracer.startSpan("thread \(thread) span \(index)")
                span.setAttribute("index", index)
                span.end()
            }
        }
        let spans = tracer.finishedSpans()
        #expect(spans.count == 40_000)
        #expect(Set(spans.map(\.spanID)).count == 40_000)
        #expect(zip(spans, spans.dropFirst()).allSatisfy { $0.endNanoseconds <= $1.endNanoseconds })
        #expect(tracer.finishedSpanCount == 40_000)
        #expect(tracer.droppedSpanCount == 0)
    }

    @Test func theCapacityBoundHoldsAcrossThreadsAndLaterSpansOverwriteEveryEarlierOne() {
        let capacity = 1_000
        let (tracer, _) = SampleTraces.tracer(capacity: capacity)
        DispatchQueue.concurrentPerform(iterations: 2) { _ in
            for _ in 0..<10_000 { tracer.startSpan("concurrent").end() }
        }
        #expect(tracer.count == capacity)
        #expect(tracer.droppedSpanCount == 19_000)
        #expect(tracer.finishedSpanCount == 20_000)
        // Nothing staged during the concurrent phase outlives a full ring's worth of later spans.
        for _ in 0..<capacity { tracer.startSpan("later").end() }
        #expect(tracer.finishedSpans().allSatisfy { $0.name == "later" })
        #expect(tracer.droppedSpanCount == 20_000)
    }

    @Test func aCursorReaderRacingTwoWritersGetsEverySpanExactlyOnce() {
        let (tracer, _) = SampleTraces.tracer(capacity: 100_000)
        let writersDone = Atomic<Int>(0)
        let reader = Lock<(seen: [SpanID], cursor: SpanCursor, missed: UInt64)>(([], .start, 0))
        DispatchQueue.concurrentPerform(iterations: 3) { thread in
            guard thread == 2 else {
                for _ in 0..<10_000 { tracer.startSpan("x").end() }
                writersDone.add(1, ordering: .releasing)
                return
            }
            reader.withLock { reader in
                while true {
                    let done = writersDone.load(ordering: .acquiring) == 2
                    let batch = tracer.finishedSpans(after: reader.cursor, limit: 500)
                    reader.seen += batch.spans.map(\.spanID)
                    reader.cursor = batch.cursor
                    reader.missed += batch.missed
                    if done && batch.spans.isEmpty { break }
                }
            }
        }
        let (seen, cursor, missed) = reader.withLock { $0 }
        #expect(seen.count == 20_000)
        #expect(Set(seen).count == 20_000)
        #expect(missed == 0)
        #expect(cursor.passedSpanCount == 20_000)
    }
}

struct DictionaryExtractor: Extractor {
    func extract(key: String, from carrier: [String: String]) -> String? { carrier[key] }
}

struct DictionaryInjector: Injector {
    func inject(_ value: String, forKey key: String, into carrier: inout [String: String]) { carrier[key] = value }
}

final class CollectingSink: FinishedSpanSink {
    private let state = Lock<(spans: [FinishedSpan], flushes: Int)>(([], 0))

    func spanFinished(_ span: FinishedSpan) { state.withLock { $0.spans.append(span) } }
    func forceFlush() { state.withLock { $0.flushes += 1 } }

    var spans: [FinishedSpan] { state.withLock { $0.spans } }
    var names: [String] { spans.map(\.name) }
    var flushes: Int { state.withLock { $0.flushes } }
}
