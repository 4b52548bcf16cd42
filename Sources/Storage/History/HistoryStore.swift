import Foundation
import GRDB
import HostStats
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
    public func append(_ records: [SnapshotRecord]) async throws(StorageError) {
        guard !records.isEmpty else { return }
        let rows = records.map(RecordRow.init)
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
                    row.host, row.collectedAt, row.kind, row.errorKind, row.cpuBusyPercent, row.memoryUsedPercent,
                    row.load1m, row.diskMaxUsedPercent, row.json,
                ])
            }
        }
    }

    /// The records matching `query`, oldest first, read `pageSize` rows at a time.
    ///
    /// Each page is its own short read, so a large history never sits in memory whole and a
    /// concurrent writer is never held up.
    public func records(_ query: HistoryQuery, pageSize: Int = 500) -> HistoryRecords {
        HistoryRecords(store: self, query: query, pageSize: max(1, pageSize))
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
                        errorKind: (row[4] as String?).flatMap(FailureKind.init(rawValue:)), cpuBusyPercent: row[5],
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
        return filter
    }
}

/// The column values of one record, computed before the write transaction starts.
private struct RecordRow: Sendable {
    var host: String
    var collectedAt: Int64
    var kind: String
    var errorKind: String?
    var cpuBusyPercent: Double?
    var memoryUsedPercent: Double?
    var load1m: Double?
    var diskMaxUsedPercent: Double?
    var json: String

    init(_ record: SnapshotRecord) {
        host = record.host
        collectedAt = HistoryStore.milliseconds(record.collectedAt)
        json = record.jsonValue.jsonString
        switch record {
        case .snapshot(let snapshot):
            kind = StoredRecord.Kind.snapshot.rawValue
            cpuBusyPercent = Self.finite(snapshot.cpu?.busyPercent)
            memoryUsedPercent = Self.finite(snapshot.memory?.usedPercent)
            load1m = Self.finite(snapshot.load?.one)
            diskMaxUsedPercent = Self.finite(snapshot.disks.compactMap(\.usedPercent).max())
        case .failure(let failure):
            kind = StoredRecord.Kind.error.rawValue
            errorKind = failure.kind.rawValue
        }
    }

    /// SQLite stores NaN as NULL anyway; infinities are not figures worth querying either.
    private static func finite(_ value: Double?) -> Double? {
        guard let value, value.isFinite else { return nil }
        return value
    }
}
