public import Foundation
public import OrderedJSON

/// One snapshot record as stored: its indexed columns and the exact `hostscope.snapshot/1` JSON.
public struct StoredRecord: Sendable, Equatable {
    /// Whether the collection produced a snapshot or an error record.
    public enum Kind: String, Sendable, Equatable {
        case snapshot
        case error
    }

    /// The row id: insertion order.
    public var id: Int64
    /// The host as `watch` named it.
    public var host: String
    /// Collection time, to the millisecond (the precision of the JSON's `collected_at`).
    public var collectedAt: Date
    /// Snapshot or error record.
    public var kind: Kind
    /// The failure's kind for error records (`timeout`, `auth`, `host_key`, `connect`, `command`, `parse`).
    public var errorKind: String?
    /// `cpu.busy_percent` of a snapshot, also a column for SQL of one's own.
    public var cpuBusyPercent: Double?
    /// `memory.used_percent` of a snapshot, also a column for SQL of one's own.
    public var memoryUsedPercent: Double?
    /// The record's JSON object, compact, as `watch` produced it.
    public var json: String

    /// A stored record as read from the database.
    public init(
        id: Int64, host: String, collectedAt: Date, kind: Kind, errorKind: String?, cpuBusyPercent: Double?,
        memoryUsedPercent: Double?, json: String
    ) {
        self.id = id
        self.host = host
        self.collectedAt = collectedAt
        self.kind = kind
        self.errorKind = errorKind
        self.cpuBusyPercent = cpuBusyPercent
        self.memoryUsedPercent = memoryUsedPercent
        self.json = json
    }

    /// The JSON as a value.
    public func jsonValue() throws(JSONParseError) -> JSONValue {
        try JSONParser.parse(json)
    }
}

/// One host's span of history.
public struct HostSummary: Sendable, Equatable {
    /// The host as `watch` named it.
    public var host: String
    /// Its oldest record's collection time.
    public var firstCollectedAt: Date
    /// Its newest record's collection time.
    public var lastCollectedAt: Date
    /// Its records, error records included.
    public var recordCount: Int
    /// How many of the records are error records.
    public var errorCount: Int

    /// A summary of one host's history.
    public init(host: String, firstCollectedAt: Date, lastCollectedAt: Date, recordCount: Int, errorCount: Int) {
        self.host = host
        self.firstCollectedAt = firstCollectedAt
        self.lastCollectedAt = lastCollectedAt
        self.recordCount = recordCount
        self.errorCount = errorCount
    }
}
