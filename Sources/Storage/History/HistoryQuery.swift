public import Foundation

/// Which hosts a history query covers.
public enum HostFilter: Sendable, Equatable {
    /// Every host in the database.
    case all
    /// These hosts, by the exact name `watch` stored.
    case exact([String])
    /// Hosts matching a glob (`*`, `?`, `[a-z]`), as in `db-*`; case-sensitive, like SQLite's `GLOB`.
    case pattern(String)

    /// `all` (or nothing) for every host, a glob for a pattern, else one exact host.
    public init(argument: String?) {
        guard let argument, !argument.isEmpty, argument != "all" else {
            self = .all
            return
        }
        self = argument.contains(where: { "*?[".contains($0) }) ? .pattern(argument) : .exact([argument])
    }
}

/// Snapshot records of some hosts over a time range, oldest first.
public struct HistoryQuery: Sendable, Equatable {
    /// The hosts covered.
    public var hosts: HostFilter
    /// Records collected at or after this moment.
    public var since: Date?
    /// Records collected at or before this moment.
    public var until: Date?
    /// When set, one record per host and interval of this many milliseconds (counted from the epoch): the
    /// last one stored in it. A long range then reads as a chart needs it, not every tick.
    public var stepMilliseconds: Int64?

    /// A query; by default every host over the whole history, every record.
    public init(hosts: HostFilter = .all, since: Date? = nil, until: Date? = nil, stepMilliseconds: Int64? = nil) {
        self.hosts = hosts
        self.since = since
        self.until = until
        self.stepMilliseconds = stepMilliseconds.map { max(1, $0) }
    }
}

/// Where a page of history ended, to fetch the next one after it.
///
/// Pages are keyed by (collection time, row id) rather than by offset, so each page costs the
/// same however deep into a large history it is, and rows appended meanwhile are not repeated.
public struct HistoryCursor: Sendable, Hashable {
    let collectedAtMilliseconds: Int64
    let id: Int64

    /// The cursor as text for a client to send back (`1795600000123.42`).
    public var token: String { "\(collectedAtMilliseconds).\(id)" }

    /// The cursor a ``token`` stood for; `nil` when the text is not one.
    public init?(token: String) {
        guard let (first, second) = cursorParts(token) else { return nil }
        self.init(collectedAtMilliseconds: first, id: second)
    }

    init(collectedAtMilliseconds: Int64, id: Int64) {
        self.collectedAtMilliseconds = collectedAtMilliseconds
        self.id = id
    }
}

/// One page of a history query.
public struct HistoryPage: Sendable, Equatable {
    /// The records, oldest first.
    public var records: [StoredRecord]
    /// Where to continue, or `nil` when this was the last page.
    public var next: HistoryCursor?
}
