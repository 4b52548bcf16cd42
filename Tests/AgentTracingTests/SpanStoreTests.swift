import AgentTracing
import Dispatch
import Testing
import Tracing

/// The span store at the default size and above, with several threads ending spans into it at once.
@Suite struct SpanStoreTests {
    /// Two threads, each ending `spansPerThread` spans named "thread T span I", into one tracer.
    static func recordOnTwoThreads(into tracer: RingBufferTracer, spansPerThread: Int) {
        DispatchQueue.concurrentPerform(iterations: 2) { thread in
            for index in 0..<spansPerThread { tracer.startSpan("thread \(thread) span \(index)").end() }
        }
    }

    @Test func twoThreadsIntoALargeStoreLeaveExactlyItsCapacityAndEachThreadsNewestSpans() throws {
        let capacity = 10_000
        let spansPerThread = 20_000
        let (tracer, _) = SampleTraces.tracer(capacity: capacity, step: 1)
        Self.recordOnTwoThreads(into: tracer, spansPerThread: spansPerThread)
        let held = tracer.finishedSpans()
        #expect(held.count == capacity)
        #expect(tracer.count == capacity)
        #expect(tracer.finishedSpanCount == UInt64(2 * spansPerThread))
        #expect(tracer.droppedSpanCount == UInt64(2 * spansPerThread - capacity))
        #expect(Set(held.map(\.spanID)).count == capacity)
        #expect(zip(held, held.dropFirst()).allSatisfy { $0.endNanoseconds <= $1.endNanoseconds })
        // The oldest spans are dropped first: what is left of each thread is its newest spans, up to its last.
        for thread in 0..<2 {
            let indices = held.compactMap { span -> Int? in
                let parts = span.name.split(separator: " ")
                return parts[1] == "\(thread)" ? Int(parts[3]) : nil
            }.sorted()
            if let first = indices.first {
                #expect(indices == Array(first..<spansPerThread), "thread \(thread) kept a gap")
            }
        }
    }

    @Test func aCursorReadingBehindTwoWritersLearnsOfEverySpanDroppedBeforeItRead() {
        let capacity = 2_048
        let (tracer, _) = SampleTraces.tracer(capacity: capacity)
        for index in 0..<3 { tracer.startSpan("early \(index)").end() }
        let first = tracer.finishedSpans(after: .start, limit: 2)
        #expect(first.spans.map(\.name) == ["early 0", "early 1"])
        #expect(first.cursor.passedSpanCount == 2)

        Self.recordOnTwoThreads(into: tracer, spansPerThread: capacity)
        var cursor = first.cursor
        var read = 0
        var missed: UInt64 = 0
        while true {
            let batch = tracer.finishedSpans(after: cursor, limit: 500)
            read += batch.spans.count
            missed += batch.missed
            cursor = batch.cursor
            if batch.spans.isEmpty { break }
        }
        #expect(read == capacity)
        #expect(missed == UInt64(1 + 2 * capacity - capacity))
        // The two spans read first were dropped later, after this reader had them.
        #expect(tracer.droppedSpanCount == missed + 2)
        #expect(cursor.passedSpanCount == tracer.finishedSpanCount)
    }

    @Test func removingAllFromALargeStoreKeepsNumberingAndTheBoundAfterwards() {
        let capacity = 4_096
        let (tracer, _) = SampleTraces.tracer(capacity: capacity)
        Self.recordOnTwoThreads(into: tracer, spansPerThread: capacity)
        let cursor = tracer.finishedSpans(after: .start).cursor
        #expect(tracer.removeAll().count == capacity)
        #expect(tracer.count == 0)
        Self.recordOnTwoThreads(into: tracer, spansPerThread: capacity)
        #expect(tracer.count == capacity)
        let after = tracer.finishedSpans(after: cursor)
        #expect(after.spans.count == capacity)
        #expect(after.missed == UInt64(capacity))
        #expect(tracer.finishedSpanCount == UInt64(4 * capacity))
        #expect(tracer.droppedSpanCount == UInt64(2 * capacity))
    }
}
