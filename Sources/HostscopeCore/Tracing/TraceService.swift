public import AgentTracing
public import Foundation
public import Storage

/// What `trace list` shows: the newest spans that match, and how many spans never reached the database.
public struct RecentSpans: Sendable {
    /// The spans, newest first.
    public var spans: [StoredSpan]
    /// Spans the ring overwrote before the database could store them, over the database's life.
    public var droppedSpans: Int64
}

/// What `trace list` shows by default: the newest traces that hold a matching span.
public struct RecentTraces: Sendable {
    /// The traces, the latest start first.
    public var traces: [TraceOverview]
    /// Spans the ring overwrote before the database could store them, over the database's life.
    public var droppedSpans: Int64
    /// Stored spans of these traces whose JSON could not be read (left out).
    public var unreadableSpans: Int
}

/// What `trace show` shows: a span within its trace.
public struct SpanInTrace: Sendable {
    /// The span, its ancestors and its descendants.
    public var tree: TraceTree
    /// How many spans of the trace are stored.
    public var traceSize: Int
    /// Stored spans of the trace whose JSON could not be read (left out of the tree).
    public var unreadableSpans: Int
    /// The earliest start and latest end of the trace's stored spans, nanoseconds since the Unix epoch: what
    /// offsets and the waterfall are measured against.
    public var traceStartNanoseconds: UInt64 = 0
    public var traceEndNanoseconds: UInt64 = 0
}

/// A whole trace, for `trace show TRACE_ID`.
public struct WholeTrace: Sendable {
    public var summary: TraceOverview
    /// Its spans as trees under their roots.
    public var forest: [TraceTree.Node]
    /// Stored spans of the trace whose JSON could not be read (left out).
    public var unreadableSpans: Int

    public init(summary: TraceOverview, forest: [TraceTree.Node], unreadableSpans: Int = 0) {
        self.summary = summary
        self.forest = forest
        self.unreadableSpans = unreadableSpans
    }
}

/// What an id given to `trace show` names.
public enum TraceShowTarget: Sendable {
    case trace(WholeTrace)
    case span(SpanInTrace)
}

/// `trace`: the spans hostscope stored, read back.
public struct TraceService: Sendable {
    let access: StoreAccess

    /// Reads the database of `settings`, opened for each call.
    public init(settings: CoreSettings) {
        access = StoreAccess(settings: settings) {
            "no spans yet at \($0): run `hostscope snapshot` or `hostscope watch` first"
        }
    }

    /// Reads an open database (a long-running service's), which the caller closes.
    public init(database: StorageDatabase) {
        access = .shared(database)
    }

    /// The newest spans matching the filters: started since `since`, about `host`, of `kind`, with error
    /// status only, executions of the chat tool `tool`; at most `limit`.
    ///
    /// - Throws: ``CoreError``: `notFound` without a database, `failed` when it cannot be read.
    public func recent(
        since: Date? = nil, host: String? = nil, kind: SpanCategory? = nil, errorsOnly: Bool = false,
        tool: String? = nil, limit: Int
    ) async throws(CoreError) -> RecentSpans {
        let filter = Self.filter(since: since, host: host, kind: kind, errorsOnly: errorsOnly, tool: tool, limit: limit)
        return try await access.with { database throws(CoreError) in
            do {
                let spans = try await database.spans.recent(filter)
                let dropped = try await database.meta.integer(SpanPersister.droppedSpansKey) ?? 0
                return RecentSpans(spans: spans, droppedSpans: dropped)
            } catch {
                throw CoreError(.failed, (error as? StorageError)?.message ?? "\(error)")
            }
        }
    }

    /// The newest traces that hold a span matching the filters (started since `since`, about `host`, of `kind`,
    /// with error status, executions of the chat tool `tool`), at most `limit`, the latest start first.
    ///
    /// - Throws: ``CoreError``: `notFound` without a database, `failed` when it cannot be read.
    public func recentTraces(
        since: Date? = nil, host: String? = nil, kind: SpanCategory? = nil, errorsOnly: Bool = false,
        tool: String? = nil, limit: Int
    ) async throws(CoreError) -> RecentTraces {
        let matching = Self.filter(
            since: since, host: host, kind: kind, errorsOnly: errorsOnly, tool: tool, limit: limit)
        return try await access.with { database throws(CoreError) in
            do {
                let ids = try await database.spans.recentTraceIDs(matching)
                let rows = try await database.spans.traces(ids)
                var traces: [TraceOverview] = []
                var unreadable = 0
                for id in ids {
                    var spans: [FinishedSpan] = []
                    for row in rows[id] ?? [] {
                        if let span = try? row.finishedSpan() { spans.append(span) } else { unreadable += 1 }
                    }
                    if let summary = TraceOverview.summarize(spans) { traces.append(summary) }
                }
                traces.sort { ($0.startNanoseconds, $0.traceID) > ($1.startNanoseconds, $1.traceID) }
                let dropped = try await database.meta.integer(SpanPersister.droppedSpansKey) ?? 0
                return RecentTraces(traces: traces, droppedSpans: dropped, unreadableSpans: unreadable)
            } catch {
                throw CoreError(.failed, (error as? StorageError)?.message ?? "\(error)")
            }
        }
    }

    /// The store's filter for `trace list`'s options: `tool` selects the chat's `execute_tool TOOL` spans.
    private static func filter(
        since: Date?, host: String?, kind: SpanCategory?, errorsOnly: Bool, tool: String?, limit: Int
    ) -> SpanFilter {
        var filter = SpanFilter(since: since, host: host, kind: kind?.rawValue, errorsOnly: errorsOnly, limit: limit)
        if let tool {
            filter.kind = SpanCategory.tool.rawValue
            filter.namePrefix = "execute_tool \(tool)"
        }
        return filter
    }

    /// The trace or the span whose id is `id` or starts with it: a whole trace, or a span within its trace. An
    /// id that is exactly a span's or a trace's wins over prefixes; a prefix must name one span or trace.
    ///
    /// - Throws: ``CoreError``: `notFound` without a database or when nothing has that id; `failed` when the
    ///   prefix names several (the sentence lists some), or the database or a span's JSON cannot be read.
    public func show(_ id: String) async throws(CoreError) -> TraceShowTarget {
        let path = access.path
        let wanted = id.lowercased()
        let matches = try await access.with { database throws(CoreError) in
            do {
                return try await database.spans.ids(matching: wanted)
            } catch {
                throw CoreError(.failed, (error as? StorageError)?.message ?? "\(error)")
            }
        }
        if matches.spans.contains(wanted) { return .span(try await span(wanted)) }
        if matches.traces.contains(wanted) { return .trace(try await trace(wanted)) }
        switch (matches.spans.count, matches.traces.count) {
        case (0, 0):
            throw CoreError(
                .notFound, "no trace or span with id \(id) in \(path); `hostscope trace list` shows trace ids")
        case (1, 0):
            return .span(try await span(matches.spans[0]))
        case (0, 1):
            return .trace(try await trace(matches.traces[0]))
        default:
            let named =
                matches.traces.prefix(3).map { "trace \($0)" } + matches.spans.prefix(3).map { "span \($0)" }
            let more = matches.spans.count + matches.traces.count > named.count ? ", …" : ""
            throw CoreError(
                .failed, "id prefix \(id) matches several (\(named.joined(separator: ", "))\(more)); type more digits")
        }
    }

    /// Every stored span of the trace `traceID`.
    ///
    /// - Throws: ``CoreError``: `notFound` when no span of it is stored, `failed` when the database fails.
    public func trace(_ traceID: String) async throws(CoreError) -> WholeTrace {
        let path = access.path
        return try await access.with { database throws(CoreError) in
            do {
                let rows = try await database.spans.trace(traceID)
                var spans: [FinishedSpan] = []
                var unreadable = 0
                for row in rows {
                    if let span = try? row.finishedSpan() { spans.append(span) } else { unreadable += 1 }
                }
                guard let summary = TraceOverview.summarize(spans) else {
                    if rows.isEmpty {
                        throw CoreError(
                            .notFound, "no trace with id \(traceID) in \(path); `hostscope trace list` shows trace ids")
                    }
                    throw CoreError(.failed, "trace \(traceID) is stored but none of its spans' JSON can be read")
                }
                return WholeTrace(summary: summary, forest: TraceTree.forest(spans), unreadableSpans: unreadable)
            } catch let error as CoreError {
                throw error
            } catch {
                throw CoreError(.failed, (error as? StorageError)?.message ?? "\(error)")
            }
        }
    }

    /// The span whose id is `spanID` or starts with it, within its trace.
    ///
    /// - Throws: ``CoreError``: `notFound` without a database or such a span; `failed` when the span's JSON
    ///   cannot be read or the database fails (an ambiguous prefix says so).
    public func span(_ spanID: String) async throws(CoreError) -> SpanInTrace {
        let path = access.path
        return try await access.with { database throws(CoreError) in
            do {
                guard let stored = try await database.spans.span(id: spanID) else {
                    throw CoreError(.notFound, "no span with id \(spanID) in \(path); `hostscope trace list` shows ids")
                }
                let trace = try await database.spans.trace(stored.traceID)
                var spans: [FinishedSpan] = []
                var unreadable = 0
                for row in trace {
                    if let span = try? row.finishedSpan() { spans.append(span) } else { unreadable += 1 }
                }
                guard let focus = try? stored.finishedSpan(),
                    let tree = TraceTree.build(around: focus.spanID, in: spans)
                else {
                    throw CoreError(.failed, "span \(stored.spanID) is stored but its JSON cannot be read")
                }
                return SpanInTrace(
                    tree: tree, traceSize: trace.count, unreadableSpans: unreadable,
                    traceStartNanoseconds: spans.map(\.startNanoseconds).min() ?? 0,
                    traceEndNanoseconds: spans.map(\.endNanoseconds).max() ?? 0)
            } catch let error as CoreError {
                throw error
            } catch let error as StorageError {
                throw CoreError(.failed, error.message)
            } catch {
                throw CoreError(.failed, "\(error)")
            }
        }
    }
}
