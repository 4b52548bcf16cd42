import Agent
import AgentTracing
import ArgumentParser
import Foundation
import Storage

extension OTLPEncoding: ExpressibleByArgument {}
extension OTLPCompression: ExpressibleByArgument {}

/// Tracing options of the commands that reach hosts (`snapshot`, `watch`, `chat`).
struct TracingOptions: ParsableArguments {
    @Option(
        name: .customLong("otlp-endpoint"),
        help: ArgumentHelp(
            "Also send spans (and, for watch and serve, metrics) over OTLP/HTTP while running, to this base URL, "
                + "e.g. http://localhost:4318 (/v1/traces and /v1/metrics are appended); @FILE reads the URL from a "
                + "file only you can read. Default: OTEL_EXPORTER_OTLP_ENDPOINT and its per-signal variants.",
            valueName: "url"))
    var otlpEndpoint: String?

    @Option(
        name: .customLong("otlp-header"),
        help: ArgumentHelp(
            "Headers for the OTLP receiver: @FILE, a file (mode 0600) of name=value lines, or name=value "
                + "(repeatable; never printed or traced). OTEL_EXPORTER_OTLP_HEADERS is read too; options win.",
            valueName: "@file|name=value"))
    var otlpHeaders: [String] = []

    @Option(
        name: .customLong("otlp-encoding"),
        help: ArgumentHelp(
            "protobuf (default) or json request bodies (default: OTEL_EXPORTER_OTLP_PROTOCOL, http/protobuf or "
                + "http/json).",
            valueName: "encoding"))
    var otlpEncoding: OTLPEncoding?

    @Option(
        name: .customLong("otlp-compression"),
        help: ArgumentHelp(
            "gzip (default) or none (default: OTEL_EXPORTER_OTLP_COMPRESSION).", valueName: "compression"))
    var otlpCompression: OTLPCompression?

    @Option(
        name: .customLong("trace-buffer"),
        help: ArgumentHelp(
            "Spans held in memory before the oldest are overwritten (default: $HOSTSCOPE_TRACE_BUFFER, else 10000).",
            valueName: "spans"))
    var traceBuffer: Int?

    func validate() throws {
        if let traceBuffer, traceBuffer < 1 { throw ValidationError("--trace-buffer must be 1 or more.") }
        _ = try TracingOptions.export(arguments, signals: [.traces, .metrics])
    }

    /// The options as the settings resolver takes them.
    var arguments: OTLPExportSettings.Arguments {
        OTLPExportSettings.Arguments(
            endpoint: otlpEndpoint, endpointOption: "--otlp-endpoint", headers: otlpHeaders,
            headerOption: "--otlp-header", encoding: otlpEncoding, compression: otlpCompression)
    }

    /// Export settings from the options and the environment, credentials registered as secrets before anything
    /// can print them; a setting that cannot be used is a usage error of one sentence.
    static func export(
        _ arguments: OTLPExportSettings.Arguments, signals: Set<OTLPSignal>,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> OTLPExportSettings {
        do {
            return try OTLPExportSettings.resolve(arguments, signals: signals, environment: environment)
        } catch {
            throw ValidationError(error.message)
        }
    }

    /// The export settings of a command, warnings about inline secrets printed on stderr.
    func export(signals: Set<OTLPSignal>) throws -> OTLPExportSettings {
        let settings = try TracingOptions.export(arguments, signals: signals)
        settings.warnings.forEach(Output.warning)
        return settings
    }

    /// The tracing of a command that stores spans in the database `history` reads: `database` (a `--db`
    /// value), else `$HOSTSCOPE_DB`, else the XDG default; `export` from ``export(signals:)``.
    func setup(database: String?, retention: Duration? = nil, export: OTLPExportSettings) throws -> TraceSetup {
        let environment = ProcessInfo.processInfo.environment
        let capacity =
            traceBuffer ?? TraceRuntime.capacity(fromEnvironment: environment) ?? TraceSetup.defaultCapacity
        return TraceSetup(
            capacity: capacity, databasePath: DatabaseLocation.path(explicit: database, environment: environment),
            retention: retention, otlp: export.traces, resourceAttributes: try Self.resourceAttributes())
    }

    /// `OTEL_RESOURCE_ATTRIBUTES` and `OTEL_SERVICE_NAME`; a malformed list is a usage error.
    static func resourceAttributes(
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> [Attribute] {
        do {
            return try ResourceEnvironment.attributes(environment)
        } catch {
            throw ValidationError(error.message)
        }
    }
}

extension TraceRuntime {
    /// Starts tracing for a command, warnings on stderr.
    static func start(_ setup: TraceSetup) async -> TraceRuntime {
        await start(setup, warn: { Output.warning($0) }, note: { Output.note($0) })
    }

    /// Flushes and reports what went wrong with the export, if anything, on stderr.
    func finishReporting() async {
        let summary = await finish()
        if let export = summary.export { Self.report(export, items: "span(s)") }
    }

    /// What a continuous exporter could not do, on stderr; nothing when all went out.
    static func report(_ export: OTLPExportStatistics, items: String) {
        if export.failed > 0 || export.dropped > 0 {
            var parts = ["\(export.exported) \(items) exported"]
            if export.failed > 0 { parts.append("\(export.failed) not delivered") }
            if export.dropped > 0 { parts.append("\(export.dropped) dropped while the queue was full") }
            let reason = export.lastFailure.map { " (" + ProcessSecrets.scrub($0.message) + ")" } ?? ""
            Output.warning("OTLP export: " + parts.joined(separator: ", ") + reason)
        }
        if export.rejected > 0 {
            let messages = export.rejectionMessages.map(ProcessSecrets.scrub).joined(separator: "; ")
            Output.warning(
                "OTLP export: the receiver rejected \(export.rejected) \(items)"
                    + (messages.isEmpty ? "" : ": " + messages))
        }
    }
}
