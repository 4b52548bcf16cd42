public import Foundation

/// Which spans `trace list` shows: the newest first, narrowed by any of these.
public struct SpanFilter: Sendable, Equatable {
    /// Spans that started at or after this moment.
    public var since: Date?
    /// Spans about this host.
    public var host: String?
    /// Spans whose name starts with this text (`exec`, or a tool's name).
    public var namePrefix: String?
    /// Spans of this kind (`ssh`, `sftp`, `http`, `chat`, `tool` …).
    public var kind: String?
    /// Only spans whose status is error.
    public var errorsOnly: Bool
    /// At most this many spans.
    public var limit: Int

    /// A filter; by default the 100 newest spans of any kind.
    public init(
        since: Date? = nil, host: String? = nil, namePrefix: String? = nil, kind: String? = nil,
        errorsOnly: Bool = false, limit: Int = 100
    ) {
        self.since = since
        self.host = host
        self.namePrefix = namePrefix
        self.kind = kind
        self.errorsOnly = errorsOnly
        self.limit = limit
    }
}

/// Where a page of exported spans ended, keyed by (start time, row id) like history pages.
public struct SpanCursor: Sendable, Hashable {
    let startUnixNano: Int64
    let id: Int64
}

/// One page of an export, oldest first.
public struct SpanPage: Sendable, Equatable {
    /// The spans, oldest first.
    public var spans: [StoredSpan]
    /// Where to continue, or `nil` when this was the last page.
    public var next: SpanCursor?
}
