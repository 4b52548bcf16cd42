import AgentTracing
import ArgumentParser
import Foundation
import HostscopeCore
import TerminalUI

/// Tracing options of the commands that reach hosts (`snapshot`, `watch`).
struct TracingOptions: ParsableArguments {
    @Option(
        name: .customLong("otlp-endpoint"),
        help: ArgumentHelp(
            "Also send spans over OTLP/HTTP while running, e.g. http://localhost:4318 (/v1/traces is appended); "
                + "@FILE reads the URL from a file only you can read.",
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
        name: .customLong("trace-buffer"),
        help: ArgumentHelp(
            "Spans held in memory before the oldest are overwritten (default: $HOSTSCOPE_TRACE_BUFFER, else 10000).",
            valueName: "spans"))
    var traceBuffer: Int?

    func validate() throws {
        if let traceBuffer, traceBuffer < 1 { throw ValidationError("--trace-buffer must be 1 or more.") }
        _ = try resolveEndpoint()
    }

    /// The OTLP endpoint with its headers from every source, and warnings about secrets given inline;
    /// `nil` when no endpoint was given.
    func resolveEndpoint() throws -> (endpoint: OTLPEndpoint, warnings: [String])? {
        guard let otlpEndpoint else {
            if !otlpHeaders.isEmpty { throw ValidationError("--otlp-header needs --otlp-endpoint.") }
            return nil
        }
        return try TracingOptions.endpoint(
            otlpEndpoint, option: "--otlp-endpoint", headerOption: "--otlp-header", headers: otlpHeaders)
    }

    /// The OTLP endpoint, warnings about inline secrets printed on stderr; `nil` when none was given.
    func endpoint() throws -> OTLPEndpoint? {
        guard let resolved = try resolveEndpoint() else { return nil }
        resolved.warnings.forEach(Output.warning)
        return resolved.endpoint
    }

    /// An endpoint (`URL` or `@FILE`) and its headers (options `name=value` or `@FILE`, and the
    /// `OTEL_EXPORTER_OTLP_*HEADERS` variables), every credential registered as a secret before anything
    /// can print it.
    static func endpoint(
        _ argument: String, option: String, headerOption: String, headers: [String],
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> (endpoint: OTLPEndpoint, warnings: [String]) {
        do {
            let (url, fromFile) = try ArgumentSecrets.url(argument, option: option)
            let resolved = try HeaderSources.otlp(option: headerOption, arguments: headers, environment: environment)
                .resolve()
            let endpoint = try OTLPEndpoint(url, headers: resolved.headers)
            for secret in endpoint.secrets { ProcessSecrets.register(secret) }
            var warnings = resolved.warnings
            if !fromFile,
                let warning = ArgumentSecrets.urlWarning(
                    url, option: option,
                    saferForm: "send them as a header (OTEL_EXPORTER_OTLP_HEADERS or \(headerOption) @FILE), "
                        + "or give the URL as \(option) @FILE")
            {
                warnings.append(warning)
            }
            return (endpoint, warnings)
        } catch let error as PrivateFileError {
            throw ValidationError(error.message)
        } catch let error as HeaderSourceError {
            throw ValidationError(error.message)
        } catch let error as TracingError {
            throw ValidationError(error.message)
        }
    }
}

extension CoreSettings {
    /// The settings of a command: its `--db` (when it has one), connection and tracing options, with the
    /// core's remarks printed on stderr.
    static func command(
        database: String? = nil, storesHistory: Bool = true, connection: ConnectionSettings = ConnectionSettings(),
        tracing: TracingOptions? = nil
    ) throws -> CoreSettings {
        CoreSettings(
            environment: ProcessInfo.processInfo.environment, database: database, storesHistory: storesHistory,
            connection: connection, traceBuffer: tracing?.traceBuffer, otlpEndpoint: try tracing?.endpoint(),
            diagnostics: Output.diagnostics)
    }
}
