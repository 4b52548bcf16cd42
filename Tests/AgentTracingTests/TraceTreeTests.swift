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
}
