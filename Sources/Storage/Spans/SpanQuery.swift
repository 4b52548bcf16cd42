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

    /// The cursor as text for a client to send back (`1795600000123456789.42`).
    public var token: String { "\(startUnixNano).\(id)" }

    /// The cursor a ``token`` stood for; `nil` when the text is not one.
    public init?(token: String) {
        guard let (first, second) = cursorParts(token) else { return nil }
        self.init(startUnixNano: first, id: second)
    }

    init(startUnixNano: Int64, id: Int64) {
        self.startUnixNano = startUnixNano
        self.id = id
    }
}

/// The two integers of a cursor token `A.B`, each at most 19 digits (an optional minus on the first).
func cursorParts(_ token: String) -> (Int64, Int64)? {
    let parts = token.split(separator: ".", omittingEmptySubsequences: false)
    guard parts.count == 2, token.utf8.count <= 41, let first = Int64(parts[0]), let second = Int64(parts[1]),
        second >= 0
    else { return nil }
    return (first, second)
}

/// One page of an export, oldest first.
public struct SpanPage: Sendable, Equatable {
    /// The spans, oldest first.
    public var spans: [StoredSpan]
    /// Where to continue, or `nil` when this was the last page.
    public var next: SpanCursor?

    public init(spans: [StoredSpan], next: SpanCursor?) {
        self.spans = spans
        self.next = next
    }
}

/// Which whole traces an export takes: those holding a span about `host`, of `kind`, whose id starts with
/// `traceIDPrefix`; every trace when all are `nil`.
public struct SpanTraceFilter: Sendable, Equatable {
    public var host: String?
    public var kind: String?
    public var traceIDPrefix: String?

    public init(host: String? = nil, kind: String? = nil, traceIDPrefix: String? = nil) {
        self.host = host
        self.kind = kind
        self.traceIDPrefix = traceIDPrefix
    }
}
