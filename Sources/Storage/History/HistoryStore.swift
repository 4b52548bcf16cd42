public import Foundation
import GRDB
import OrderedJSON

/// The snapshot history: every record `watch` collected, queryable by host and time.
public struct HistoryStore: Sendable {
    let database: StorageDatabase

    /// Rows deleted per transaction by ``prune(olderThan:)``, so that pruning a large backlog
    /// never holds the write lock for long while a `watch` is appending.
    static let pruneChunk = 5_000

    /// Stores `records` in one transaction: all of them or, on failure, none.
    ///
    /// The JSON is serialised before the write lock is taken. A full disk throws
    /// ``StorageError/Code/diskFull``; the database stays usable and the caller may go on.
    public func append(_ rows: [HistoryRow]) async throws(StorageError) {
        guard !rows.isEmpty else { return }
        try await database.write { db in
            let statement = try db.cachedStatement(
                sql: """
                    INSERT INTO snapshot_record
                        (host, collected_at, kind, error_kind, cpu_busy_percent, memory_used_percent, load_1m,
                         disk_max_used_percent, json)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """)
            for row in rows {
                try statement.execute(arguments: [
                    row.host, Self.milliseconds(row.collectedAt), row.kind.rawValue, row.errorKind, row.cpuBusyPercent,
                    row.memoryUsedPercent,
                    row.load1m, row.diskMaxUsedPercent, row.json,
                ])
            }
        }
    }

    /// The records matching `query`, oldest first, read `pageSize` rows at a time.
    ///
    /// Each page is its own short read, so a large history never sits in memory whole and a
    /// concurrent writer is never held up.
    public func records(_ query: HistoryQuery, pageSize: Int = 500) -> PagedRows<StoredRecord, HistoryCursor> {
        let limit = max(1, pageSize)
        return PagedRows { (cursor: HistoryCursor?) async throws(StorageError) in
            let page = try await self.page(query, after: cursor, limit: limit)
            return (page.records, page.next)
        }
    }

    /// Up to `limit` records matching `query` after `cursor` (from the start when `nil`), oldest first.
    public func page(_ query: HistoryQuery, after cursor: HistoryCursor? = nil, limit: Int) async throws(StorageError)
        -> HistoryPage
    {
        guard limit > 0 else {
            throw StorageError(
                code: .invalidArgument, message: "a history page needs a limit of at least 1, not \(limit)",
                path: database.path)
        }
        let records = try await database.read { db in
            var filter = Self.filter(query)
            if let cursor {
                filter.conditions.append("(collected_at > ? OR (collected_at = ? AND id > ?))")
                filter.arguments += [cursor.collectedAtMilliseconds, cursor.collectedAtMilliseconds, cursor.id]
            }
            filter.arguments += [limit]
            let rows = try Row.fetchCursor(
                db,
                sql: """
                    SELECT id, host, collected_at, kind, error_kind, cpu_busy_percent, memory_used_percent, json
                    FROM snapshot_record \(filter.whereClause)
                    ORDER BY collected_at, id
                    LIMIT ?
                    """, arguments: filter.arguments)
            var records: [StoredRecord] = []
            while let row = try rows.next() {
                records.append(
                    StoredRecord(
                        id: row[0], host: row[1], collectedAt: Self.date(milliseconds: row[2]),
                        kind: StoredRecord.Kind(rawValue: row[3]) ?? .snapshot,
                        errorKind: row[4], cpuBusyPercent: row[5],
                        memoryUsedPercent: row[6], json: row[7]))
            }
            return records
        }
        let next = records.count == limit ? records.last.map(Self.cursor(after:)) : nil
        return HistoryPage(records: records, next: next)
    }

    /// How many records match `query`.
    public func count(_ query: HistoryQuery = HistoryQuery()) async throws(StorageError) -> Int {
        try await database.read { db in
            let filter = Self.filter(query)
            return try Int.fetchOne(
                db, sql: "SELECT COUNT(*) FROM snapshot_record \(filter.whereClause)", arguments: filter.arguments) ?? 0
        }
    }

    /// Every host with history: first and last collection time, record and error counts; by name.
    public func hosts() async throws(StorageError) -> [HostSummary] {
        try await database.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT host, MIN(collected_at), MAX(collected_at), COUNT(*), SUM(kind = 'error')
                    FROM snapshot_record GROUP BY host ORDER BY host
                    """
            ).map { row in
                HostSummary(
                    host: row[0], firstCollectedAt: Self.date(milliseconds: row[1]),
                    lastCollectedAt: Self.date(milliseconds: row[2]), recordCount: row[3], errorCount: row[4])
            }
        }
    }

    /// Deletes the records collected before `cutoff` (what `--retain 7d` does) and returns how many.
    ///
    /// Freed pages are reused by later appends, so a rolling retention keeps the file at a
    /// steady size without a `VACUUM`.
    @discardableResult
    public func prune(olderThan cutoff: Date) async throws(StorageError) -> Int {
        let limit = Self.milliseconds(cutoff)
        var total = 0
        while true {
            let deleted = try await database.write { db in
                try db.execute(
                    sql: """
                        DELETE FROM snapshot_record WHERE id IN
                            (SELECT id FROM snapshot_record WHERE collected_at < ? LIMIT ?)
                        """, arguments: [limit, Self.pruneChunk])
                return db.changesCount
            }
            total += deleted
            if deleted < Self.pruneChunk { return total }
        }
    }

    // MARK: - Conversions

    /// To the nearest millisecond, so that a date read back converts to the same number.
    static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded())
    }

    static func date(milliseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }

    private static func cursor(after record: StoredRecord) -> HistoryCursor {
        HistoryCursor(collectedAtMilliseconds: milliseconds(record.collectedAt), id: record.id)
    }

    private struct Filter {
        var conditions: [String] = []
        var arguments = StatementArguments()

        var whereClause: String { conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ") }
    }

    private static func filter(_ query: HistoryQuery) -> Filter {
        var filter = Filter()
        switch query.hosts {
        case .all: break
        case .exact(let hosts):
            // No host at all matches nothing, rather than everything.
            filter.conditions.append(
                hosts.isEmpty
                    ? "0" : "host IN (" + Array(repeating: "?", count: hosts.count).joined(separator: ", ") + ")")
            filter.arguments += StatementArguments(hosts)
        case .pattern(let pattern):
            filter.conditions.append("host GLOB ?")
            filter.arguments += [pattern]
        }
        if let since = query.since {
            filter.conditions.append("collected_at >= ?")
            filter.arguments += [milliseconds(since)]
        }
        if let until = query.until {
            filter.conditions.append("collected_at <= ?")
            filter.arguments += [milliseconds(until)]
        }
        if let step = query.stepMilliseconds {
            // Row ids grow with each append, so the largest id of an interval is the record stored last in it.
            filter.conditions.append(
                "id IN (SELECT MAX(id) FROM snapshot_record \(filter.whereClause) GROUP BY host, collected_at / ?)")
            filter.arguments += filter.arguments
            filter.arguments += [step]
        }
        return filter
    }
}

/// One record as the history stores it: the columns it is queried by and its JSON, computed before the
/// write transaction starts.
public struct HistoryRow: Sendable, Equatable {
    /// The host as `watch` named it.
    public var host: String
    /// Collection time (stored to the millisecond).
    public var collectedAt: Date
    /// Snapshot or error record.
    public var kind: StoredRecord.Kind
    /// The failure's kind for error records.
    public var errorKind: String?
    /// `cpu.busy_percent`, when finite.
    public var cpuBusyPercent: Double?
    /// `memory.used_percent`, when finite.
    public var memoryUsedPercent: Double?
    /// `load.1m`, when finite.
    public var load1m: Double?
    /// The highest `used_percent` of the record's disks, when finite.
    public var diskMaxUsedPercent: Double?
    /// The record's compact `hostscope.snapshot/1` JSON.
    public var json: String

    /// A row; figures that are not finite are stored as NULL (SQLite stores NaN as NULL anyway, and
    /// infinities are not figures worth querying either).
    public init(
        host: String, collectedAt: Date, kind: StoredRecord.Kind, errorKind: String? = nil,
        cpuBusyPercent: Double? = nil, memoryUsedPercent: Double? = nil, load1m: Double? = nil,
        diskMaxUsedPercent: Double? = nil, json: String
    ) {
        self.host = host
        self.collectedAt = collectedAt
        self.kind = kind
        self.errorKind = errorKind
        self.cpuBusyPercent = Self.finite(cpuBusyPercent)
        self.memoryUsedPercent = Self.finite(memoryUsedPercent)
        self.load1m = Self.finite(load1m)
        self.diskMaxUsedPercent = Self.finite(diskMaxUsedPercent)
        self.json = json
    }

    private static func finite(_ value: Double?) -> Double? {
        guard let value, value.isFinite else { return nil }
        return value
    }
}
