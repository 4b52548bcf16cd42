import AgentTracing
import Testing

@Suite struct TraceTreeTests {
    static func span(_ id: UInt64, parent: UInt64?, start: UInt64, trace: UInt64 = 1) -> FinishedSpan {
        FinishedSpan(
            traceID: TraceID(high: 0, low: trace)!, spanID: SpanID(id)!, parentSpanID: parent.flatMap { SpanID($0) },
            name: "span \(id)", startNanoseconds: start, endNanoseconds: start + 10, resource: SampleTraces.resource)
    }

    /// 1 ─ 2 ─ 3 ─ (5, 4 by start) ; 3 ─ 4 ─ 6 ; 2 ─ 7 ; another trace reuses id 8 under 3.
    static let spans = [
        span(1, parent: nil, start: 0), span(2, parent: 1, start: 1), span(3, parent: 2, start: 2),
        span(4, parent: 3, start: 5), span(5, parent: 3, start: 3), span(6, parent: 4, start: 6),
        span(7, parent: 2, start: 7), span(8, parent: 3, start: 4, trace: 2),
    ]

    @Test func theTreeShowsAncestorsAndDescendantsByStartTime() throws {
        let tree = try #require(TraceTree.build(around: SpanID(3)!, in: Self.spans))
        #expect(tree.ancestors.map(\.spanID.rawValue) == [1, 2])
        #expect(tree.focus.span.spanID.rawValue == 3)
        #expect(tree.focus.children.map(\.span.spanID.rawValue) == [5, 4])
        #expect(tree.focus.children[1].children.map(\.span.spanID.rawValue) == [6])
        #expect(tree.missingAncestorID == nil)
        #expect(
            tree.lines.map { "\($0.depth):\($0.span.spanID.rawValue)\($0.isFocus ? "*" : "")" } == [
                "0:1", "1:2", "2:3*", "3:5", "3:4", "4:6",
            ])
    }

    @Test func aChainThatLeavesTheSetNamesTheMissingAncestor() throws {
        let tree = try #require(TraceTree.build(around: SpanID(4)!, in: Self.spans.filter { $0.spanID.rawValue != 2 }))
        #expect(tree.ancestors.map(\.spanID.rawValue) == [3])
        #expect(tree.missingAncestorID == SpanID(2))
    }

    @Test func anUnknownSpanHasNoTree() {
        #expect(TraceTree.build(around: SpanID(99)!, in: Self.spans) == nil)
    }

    @Test func aCycleInCorruptInputEndsTheWalk() throws {
        let cyclic = [Self.span(1, parent: 2, start: 0), Self.span(2, parent: 1, start: 1)]
        let tree = try #require(TraceTree.build(around: SpanID(1)!, in: cyclic))
        #expect(tree.ancestors.map(\.spanID.rawValue) == [2])
        #expect(tree.focus.children.isEmpty)
    }

    @Test func aWholeTraceIsAForestUnderTheSpansWhoseParentIsMissing() {
        // Span 2 is not stored: its children 3 and 7 become roots beside 1, by start time; trace 2's span is
        // left out.
        let forest = TraceTree.forest(Self.spans.filter { $0.spanID.rawValue != 2 })
        #expect(forest.map(\.span.spanID.rawValue) == [1, 3, 7])
        #expect(
            TraceTree.lines(of: forest).map { "\($0.depth):\($0.span.spanID.rawValue)" } == [
                "0:1", "0:3", "1:5", "1:4", "2:6", "0:7",
            ])
        #expect(TraceTree.forest([]).isEmpty)
        let cyclic = [Self.span(1, parent: 2, start: 0), Self.span(2, parent: 1, start: 1)]
        #expect(TraceTree.lines(of: TraceTree.forest(cyclic)).count == 2, "a cycle still shows each span once")
    }

    @Test func aSummaryNamesTheRootTheExtentAndTheErrorThatExplainsIt() throws {
        var spans = Self.spans
        spans[3].status = FinishedSpan.Status(code: .error, message: "exit status 2")
        spans[5].status = FinishedSpan.Status(code: .error, message: "later")
        spans[6].endNanoseconds = 99
        let summary = try #require(TraceOverview.summarize(spans))
        #expect(summary.root.spanID.rawValue == 1)
        #expect(!summary.rootIsPartial)
        #expect(summary.spanCount == 7, "the other trace's span is not counted")
        #expect(summary.startNanoseconds == 0 && summary.endNanoseconds == 99)
        #expect(summary.errorCount == 2)
        #expect(summary.error?.spanID.rawValue == 4, "the earliest failed span when the root did not fail")
        spans[0].status = FinishedSpan.Status(code: .error, message: "root failed")
        #expect(TraceOverview.summarize(spans)?.error?.spanID.rawValue == 1)

        let partial = try #require(TraceOverview.summarize(Self.spans.filter { $0.spanID.rawValue > 2 }))
        #expect(partial.root.spanID.rawValue == 3)
        #expect(partial.rootIsPartial)
        #expect(TraceOverview.summarize([]) == nil)
    }
}
