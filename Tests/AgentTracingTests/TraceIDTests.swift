import AgentTracing
import Dispatch
import Synchronization
import Testing
import ValueFormats

@Suite struct TraceIDTests {
    @Test func hexRoundTripsThroughTheId() throws {
        let id = try #require(TraceID(hex: "4bf92f3577b34da6a3ce929d0e0e4736"))
        #expect(id.hex == "4bf92f3577b34da6a3ce929d0e0e4736")
        #expect(id.high == 0x4bf9_2f35_77b3_4da6)
        #expect(id.low == 0xa3ce_929d_0e0e_4736)
        #expect(id.bytes.count == 16)
        #expect(id.bytes.first == 0x4b)
    }

    @Test(arguments: [
        "00000000000000000000000000000000", "4BF92F3577B34DA6A3CE929D0E0E4736", "4bf92f3577b34da6a3ce929d0e0e473",
        "4bf92f3577b34da6a3ce929d0e0e47366", "4bf92f3577b34da6a3ce929d0e0e473g",
    ])
    func invalidHexIsRejected(text: String) {
        #expect(TraceID(hex: text) == nil)
    }

    @Test func allZeroHalvesMakeNoId() {
        #expect(TraceID(high: 0, low: 0) == nil)
        #expect(TraceID(high: 0, low: 1)?.hex == "00000000000000000000000000000001")
    }
}

@Suite struct SpanIDTests {
    @Test func hexRoundTripsThroughTheId() throws {
        let id = try #require(SpanID(hex: "00f067aa0ba902b7"))
        #expect(id.rawValue == 0x00f0_67aa_0ba9_02b7)
        #expect(id.hex == "00f067aa0ba902b7")
        #expect(id.bytes == [0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7])
    }

    @Test func zeroAndMalformedIdsAreRejected() {
        #expect(SpanID(0) == nil)
        #expect(SpanID(hex: "0000000000000000") == nil)
        #expect(SpanID(hex: "00F067AA0BA902B7") == nil)
        #expect(SpanID(hex: "00f067aa0ba902b") == nil)
    }
}

@Suite struct RandomTraceIDGeneratorTests {
    @Test func theSameSeedGivesTheSameIds() {
        let first = RandomTraceIDGenerator(seed: 42)
        let second = RandomTraceIDGenerator(seed: 42)
        #expect((0..<10).map { _ in first.nextSpanID() } == (0..<10).map { _ in second.nextSpanID() })
        #expect(first.nextTraceID() == second.nextTraceID())
    }

    @Test func idsDoNotRepeatAndUseBothHalves() {
        let generator = RandomTraceIDGenerator()
        var spans = Set<SpanID>()
        var traces = Set<TraceID>()
        for _ in 0..<100_000 {
            spans.insert(generator.nextSpanID())
            traces.insert(generator.nextTraceID())
        }
        #expect(spans.count == 100_000)
        #expect(traces.count == 100_000)
        #expect(traces.contains { $0.high != 0 } && traces.contains { $0.low != 0 })
    }

    @Test func threadsDrawingAtOnceNeverShareAnId() {
        let generator = RandomTraceIDGenerator()
        let drawn = Lock<[SpanID]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            let ids = (0..<50_000).map { _ in generator.nextSpanID() }
            drawn.withLock { $0 += ids }
        }
        #expect(Set(drawn.withLock { $0 }).count == 200_000)
    }

    @Test func aSeedThatMixesToZeroStillGivesAValidId() {
        // SplitMix64's output is zero for exactly one counter value; the generator skips it.
        let generator = RandomTraceIDGenerator(seed: 0)
        for _ in 0..<1_000 { #expect(generator.nextSpanID().rawValue != 0) }
    }
}

@Suite struct SequentialTraceIDGeneratorTests {
    @Test func idsCountUpFromOne() {
        let generator = SequentialTraceIDGenerator()
        #expect(generator.nextTraceID().hex == "00000000000000000000000000000001")
        #expect(generator.nextTraceID().hex == "00000000000000000000000000000002")
        #expect(generator.nextSpanID().hex == "0000000000000001")
        #expect(generator.nextSpanID().hex == "0000000000000002")
    }
}

@Suite struct ManualTracingClockTests {
    @Test func theClockStepsOnEveryReadingAndMovesWhenTold() {
        let clock = ManualTracingClock(start: 1_000, step: 10)
        #expect(clock.nanosecondsSinceEpoch() == 1_000)
        #expect(clock.nanosecondsSinceEpoch() == 1_010)
        clock.advance(byNanoseconds: 500)
        #expect(clock.nanosecondsSinceEpoch() == 1_520)
        clock.set(nanosecondsSinceEpoch: 7)
        #expect(clock.nanosecondsSinceEpoch() == 7)
    }

    @Test func theSystemClockReadsWallTime() {
        let now = SystemTracingClock().nanosecondsSinceEpoch()
        // 2024-01-01 and 2100-01-01: a clock read as monotonic or in the wrong unit falls outside.
        #expect(now > 1_704_067_200_000_000_000 && now < 4_102_444_800_000_000_000)
    }
}
