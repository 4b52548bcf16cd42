public import AgentTracing
public import ArgumentParser
import Foundation
import HostscopeCore
import TerminalUI

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

extension CoreSettings {
    /// The settings of a command: its `--db` (when it has one), connection and tracing options (exporting the
    /// `signals` asked for), with the core's remarks printed on stderr.
    static func command(
        database: String? = nil, storesHistory: Bool = true, connection: ConnectionSettings = ConnectionSettings(),
        tracing: TracingOptions? = nil, signals: Set<OTLPSignal> = [.traces]
    ) throws -> CoreSettings {
        CoreSettings(
            environment: ProcessInfo.processInfo.environment, database: database, storesHistory: storesHistory,
            connection: connection, traceBuffer: tracing?.traceBuffer,
            export: try tracing?.export(signals: signals),
            resourceAttributes: tracing == nil ? [] : try TracingOptions.resourceAttributes(),
            diagnostics: Output.diagnostics(verbose: connection.debug != nil))
    }
}

extension TracingOptions {
    /// Whether GenAI spans record content: `option` (`--[no-]capture-message-content`) when given, else
    /// `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`, else off; a value it cannot read is a usage error.
    static func contentCapture(_ option: Bool?) throws -> Bool {
        do {
            return try GenAIContentCapture.enabled(option: option, environment: ProcessInfo.processInfo.environment)
        } catch {
            throw ValidationError(error.message)
        }
    }
}
