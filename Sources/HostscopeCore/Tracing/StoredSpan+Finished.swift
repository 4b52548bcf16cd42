public import AgentTracing
public import Storage

extension StoredSpan {
    /// A finished span as the database stores it: its flat JSON, the columns `trace list` filters on, and its
    /// OTLP protobuf encoding, which `trace push` sends as it is.
    public init(_ span: FinishedSpan) {
        self.init(
            traceID: span.traceID.hex, spanID: span.spanID.hex, parentSpanID: span.parentSpanID?.hex, name: span.name,
            kind: SpanCategory.of(span).rawValue,
            startUnixNano: Int64(clamping: span.startNanoseconds), endUnixNano: Int64(clamping: span.endNanoseconds),
            statusCode: SpanStatusCode(rawValue: span.status.code.rawValue) ?? .unset,
            host: SpanCategory.host(of: span),
            service: span.resource.attributes["service.name"]?.stringValue,
            json: FlatSpanEncoder().string(span),
            protobuf: Protobuf(
                span: OTLPProtobufEncoder.encodedSpan(span),
                resource: OTLPProtobufEncoder.encodedResource(span.resource)),
            isExportRequest: span.isExportRequest)
    }

    /// The span back from its stored flat JSON.
    public func finishedSpan() throws(TracingError) -> FinishedSpan {
        try FinishedSpan(flatJSONLine: json)
    }
}

/// hostscope's category of a span: what `trace list --kind` selects and the `span.kind` column holds.
public enum SpanCategory: String, Sendable, CaseIterable {
    /// SSH connects and commands, and their phases.
    case ssh
    /// SFTP calls (the file browser's operations).
    case sftp
    /// HTTP requests (OTLP export, LLM providers).
    case http
    /// Chat turns and model calls (GenAI spans).
    case chat
    /// Tool executions of a chat (`execute_tool`).
    case tool
    /// Snapshot collections (`collect snapshot`).
    case snapshot
    /// Commands run on this machine for the `local` host.
    case exec
    /// Anything else.
    case other

    /// The category of a span, from its name and attributes.
    public static func of(_ span: FinishedSpan) -> SpanCategory {
        let operation = span.attributes["gen_ai.operation.name"]?.stringValue
        if operation == "execute_tool" || span.attributes["openinference.span.kind"]?.stringValue == "TOOL" {
            return .tool
        }
        if operation != nil { return .chat }
        if span.name.hasPrefix("ssh ") { return .ssh }
        if span.name.hasPrefix("sftp") || span.name.hasPrefix("files.") { return .sftp }
        if span.attributes["http.request.method"] != nil { return .http }
        if span.name == "collect snapshot" { return .snapshot }
        if span.name == "local exec" { return .exec }
        return .other
    }

    /// The host a span is about: `hostscope.host` when set, else the server it talked to.
    public static func host(of span: FinishedSpan) -> String? {
        span.attributes["hostscope.host"]?.stringValue ?? span.attributes["server.address"]?.stringValue
    }
}
