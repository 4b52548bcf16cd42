/// A span's status, with OTLP's numbering (`STATUS_CODE_UNSET` 0, `OK` 1, `ERROR` 2).
public enum SpanStatusCode: Int, Sendable, Equatable, CaseIterable {
    case unset = 0
    case ok = 1
    case error = 2
}

/// One finished span as stored: the columns that queries filter on, and the span's flat JSON.
///
/// The tracing module owns the span model; this type takes its values plainly so that storage
/// does not depend on it. Ids are lower-case hex (W3C: 32 digits for a trace, 16 for a span).
public struct StoredSpan: Sendable, Equatable {
    /// 32 hex digits.
    public var traceID: String
    /// 16 hex digits; unique in the table.
    public var spanID: String
    /// `nil` for a root span.
    public var parentSpanID: String?
    /// The operation, such as `exec` or `POST`.
    public var name: String
    /// hostscope's category of the span: `ssh`, `sftp`, `http`, `chat`, `tool`, `snapshot` …
    public var kind: String
    /// Start, in nanoseconds since the Unix epoch.
    public var startUnixNano: Int64
    /// End, in nanoseconds since the Unix epoch.
    public var endUnixNano: Int64
    /// Unset, ok or error.
    public var statusCode: SpanStatusCode
    /// The host the span concerns (`host.name`), when it concerns one.
    public var host: String?
    /// `service.name` of the process that recorded it.
    public var service: String?
    /// The flat span JSON (`--format spans`), stored as given.
    public var json: String
    /// The span's OTLP protobuf encoding, when it was stored with one: the fields of its `Span` message and of
    /// its `Resource` message, which `trace push` sends as they are. Spans stored by a hostscope before these
    /// were kept have none, and reads other than a push leave them out.
    public var protobuf: Protobuf?
    /// Whether the span is one of hostscope's own OTLP export requests, which a push leaves out. Known for
    /// spans stored with ``protobuf``; older spans say so in their JSON.
    public var isExportRequest: Bool

    /// A span's OTLP protobuf encoding, as stored beside its JSON.
    public struct Protobuf: Sendable, Equatable {
        /// The fields of the span's `Span` message (without its tag and length).
        public var span: [UInt8]
        /// The fields of its `Resource` message (without its tag and length).
        public var resource: [UInt8]

        public init(span: [UInt8], resource: [UInt8]) {
            self.span = span
            self.resource = resource
        }
    }

    /// A span to store; ids may be given in either case and are stored lower-case.
    public init(
        traceID: String, spanID: String, parentSpanID: String?, name: String, kind: String, startUnixNano: Int64,
        endUnixNano: Int64, statusCode: SpanStatusCode, host: String?, service: String? = nil, json: String,
        protobuf: Protobuf? = nil, isExportRequest: Bool = false
    ) {
        self.traceID = traceID
        self.spanID = spanID
        self.parentSpanID = parentSpanID
        self.name = name
        self.kind = kind
        self.startUnixNano = startUnixNano
        self.endUnixNano = endUnixNano
        self.statusCode = statusCode
        self.host = host
        self.service = service
        self.json = json
        self.protobuf = protobuf
        self.isExportRequest = isExportRequest
    }

    /// End minus start, in nanoseconds.
    public var durationNanoseconds: Int64 { endUnixNano - startUnixNano }
}
