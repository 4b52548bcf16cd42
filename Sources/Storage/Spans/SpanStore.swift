public import Foundation
import GRDB

/// Finished spans, so that `trace` commands in one process see what a `watch` in another recorded.
public struct SpanStore: Sendable {
    let database: StorageDatabase

    static let pruneChunk = 5_000

    private static let columns = """
        id, trace_id, span_id, parent_span_id, name, kind, start_unix_nano, end_unix_nano, status_code, host, \
        service, json
        """

    /// Stores `spans` in one transaction and adds `counters` (such as dropped spans) to the
    /// meta table in the same one. Returns how many spans were new: a span id already stored
    /// (a batch retried after a failure) is kept as it was.
    @discardableResult
    public func insert(_ spans: [StoredSpan], incrementing counters: [String: Int64] = [:]) async throws(StorageError)
        -> Int
    {
        guard !spans.isEmpty || !counters.isEmpty else { return 0 }
        var rows: [StoredSpan] = []
        rows.reserveCapacity(spans.count)
        for span in spans {
            var row = span
            row.traceID = span.traceID.lowercased()
            row.spanID = span.spanID.lowercased()
            row.parentSpanID = span.parentSpanID.flatMap { $0.isEmpty ? nil : $0.lowercased() }
            guard !row.spanID.isEmpty, !row.traceID.isEmpty else {
                throw StorageError(
                    code: .invalidArgument, message: "a span needs a trace id and a span id (span \"\(span.name)\")",
                    path: database.path)
            }
            rows.append(row)
        }
        let prepared = rows
        return try await database.write { db in
            let statement = try db.cachedStatement(
                sql: """
                    INSERT OR IGNORE INTO span
                        (trace_id, span_id, parent_span_id, name, kind, start_unix_nano, end_unix_nano, status_code,
                         host, service, json, otlp_span, otlp_resource, export_request)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """)
            var inserted = 0
            for row in prepared {
                try statement.execute(arguments: [
                    row.traceID, row.spanID, row.parentSpanID, row.name, row.kind, row.startUnixNano,
                    row.endUnixNano, row.statusCode.rawValue, row.host, row.service, row.json,
                    row.protobuf.map { Data($0.span) }, row.protobuf.map { Data($0.resource) }, row.isExportRequest,
                ])
                inserted += db.changesCount
            }
            for (key, amount) in counters.sorted(by: { $0.key < $1.key }) {
                try MetaStore.increment(db, key: key, by: amount)
            }
            return inserted
        }
    }

    /// The newest spans first (by start time), narrowed by `filter`.
    public func recent(_ filter: SpanFilter = SpanFilter()) async throws(StorageError) -> [StoredSpan] {
        guard filter.limit > 0 else { return [] }
        return try await recentPage(filter).spans
    }

    /// Up to `filter.limit` spans narrowed by `filter` that started at or before `until`, newest first,
    /// continuing after `cursor` (a page of a listing that goes back in time).
    public func recentPage(_ filter: SpanFilter, until: Date? = nil, after cursor: SpanCursor? = nil)
        async throws(StorageError) -> SpanPage
    {
        try checkPageLimit(filter.limit)
        let fetched = try await database.read { db in
            var conditions: [String] = []
            var arguments = StatementArguments()
            if let since = filter.since {
                conditions.append("start_unix_nano >= ?")
                arguments += [Self.nanoseconds(since)]
            }
            if let until {
                conditions.append("start_unix_nano <= ?")
                arguments += [Self.nanoseconds(until)]
            }
            if let host = filter.host {
                conditions.append("host = ?")
                arguments += [host]
            }
            if let prefix = filter.namePrefix, !prefix.isEmpty {
                // substr compares bytes exactly, unlike LIKE (case-folding) or GLOB (wildcards).
                conditions.append("substr(name, 1, length(?)) = ?")
                arguments += [prefix, prefix]
            }
            if let kind = filter.kind {
                conditions.append("kind = ?")
                arguments += [kind]
            }
            if filter.errorsOnly {
                conditions.append("status_code = ?")
                arguments += [SpanStatusCode.error.rawValue]
            }
            if let cursor {
                // A row value, which SQLite seeks to in the span_start index (whose entries end with the rowid);
                // the equivalent OR of two conditions makes it walk the index from the start for every page.
                conditions.append("(start_unix_nano, id) < (?, ?)")
                arguments += [cursor.startUnixNano, cursor.id]
            }
            arguments += [filter.limit]
            let whereClause = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
            return try Self.fetch(
                db,
                sql: "SELECT \(Self.columns) FROM span \(whereClause) ORDER BY start_unix_nano DESC, id DESC LIMIT ?",
                arguments: arguments)
        }
        let next =
            fetched.count == filter.limit
            ? fetched.last.map { SpanCursor(startUnixNano: $0.span.startUnixNano, id: $0.id) } : nil
        return SpanPage(spans: fetched.map(\.span), next: next)
    }

    /// The ids of the traces whose spans match `filter`, the trace with the newest such span first; at most
    /// `filter.limit` traces. Spans are read newest first a page at a time until enough traces are found, so a
    /// long history is never read whole.
    public func recentTraceIDs(_ filter: SpanFilter) async throws(StorageError) -> [String] {
        guard filter.limit > 0 else { return [] }
        var page = filter
        // A trace holds a handful of spans to a few hundred: read several per trace wanted.
        page.limit = min(10_000, max(500, filter.limit * 20))
        var found: [String] = []
        var seen: Set<String> = []
        var cursor: SpanCursor?
        repeat {
            let next = try await recentPage(page, after: cursor)
            for span in next.spans where seen.insert(span.traceID).inserted {
                found.append(span.traceID)
                if found.count == filter.limit { return found }
            }
            cursor = next.next
        } while cursor != nil
        return found
    }

    /// Every stored span of each trace in `traceIDs`, by start time.
    public func traces(_ traceIDs: [String]) async throws(StorageError) -> [String: [StoredSpan]] {
        var result: [String: [StoredSpan]] = [:]
        // SQLite takes at most 32,766 parameters; a listing asks for far fewer traces at a time.
        for chunk in stride(from: 0, to: traceIDs.count, by: 500).map({ traceIDs[$0..<min($0 + 500, traceIDs.count)] })
        {
            let ids = chunk.map { $0.lowercased() }
            let rows = try await database.read { db in
                try Self.fetch(
                    db,
                    sql: """
                        SELECT \(Self.columns) FROM span WHERE trace_id IN (\(ids.map { _ in "?" }.joined(separator: ",")))
                        ORDER BY start_unix_nano, id
                        """,
                    arguments: StatementArguments(ids)
                ).map(\.span)
            }
            for row in rows { result[row.traceID, default: []].append(row) }
        }
        return result
    }

    /// The ids of stored spans and of stored traces that are `idOrPrefix` or start with it, at most `limit` of
    /// each, in id order: what `trace show` looks an id up by.
    public func ids(matching idOrPrefix: String, limit: Int = 6) async throws(StorageError) -> (
        spans: [String], traces: [String]
    ) {
        let prefix = idOrPrefix.lowercased()
        guard !prefix.isEmpty, prefix.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }) else {
            throw StorageError(
                code: .invalidArgument,
                message: "\"\(idOrPrefix)\" is not a trace or span id: expected hexadecimal digits", path: database.path
            )
        }
        // Hex digits sort below "g", so [prefix, prefix + "g") is exactly the ids starting with it.
        return try await database.read { db in
            let spans = try String.fetchAll(
                db, sql: "SELECT span_id FROM span WHERE span_id >= ? AND span_id < ? ORDER BY span_id LIMIT ?",
                arguments: [prefix, prefix + "g", limit])
            let traces = try String.fetchAll(
                db,
                sql: """
                    SELECT DISTINCT trace_id FROM span WHERE trace_id >= ? AND trace_id < ? ORDER BY trace_id LIMIT ?
                    """,
                arguments: [prefix, prefix + "g", limit])
            return (spans, traces)
        }
    }

    /// Every stored span of a trace, by start time.
    public func trace(_ traceID: String) async throws(StorageError) -> [StoredSpan] {
        let id = traceID.lowercased()
        return try await database.read { db in
            try Self.fetch(
                db, sql: "SELECT \(Self.columns) FROM span WHERE trace_id = ? ORDER BY start_unix_nano, id",
                arguments: [id]
            ).map(\.span)
        }
    }

    /// The span whose id is `idOrPrefix` or starts with it; `nil` when none does.
    ///
    /// A prefix that matches several spans throws ``StorageError/Code/ambiguousPrefix`` naming
    /// some of them, so that a person can type a few more digits.
    public func span(id idOrPrefix: String) async throws(StorageError) -> StoredSpan? {
        let prefix = idOrPrefix.lowercased()
        guard !prefix.isEmpty, prefix.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }) else {
            throw StorageError(
                code: .invalidArgument, message: "\"\(idOrPrefix)\" is not a span id: expected hexadecimal digits",
                path: database.path)
        }
        // Hex digits sort below "g", so [prefix, prefix + "g") is exactly the ids starting with it.
        let matches = try await database.read { db in
            try Self.fetch(
                db, sql: "SELECT \(Self.columns) FROM span WHERE span_id >= ? AND span_id < ? ORDER BY span_id LIMIT 6",
                arguments: [prefix, prefix + "g"]
            ).map(\.span)
        }
        if let exact = matches.first(where: { $0.spanID == prefix }) { return exact }
        guard matches.count <= 1 else {
            let shown = matches.prefix(5).map(\.spanID).joined(separator: ", ")
            throw StorageError(
                code: .ambiguousPrefix,
                message:
                    "span id prefix \(idOrPrefix) matches several spans (\(shown)\(matches.count > 5 ? ", …" : "")); "
                    + "type more digits", path: database.path)
        }
        return matches.first
    }

    /// Up to `limit` spans that started in [`since`, `until`], oldest first, after `cursor`.
    public func page(
        since: Date? = nil, until: Date? = nil, traces: SpanTraceFilter = SpanTraceFilter(),
        after cursor: SpanCursor? = nil, limit: Int
    ) async throws(StorageError) -> SpanPage {
        try checkPageLimit(limit)
        let fetched = try await database.read { db in
            var (conditions, arguments) = Self.rangeConditions(since: since, until: until, after: cursor)
            // Whole traces: those holding a span about the host, of the kind.
            var inner: [String] = []
            if let host = traces.host {
                inner.append("host = ?")
                arguments += [host]
            }
            if let kind = traces.kind {
                inner.append("kind = ?")
                arguments += [kind]
            }
            if !inner.isEmpty {
                conditions.append("trace_id IN (SELECT trace_id FROM span WHERE \(inner.joined(separator: " AND ")))")
            }
            if let prefix = traces.traceIDPrefix?.lowercased(), !prefix.isEmpty {
                conditions.append("substr(trace_id, 1, length(?)) = ?")
                arguments += [prefix, prefix]
            }
            arguments += [limit]
            let whereClause = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
            return try Self.fetch(
                db, sql: "SELECT \(Self.columns) FROM span \(whereClause) ORDER BY start_unix_nano, id LIMIT ?",
                arguments: arguments)
        }
        let next =
            fetched.count == limit
            ? fetched.last.map { SpanCursor(startUnixNano: $0.span.startUnixNano, id: $0.id) } : nil
        return SpanPage(spans: fetched.map(\.span), next: next)
    }

    /// The spans that started in [`since`, `until`], of the traces `traces` selects, oldest first, read `pageSize`
    /// at a time (for export).
    public func spans(
        since: Date? = nil, until: Date? = nil, traces: SpanTraceFilter = SpanTraceFilter(), pageSize: Int = 1_000
    ) -> PagedRows<StoredSpan, SpanCursor> {
        let limit = max(1, pageSize)
        return PagedRows { (cursor: SpanCursor?) async throws(StorageError) in
            let page = try await self.page(since: since, until: until, traces: traces, after: cursor, limit: limit)
            return (page.spans, page.next)
        }
    }

    /// How many spans are stored.
    public func count() async throws(StorageError) -> Int {
        try await database.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM span") ?? 0 }
    }

    /// Deletes the spans that started before `cutoff` and returns how many.
    @discardableResult
    public func prune(olderThan cutoff: Date) async throws(StorageError) -> Int {
        let limit = Self.nanoseconds(cutoff)
        var total = 0
        while true {
            let deleted = try await database.write { db in
                try db.execute(
                    sql: "DELETE FROM span WHERE id IN (SELECT id FROM span WHERE start_unix_nano < ? LIMIT ?)",
                    arguments: [limit, Self.pruneChunk])
                return db.changesCount
            }
            total += deleted
            if deleted < Self.pruneChunk { return total }
        }
    }

    /// Refuses a page limit below 1.
    func checkPageLimit(_ limit: Int) throws(StorageError) {
        guard limit > 0 else {
            throw StorageError(
                code: .invalidArgument, message: "a span page needs a limit of at least 1, not \(limit)",
                path: database.path)
        }
    }

    /// The conditions (and their arguments) of spans that started in [`since`, `until`] after `cursor`, in the
    /// order `ORDER BY start_unix_nano, id` walks.
    static func rangeConditions(since: Date?, until: Date?, after cursor: SpanCursor?) -> (
        conditions: [String], arguments: StatementArguments
    ) {
        var conditions: [String] = []
        var arguments = StatementArguments()
        if let since {
            conditions.append("start_unix_nano >= ?")
            arguments += [nanoseconds(since)]
        }
        if let until {
            conditions.append("start_unix_nano <= ?")
            arguments += [nanoseconds(until)]
        }
        if let cursor {
            // A row value: see recentPage.
            conditions.append("(start_unix_nano, id) > (?, ?)")
            arguments += [cursor.startUnixNano, cursor.id]
        }
        return (conditions, arguments)
    }

    // MARK: - Rows

    /// A `Date` holds a `Double`, good to about a microsecond today: rounding to whole
    /// microseconds means a date built from whole microseconds converts back to exactly that instant.
    static func nanoseconds(_ date: Date) -> Int64 {
        let microseconds = (date.timeIntervalSince1970 * 1e6).rounded()
        guard microseconds < 9.2e15 else { return .max }
        guard microseconds > -9.2e15 else { return .min }
        return Int64(microseconds) * 1000
    }

    private struct FetchedSpan: Sendable {
        var id: Int64
        var span: StoredSpan
    }

    private static func fetch(_ db: Database, sql: String, arguments: StatementArguments) throws -> [FetchedSpan] {
        let rows = try Row.fetchCursor(db, sql: sql, arguments: arguments)
        var spans: [FetchedSpan] = []
        while let row = try rows.next() {
            let status: Int = row[8]
            spans.append(
                FetchedSpan(
                    id: row[0],
                    span: StoredSpan(
                        traceID: row[1], spanID: row[2], parentSpanID: row[3], name: row[4], kind: row[5],
                        startUnixNano: row[6], endUnixNano: row[7],
                        statusCode: SpanStatusCode(rawValue: status) ?? .unset,
                        host: row[9], service: row[10], json: row[11])))
        }
        return spans
    }
}
