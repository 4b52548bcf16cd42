/// One span in the context of its trace, for `hostscope trace show SPAN_ID`: the chain of its
/// ancestors and the tree of its descendants.
///
/// Built by a pure function of a set of spans; spans of other traces are ignored. Children are
/// ordered by start time (then span id, so equal starts print in a stable order).
public struct TraceTree: Sendable, Equatable {
    /// A span and the spans started under it.
    public struct Node: Sendable, Equatable {
        public var span: FinishedSpan
        public var children: [Node]

        public init(span: FinishedSpan, children: [Node] = []) {
            self.span = span
            self.children = children
        }
    }

    /// One printable row of the tree.
    public struct Line: Sendable, Equatable {
        /// Indentation level: 0 for the oldest ancestor shown.
        public var depth: Int
        public var span: FinishedSpan
        /// Whether this is the span that was asked for.
        public var isFocus: Bool
    }

    /// Ancestors from the outermost known one down to the parent; empty for a root span.
    public var ancestors: [FinishedSpan]
    /// The span asked for, with its descendants.
    public var focus: Node
    /// The id of the ancestor the chain stops at because it is not in the set (evicted from the ring,
    /// or recorded by another process), `nil` when the chain reaches a root.
    public var missingAncestorID: SpanID?

    /// The tree around `spanID`, or `nil` when no span in `spans` has that id.
    public static func build(around spanID: SpanID, in spans: some Sequence<FinishedSpan>) -> TraceTree? {
        var candidates: [FinishedSpan] = []
        var target: FinishedSpan?
        for span in spans {
            candidates.append(span)
            if span.spanID == spanID { target = span }
        }
        guard let target else { return nil }
        let trace = candidates.filter { $0.traceID == target.traceID }
        var byID: [SpanID: FinishedSpan] = [:]
        var childrenByParent: [SpanID: [FinishedSpan]] = [:]
        for span in trace where byID[span.spanID] == nil {
            byID[span.spanID] = span
            if let parent = span.parentSpanID { childrenByParent[parent, default: []].append(span) }
        }

        var ancestors: [FinishedSpan] = []
        var missing: SpanID?
        var visited: Set<SpanID> = [target.spanID]
        var next = target.parentSpanID
        while let parentID = next {
            // A cycle can only come from corrupt input; stop rather than loop.
            guard visited.insert(parentID).inserted else { break }
            guard let parent = byID[parentID] else {
                missing = parentID
                break
            }
            ancestors.append(parent)
            next = parent.parentSpanID
        }
        ancestors.reverse()

        func node(for span: FinishedSpan, seen: inout Set<SpanID>) -> Node {
            let children = (childrenByParent[span.spanID] ?? [])
                .filter { !seen.contains($0.spanID) }
                .sorted { ($0.startNanoseconds, $0.spanID) < ($1.startNanoseconds, $1.spanID) }
            var result = Node(span: span)
            for child in children where seen.insert(child.spanID).inserted {
                result.children.append(node(for: child, seen: &seen))
            }
            return result
        }
        var seen = visited.union(ancestors.map(\.spanID))
        seen.insert(target.spanID)
        return TraceTree(ancestors: ancestors, focus: node(for: target, seen: &seen), missingAncestorID: missing)
    }

    /// Every span of the trace of `spans[0]` as trees under its roots (the spans whose parent is not among
    /// them), roots and children by start time: the whole trace, for `trace show TRACE_ID`. Spans of other
    /// traces are ignored.
    public static func forest(_ spans: [FinishedSpan]) -> [Node] {
        guard let first = spans.first else { return [] }
        var byID: [SpanID: FinishedSpan] = [:]
        for span in spans where span.traceID == first.traceID && byID[span.spanID] == nil { byID[span.spanID] = span }
        let ordered = byID.values.sorted { ($0.startNanoseconds, $0.spanID) < ($1.startNanoseconds, $1.spanID) }
        var childrenByParent: [SpanID: [FinishedSpan]] = [:]
        var roots: [FinishedSpan] = []
        for span in ordered {
            if let parent = span.parentSpanID, byID[parent] != nil, parent != span.spanID {
                childrenByParent[parent, default: []].append(span)
            } else {
                roots.append(span)
            }
        }
        var seen: Set<SpanID> = []
        func node(for span: FinishedSpan) -> Node {
            var result = Node(span: span)
            for child in childrenByParent[span.spanID] ?? [] where seen.insert(child.spanID).inserted {
                result.children.append(node(for: child))
            }
            return result
        }
        var forest: [Node] = []
        for root in roots where seen.insert(root.spanID).inserted { forest.append(node(for: root)) }
        // Spans on a cycle of parents (corrupt input only) have no root: each becomes one.
        for span in ordered where seen.insert(span.spanID).inserted { forest.append(node(for: span)) }
        return forest
    }

    /// The rows of `forest`, depth-first.
    public static func lines(of forest: [Node]) -> [Line] {
        var result: [Line] = []
        func visit(_ node: Node, depth: Int) {
            result.append(Line(depth: depth, span: node.span, isFocus: false))
            for child in node.children { visit(child, depth: depth + 1) }
        }
        for root in forest { visit(root, depth: 0) }
        return result
    }

    /// The tree as rows, depth-first, ancestors first: what `trace show` indents and prints.
    public var lines: [Line] {
        var result = ancestors.enumerated().map { Line(depth: $0.offset, span: $0.element, isFocus: false) }
        func visit(_ node: Node, depth: Int, isFocus: Bool) {
            result.append(Line(depth: depth, span: node.span, isFocus: isFocus))
            for child in node.children { visit(child, depth: depth + 1, isFocus: false) }
        }
        visit(focus, depth: ancestors.count, isFocus: true)
        return result
    }
}
