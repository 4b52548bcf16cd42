public import HostStats
import OrderedJSON
public import Storage

extension HistoryRow {
    /// The row of a snapshot or error record: its JSON exactly as written to files, and the figures the
    /// history is queried by.
    public init(_ record: SnapshotRecord) {
        switch record {
        case .snapshot(let snapshot):
            self.init(
                host: record.host, collectedAt: record.collectedAt, kind: .snapshot,
                cpuBusyPercent: snapshot.cpu?.busyPercent, memoryUsedPercent: snapshot.memory?.usedPercent,
                load1m: snapshot.load?.one, diskMaxUsedPercent: snapshot.fullestDiskUsedPercent,
                json: record.jsonValue.jsonString)
        case .failure(let failure):
            self.init(
                host: record.host, collectedAt: record.collectedAt, kind: .error, errorKind: failure.kind.rawValue,
                json: record.jsonValue.jsonString)
        }
    }
}

extension HistoryStore {
    /// Stores `records` in one transaction: all of them or, on failure, none.
    public func append(_ records: [SnapshotRecord]) async throws(StorageError) {
        try await append(records.map(HistoryRow.init))
    }
}

extension StoredRecord {
    /// The record decoded back into the model (for CSV and tables).
    public func record() throws -> SnapshotRecord {
        try SnapshotRecord(json: try jsonValue())
    }
}
