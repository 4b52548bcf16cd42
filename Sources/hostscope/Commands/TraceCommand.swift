import AgentTracing
public import ArgumentParser
import Foundation
public import HostscopeCore
import Storage
import TerminalUI

struct TraceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trace",
        abstract: "List, inspect, export and push the spans hostscope recorded.",
        discussion: """
            Every SSH connect and command, snapshot collection, SFTP call and HTTP request is a span. \
            `snapshot` and `watch` store finished spans in the database (--db, else $HOSTSCOPE_DB, else \
            $XDG_DATA_HOME/hostscope/hostscope.sqlite), so these commands work while a watch runs in \
            another process.
            """,
        subcommands: [
            TraceListCommand.self, TraceShowCommand.self, TraceExportCommand.self, TracePushCommand.self,
        ])
}

/// `--db`, shared by the trace subcommands.
struct TraceDatabaseOption: ParsableArguments {
    @Option(name: .customLong("db"), help: ArgumentHelp("The database file.", valueName: "file"))
    var database: String?

    /// The spans of the database.
    var traces: TraceService {
        get throws { TraceService(settings: try .command(database: database)) }
    }

    var path: String { DatabaseLocation.path(explicit: database, environment: ProcessInfo.processInfo.environment) }

    /// Opens the database for reading; a missing file is one clear sentence.
    func open() async throws -> StorageDatabase {
        let path = path
        do {
            let store = try await StorageDatabase.open(at: path, mode: .existingOnly)
            store.accessNotes.forEach(Output.note)
            return store
        } catch  where error.code == .notFound {
            throw Output.fail("no spans yet at \(path): run `hostscope snapshot` or `hostscope watch` first", .failure)
        } catch {
            throw Output.fail(error.message, .failure)
        }
    }
}

/// Span kinds `trace list --kind` accepts.
extension SpanCategory: ExpressibleByArgument {}

struct TraceListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "Show recent traces, newest first; --spans lists their spans one per line.",
        discussion: """
            A trace is one piece of work and every span it caused: a snapshot of a host, a chat turn, a \
            files command. Columns: start time (UTC), trace id (enough digits for `trace show`), the root \
            span's name, host, duration and span count; below a failed trace, the error that explains it \
            (the root's, else the earliest failed span's). The filters select the traces that hold a \
            matching span.

            --spans lists the spans themselves instead: start time (UTC), span id, name, host, duration, \
            status and, for commands, the exit code.

            The footer says how many spans were lost before reaching the database (overwritten in memory \
            because the writer fell behind).
            """)

    @Option(
        help: ArgumentHelp(
            "Spans that started since: a duration back from now (10m) or an RFC 3339 time.",
            valueName: "time"))
    var since: TimeArgument?

    @Option(help: ArgumentHelp("Spans about this host, as snapshot or watch named it.", valueName: "host"))
    var host: String?

    @Option(help: "ssh, sftp, http, chat, tool, snapshot, exec or other.")
    var kind: SpanCategory?

    @Flag(help: "Only spans with error status (with traces: traces that hold one).")
    var errors = false

    @Option(help: ArgumentHelp("Only executions of this chat tool.", valueName: "name"))
    var tool: String?

    @Flag(help: "List the matching spans one per line instead of traces.")
    var spans = false

    @Option(help: "At most this many traces (or spans with --spans).")
    var limit: Int = 50

    @OptionGroup var database: TraceDatabaseOption

    func validate() throws {
        guard limit > 0 else { throw ValidationError("--limit must be 1 or more.") }
    }

    func run() async throws {
        let since = since?.resolve(now: Date())
        let traces = try database.traces
        if spans {
            let recent: RecentSpans
            do {
                recent = try await traces.recent(
                    since: since, host: host, kind: kind, errorsOnly: errors, tool: tool, limit: limit)
            } catch {
                throw Output.fail(error)
            }
            Output.write(TraceText.list(recent.spans, width: Output.terminalWidth))
            Output.write(footer(recent.spans.count, "span(s)", dropped: recent.droppedSpans))
            return
        }
        let recent: RecentTraces
        do {
            recent = try await traces.recentTraces(
                since: since, host: host, kind: kind, errorsOnly: errors, tool: tool, limit: limit)
        } catch {
            throw Output.fail(error)
        }
        Output.write(TraceText.traces(recent.traces, width: Output.terminalWidth))
        Output.write(footer(recent.traces.count, "trace(s)", dropped: recent.droppedSpans))
        if recent.unreadableSpans > 0 {
            Output.warning("\(recent.unreadableSpans) span(s) of these traces could not be read and were left out")
        }
    }
}

extension TraceListCommand {
    /// `7 span(s), newest first; 0 span(s) dropped before reaching the database`.
    func footer(_ count: Int, _ noun: String, dropped: Int64) -> String {
        var footer = "\(count) \(noun), newest first"
        if count == limit { footer += " (--limit \(limit) reached)" }
        return footer + "; \(dropped) span(s) dropped before reaching the database\n"
    }
}

struct TraceShowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Show a trace as a waterfall, or a span with its parent chain, children, attributes and events.",
        discussion: """
            ID may be a trace id or a span id, or any unique prefix of one (`trace list` shows trace ids, \
            `trace list --spans` span ids). Each span is shown with its offset from the trace's start, its \
            duration, its status and a bar placing it in the trace, nested under its parent. For a span, its \
            attributes and events follow; spans with error status below it (or, for a trace, anywhere in it) \
            are shown in full too, so the stderr of the command that failed a snapshot is one command away.
            """)

    @Argument(help: ArgumentHelp("A trace or span id, or a unique prefix of one.", valueName: "id"))
    var id: String

    @OptionGroup var database: TraceDatabaseOption

    func run() async throws {
        let found: TraceShowTarget
        do {
            found = try await database.traces.show(id)
        } catch let error as CoreError {
            throw Output.fail(error)
        }
        let width = Output.terminalWidth
        let unreadable: Int
        switch found {
        case .trace(let trace):
            Output.write(TraceText.show(trace, width: width))
            unreadable = trace.unreadableSpans
        case .span(let span):
            Output.write(TraceText.show(span, width: width))
            unreadable = span.unreadableSpans
        }
        if unreadable > 0 {
            Output.warning("\(unreadable) span(s) of this trace could not be read")
        }
    }
}

/// `trace export` formats.
enum TraceExportFormat: String, ExpressibleByArgument, CaseIterable {
    case otlp, spans
}

struct TraceExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write stored spans as OTLP JSON lines or flat spans.",
        discussion: """
            --format otlp writes one ExportTraceServiceRequest per line, each under 1 MiB: what an \
            OpenTelemetry Collector's file exporter writes and its otlpjsonfile receiver reads. \
            --format spans writes one flat JSON object per span, for jq. Spans are written oldest \
            first, a page at a time. --host, --kind and --trace keep whole traces: those holding a \
            span about the host, of the kind, or with that trace id (or id prefix).
            """)

    @Option(name: [.customShort("f"), .long], help: "otlp (OTLP JSON lines) or spans (one flat span per line).")
    var format: TraceExportFormat = .otlp

    @Option(help: ArgumentHelp("Earliest span start: a duration back from now or an RFC 3339 time.", valueName: "time"))
    var since: TimeArgument?

    @Option(help: ArgumentHelp("Latest span start: a duration back from now or an RFC 3339 time.", valueName: "time"))
    var until: TimeArgument?

    @Option(
        help: ArgumentHelp("Whole traces holding a span about this host, as trace list takes it.", valueName: "host"))
    var host: String?

    @Option(help: "Whole traces holding a span of this kind: ssh, sftp, http, chat, tool, snapshot, exec or other.")
    var kind: SpanCategory?

    @Option(name: .customLong("trace"), help: ArgumentHelp("The trace with this id (or id prefix).", valueName: "id"))
    var trace: String?

    @Option(
        name: [.customShort("o"), .long], help: ArgumentHelp("File to write (default: stdout).", valueName: "file"))
    var output: String?

    @OptionGroup var database: TraceDatabaseOption

    static let pageSize = 1_000

    func validate() throws {
        if let trace, trace.isEmpty || !trace.allSatisfy(\.isHexDigit) {
            throw ValidationError("--trace \(trace) is no trace id; give the hex digits trace list shows.")
        }
    }

    func run() async throws {
        let store = try await database.open()
        let now = Date()
        var sink: ExportSink
        do {
            sink = try ExportSink(path: output)
        } catch {
            throw Output.fail("\(error)", .failure)
        }
        var skipped = 0
        var written = 0
        do {
            let dropped = try await store.meta.integer(SpanPersister.droppedSpansKey) ?? 0
            let encoder = OTLPJSONEncoder(scope: TraceRuntime.scope)
            var page: [FinishedSpan] = []
            page.reserveCapacity(Self.pageSize)
            func flushPage() throws {
                guard !page.isEmpty else { return }
                switch format {
                case .otlp:
                    try encoder.encode(page, droppedSpanCount: UInt64(max(0, dropped))) { line in try sink.write(line) }
                case .spans:
                    try sink.write(FlatSpanEncoder().encode(page))
                }
                written += page.count
                page.removeAll(keepingCapacity: true)
            }
            let traces = SpanTraceFilter(host: host, kind: kind?.rawValue, traceIDPrefix: trace)
            for try await row in store.spans.spans(
                since: since?.resolve(now: now), until: until?.resolve(now: now), traces: traces,
                pageSize: Self.pageSize)
            {
                guard let span = try? row.finishedSpan() else {
                    skipped += 1
                    continue
                }
                page.append(span)
                if page.count == Self.pageSize { try flushPage() }
            }
            try flushPage()
            try sink.close()
        } catch let error as StorageError {
            throw Output.fail(error.message, .failure)
        } catch let error as ExportSink.WriteError {
            throw Output.fail(error.description, .failure)
        }
        try? await store.close()
        if skipped > 0 {
            throw Output.fail("\(skipped) stored span(s) could not be read and were left out", .failure)
        }
        if written == 0 {
            Output.warning(host == nil && kind == nil && trace == nil ? "no spans in that range" : "no spans match")
        }
    }
}

/// Where `trace export` writes: stdout, or a file written whole under a temporary name first.
struct ExportSink {
    struct WriteError: Error, CustomStringConvertible {
        var description: String
    }

    private let handle: FileHandle?
    private let path: String?
    private let temporary: String?
    private var buffer: [UInt8] = []

    init(path: String?) throws {
        self.path = path
        guard let path else {
            handle = nil
            temporary = nil
            return
        }
        let temporary = path + ".partial"
        guard FileManager.default.createFile(atPath: temporary, contents: nil),
            let handle = FileHandle(forWritingAtPath: temporary)
        else {
            throw WriteError(description: "cannot write \(path): check the directory exists and is writable")
        }
        self.handle = handle
        self.temporary = temporary
    }

    mutating func write(_ bytes: [UInt8]) throws {
        buffer.append(contentsOf: bytes)
        if buffer.count >= 1 << 20 { try drain() }
    }

    private mutating func drain() throws {
        guard !buffer.isEmpty else { return }
        if let handle {
            do {
                try handle.write(contentsOf: buffer)
            } catch {
                throw WriteError(description: "cannot write \(path ?? "the output"): \(error.localizedDescription)")
            }
        } else {
            Output.writeData(buffer)
        }
        buffer.removeAll(keepingCapacity: true)
    }

    mutating func close() throws {
        try drain()
        guard let handle, let path, let temporary else { return }
        try? handle.close()
        guard rename(temporary, path) == 0 else {
            throw WriteError(description: "cannot write \(path): \(String(cString: strerror(errno)))")
        }
    }
}

struct TracePushCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push",
        abstract: "Send stored spans to an OpenTelemetry receiver over OTLP/HTTP.",
        discussion: """
            POSTs the spans to ENDPOINT/v1/traces as binary protobuf (application/x-protobuf, OTLP/HTTP's \
            default), gzip-compressed; --encoding json sends OTLP/JSON, --compression none sends them \
            uncompressed. Any OTLP/HTTP receiver takes them: an OpenTelemetry Collector, Jaeger (4318), \
            Tempo, Phoenix (6006), Langfuse. Without --endpoint, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (used as \
            is) or OTEL_EXPORTER_OTLP_ENDPOINT (a base URL) says where; OTEL_EXPORTER_OTLP_PROTOCOL, \
            _COMPRESSION, _TIMEOUT and _HEADERS are read too, options winning. OTEL_SERVICE_NAME and \
            OTEL_RESOURCE_ATTRIBUTES are applied to every span's resource.

            Refusals with 429, 502, 503 or 504 are retried, honouring Retry-After, else with exponential \
            backoff; other 4xx are not. Spans a receiver reports rejected (partial success) are counted in a \
            warning. The spans of hostscope's own OTLP requests (marked hostscope.telemetry.export=true) are \
            not pushed. The database is only read: a failed push loses nothing and can be run again.
            """)

    @Option(
        help: ArgumentHelp(
            "The receiver's base URL, e.g. http://collector:4318 (/v1/traces is appended); @FILE reads the URL from "
                + "a file only you can read. Default: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, OTEL_EXPORTER_OTLP_ENDPOINT.",
            valueName: "url"))
    var endpoint: String?

    @Option(
        name: .customLong("header"),
        help: ArgumentHelp(
            "Request headers: @FILE, a file (mode 0600) of name=value lines, or name=value (repeatable; never "
                + "printed or traced). OTEL_EXPORTER_OTLP_HEADERS is read too; options win.",
            valueName: "@file|name=value"))
    var headers: [String] = []

    @Option(help: ArgumentHelp("protobuf (default) or json request bodies.", valueName: "encoding"))
    var encoding: OTLPEncoding?

    @Option(help: ArgumentHelp("gzip (default) or none.", valueName: "compression"))
    var compression: OTLPCompression?

    @Option(help: ArgumentHelp("Earliest span start: a duration back from now or an RFC 3339 time.", valueName: "time"))
    var since: TimeArgument?

    @Option(help: ArgumentHelp("Latest span start: a duration back from now or an RFC 3339 time.", valueName: "time"))
    var until: TimeArgument?

    @Option(name: .customLong("batch-size"), help: "Spans per request.")
    var batchSize: Int = 512

    @Option(help: ArgumentHelp("Give up retrying after this long.", valueName: "duration"))
    var timeout: DurationArgument = DurationArgument(.seconds(60))

    @OptionGroup var database: TraceDatabaseOption

    var arguments: OTLPExportSettings.Arguments {
        OTLPExportSettings.Arguments(
            endpoint: endpoint, endpointOption: "--endpoint", headers: headers, headerOption: "--header",
            encoding: encoding, compression: compression)
    }

    func validate() throws {
        guard (1...10_000).contains(batchSize) else { throw ValidationError("--batch-size must be 1 to 10000.") }
        guard try TracingOptions.export(arguments, signals: [.traces]).traces != nil else {
            throw ValidationError(
                "trace push needs a receiver: --endpoint URL, or OTEL_EXPORTER_OTLP_ENDPOINT in the environment.")
        }
        _ = try TracingOptions.resourceAttributes()
    }

    func run() async throws {
        let settings = try TracingOptions.export(arguments, signals: [.traces])
        settings.warnings.forEach(Output.warning)
        guard let otlp = settings.traces else { throw Output.fail("trace push needs --endpoint URL", .usage) }
        let now = Date()
        // Spans this push records (its own requests) start after `now` and are not pushed by it.
        let push = TracePush(
            otlp: otlp, resourceAttributes: try TracingOptions.resourceAttributes(), since: since?.resolve(now: now),
            until: until?.resolve(now: now) ?? now, batchSize: batchSize, timeout: timeout.duration)
        let outcome: TracePushOutcome
        do {
            outcome = try await database.traces.push(push, diagnostics: Output.diagnostics)
        } catch let error as CoreError {
            throw Output.fail(error)
        }
        let (found, skipped, result) = (outcome.found, outcome.skipped, outcome.result)

        let place = otlp.endpoint.redactedURL
        if found == 0 {
            // Nothing was sent, so nothing is known of the receiver: say so rather than "pushed 0".
            let range = since == nil ? "" : " in that time range"
            Output.write("no spans\(range) in \(database.path); nothing was sent to \(place)\n")
        } else if result.delivered > 0 || result.failure == nil {
            Output.write("pushed \(result.accepted) span(s) to \(place)\n")
        }
        if result.rejected > 0 {
            let messages = result.rejectionMessages.map(ProcessSecrets.scrub).joined(separator: "; ")
            Output.warning(
                "the receiver rejected \(result.rejected) of \(result.delivered) span(s)"
                    + (messages.isEmpty ? "" : ": " + messages))
        }
        if skipped > 0 { Output.warning("\(skipped) stored span(s) could not be read and were not pushed") }
        if let error = result.failure {
            let status: ExitStatus = error.code == .exportRejected ? .failure : .connect
            throw Output.fail(
                ProcessSecrets.scrub(error.message)
                    + "; \(result.failed) span(s) not pushed (they stay in the database)", status)
        }
    }
}
