import AgentTracing
import Dispatch
import Foundation
import Synchronization
import Testing
import Tracing

/// The span store's rings, one per CPU: threads bound to chosen CPUs decide which ring each span goes to.
@Suite(
    .enabled(
        if: ProcessInfo.processInfo.activeProcessorCount >= 2,
        "a store with one ring per CPU needs two CPUs to show its rings apart"))
struct SpanStoreTests {
    /// Runs `bodies` at the same time, the i-th on a new thread bound to CPU `cpus[i]`, and waits for all.
    static func onCPUs(_ cpus: [Int], _ body: @escaping @Sendable (_ thread: Int) -> Void) {
        let done = DispatchGroup()
        let pinned = Atomic<Int>(0)
        for (thread, cpu) in cpus.enumerated() {
            done.enter()
            let worker = Thread {
                if CPUAffinity.pinCurrentThread(to: cpu) && CPUAffinity.currentCPU == cpu {
                    pinned.add(1, ordering: .relaxed)
                    body(thread)
                }
                done.leave()
            }
            worker.start()
        }
        done.wait()
        #expect(pinned.load(ordering: .relaxed) == cpus.count, "could not bind a thread to each of CPUs \(cpus)")
    }

    @Test func smallStoresKeepOneRingAndLargerOnesOnePerCPUUpToOnePer1024Spans() {
        #expect(SampleTraces.tracer(capacity: 2_047).0.ringCount == 1)
        #expect(SampleTraces.tracer(capacity: 2_048).0.ringCount == 2)
        let cpus = ProcessInfo.processInfo.processorCount
        #expect(SampleTraces.tracer(capacity: 1_024 * (cpus + 1)).0.ringCount == min(cpus, 256))
    }

    @Test func aCPUThatWentQuietGivesItsOldSpansUpToABusyOne() {
        let capacity = 4_096
        let (tracer, _) = SampleTraces.tracer(capacity: capacity)
        Self.onCPUs([0]) { _ in
            for index in 0..<capacity { tracer.startSpan("early \(index)").end() }
        }
        Self.onCPUs([1]) { _ in
            for index in 0..<capacity { tracer.startSpan("late \(index)").end() }
        }
        let held = tracer.finishedSpans()
        #expect(tracer.count == held.count)
        #expect(tracer.finishedSpanCount == UInt64(2 * capacity))
        #expect(tracer.droppedSpanCount == UInt64(2 * capacity - held.count))
        // Every late span took the slot of an early one, oldest first, a claim (32) at a time.
        #expect(!held.contains { $0.name.hasPrefix("early") })
        #expect((capacity - 32...capacity).contains(held.count))
        let names = Set(held.map(\.name))
        #expect((32..<capacity).allSatisfy { names.contains("late \($0)") })
        #expect(zip(held, held.dropFirst()).allSatisfy { $0.endNanoseconds <= $1.endNanoseconds })
    }

    @Test func aCPUThatStartsLateGrowsToItsShareWhileTheOtherKeepsRecording() {
        let capacity = 4_096
        let share = capacity / 2
        let (tracer, _) = SampleTraces.tracer(capacity: capacity)
        Self.onCPUs([0]) { _ in
            for index in 0..<capacity { tracer.startSpan("early \(index)").end() }
        }
        // Bursts in turn, so that neither CPU is ever quiet for longer than the other's burst.
        for round in 0..<24 {
            Self.onCPUs([1]) { _ in for index in 0..<256 { tracer.startSpan("one \(round) \(index)").end() } }
            Self.onCPUs([0]) { _ in for index in 0..<256 { tracer.startSpan("zero \(round) \(index)").end() } }
        }
        let held = tracer.finishedSpans()
        #expect(!held.contains { $0.name.hasPrefix("early") })
        let fromOne = held.filter { $0.name.hasPrefix("one") }.count
        let fromZero = held.filter { $0.name.hasPrefix("zero") }.count
        #expect((share - 32...share).contains(fromOne))
        #expect((share - 32...share).contains(fromZero))
        // Each CPU's newest spans are the ones held.
        let names = Set(held.map(\.name))
        #expect((0..<256).allSatisfy { names.contains("one 23 \($0)") && names.contains("zero 23 \($0)") })
        #expect((0..<256).allSatisfy { names.contains("one 17 \($0)") && names.contains("zero 17 \($0)") })
    }

    @Test func twoCPUsRecordingAtOnceStayWithinTheBoundAndKeepTheNewestSpans() {
        let capacity = 4_096
        let spansPerThread = 20_000
        let (tracer, clock) = SampleTraces.tracer(capacity: capacity, step: 1)
        Self.onCPUs([0, 1]) { thread in
            for index in 0..<spansPerThread { tracer.startSpan("thread \(thread) span \(index)").end() }
        }
        let held = tracer.finishedSpans()
        #expect((capacity - 64...capacity).contains(held.count))
        #expect(tracer.finishedSpanCount == UInt64(2 * spansPerThread))
        #expect(tracer.droppedSpanCount == UInt64(2 * spansPerThread - held.count))
        #expect(Set(held.map(\.spanID)).count == held.count)
        // Each span reads the clock twice: every held span is among the newest 2 × capacity spans.
        let now = clock.nanosecondsSinceEpoch()
        #expect(held.allSatisfy { now - $0.endNanoseconds <= UInt64(2 * 2 * capacity) })
        #expect(zip(held, held.dropFirst()).allSatisfy { $0.endNanoseconds <= $1.endNanoseconds })
    }

    @Test func aCursorReadsAcrossRingsInEndOrderAndCountsWhatWasDroppedUnread() {
        let capacity = 2_048
        let (tracer, _) = SampleTraces.tracer(capacity: capacity)
        Self.onCPUs([0]) { _ in for index in 0..<3 { tracer.startSpan("a\(index)").end() } }
        Self.onCPUs([1]) { _ in for index in 0..<3 { tracer.startSpan("b\(index)").end() } }
        Self.onCPUs([0]) { _ in tracer.startSpan("a3").end() }
        let first = tracer.finishedSpans(after: .start, limit: 4)
        #expect(first.spans.map(\.name) == ["a0", "a1", "a2", "b0"])
        #expect(first.missed == 0)
        #expect(first.cursor.passedSpanCount == 4)
        let second = tracer.finishedSpans(after: first.cursor)
        #expect(second.spans.map(\.name) == ["b1", "b2", "a3"])
        #expect(second.cursor.passedSpanCount == 7)

        // Twice the capacity more on both CPUs: the cursor learns of every span dropped before it read.
        Self.onCPUs([0, 1]) { thread in
            for index in 0..<capacity { tracer.startSpan("c\(thread) \(index)").end() }
        }
        var cursor = second.cursor
        var read = 0
        var missed: UInt64 = 0
        while true {
            let batch = tracer.finishedSpans(after: cursor, limit: 500)
            read += batch.spans.count
            missed += batch.missed
            cursor = batch.cursor
            if batch.spans.isEmpty { break }
        }
        // Slots one ring took from the other and did not fill yet hold nothing: up to a claim (32) per ring.
        #expect(read == tracer.count)
        #expect((capacity - 64...capacity).contains(read))
        #expect(missed == UInt64(2 * capacity - read))
        #expect(tracer.droppedSpanCount == 7 + missed)
        #expect(cursor.passedSpanCount == tracer.finishedSpanCount)
    }

    @Test func removingAllEmptiesEveryRingAndLaterSpansStillFitTheBound() {
        let capacity = 2_048
        let (tracer, _) = SampleTraces.tracer(capacity: capacity)
        Self.onCPUs([0, 1]) { thread in
            for index in 0..<capacity { tracer.startSpan("before \(thread) \(index)").end() }
        }
        let cursor = tracer.finishedSpans(after: .start).cursor
        #expect((capacity - 64...capacity).contains(tracer.removeAll().count))
        #expect(tracer.count == 0)
        Self.onCPUs([1]) { _ in for index in 0..<(2 * capacity) { tracer.startSpan("after \(index)").end() } }
        #expect((capacity - 64...capacity).contains(tracer.count))
        let after = tracer.finishedSpans(after: cursor)
        #expect(after.spans.count == tracer.count)
        #expect(after.spans.allSatisfy { $0.name.hasPrefix("after") })
        #expect(tracer.finishedSpanCount == UInt64(4 * capacity))
    }
}
