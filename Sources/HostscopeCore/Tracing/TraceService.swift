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

/// What `trace show` shows: a span within its trace.
public struct SpanInTrace: Sendable {
    /// The span, its ancestors and its descendants.
    public var tree: TraceTree
    /// How many spans of the trace are stored.
    public var traceSize: Int
    /// Stored spans of the trace whose JSON could not be read (left out of the tree).
    public var unreadableSpans: Int
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
        var filter = SpanFilter(since: since, host: host, kind: kind?.rawValue, errorsOnly: errorsOnly, limit: limit)
        if let tool {
            filter.kind = SpanCategory.tool.rawValue
            filter.namePrefix = "execute_tool \(tool)"
        }
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
                return SpanInTrace(tree: tree, traceSize: trace.count, unreadableSpans: unreadable)
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
