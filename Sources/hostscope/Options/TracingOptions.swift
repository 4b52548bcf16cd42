import Agent
import AgentTracing
import ArgumentParser
import Foundation
import Storage

/// Tracing options of the commands that reach hosts (`snapshot`, `watch`).
struct TracingOptions: ParsableArguments {
    @Option(
        name: .customLong("otlp-endpoint"),
        help: ArgumentHelp(
            "Also send spans over OTLP/HTTP while running, e.g. http://localhost:4318 (/v1/traces is appended).",
            valueName: "url"))
    var otlpEndpoint: String?

    @Option(
        name: .customLong("otlp-header"),
        help: ArgumentHelp(
            "Header for the OTLP receiver, e.g. 'Authorization=Bearer …' (repeatable; never printed or traced).",
            valueName: "name=value"))
    var otlpHeaders: [String] = []

    @Option(
        name: .customLong("trace-buffer"),
        help: ArgumentHelp(
            "Spans held in memory before the oldest are overwritten (default: $HOSTSCOPE_TRACE_BUFFER, else 10000).",
            valueName: "spans"))
    var traceBuffer: Int?

    func validate() throws {
        if let traceBuffer, traceBuffer < 1 { throw ValidationError("--trace-buffer must be 1 or more.") }
        _ = try endpoint()
    }

    /// The OTLP endpoint, its headers parsed; `nil` when none was given.
    func endpoint() throws -> OTLPEndpoint? {
        guard let otlpEndpoint else {
            if !otlpHeaders.isEmpty { throw ValidationError("--otlp-header needs --otlp-endpoint.") }
            return nil
        }
        return try TracingOptions.endpoint(otlpEndpoint, headers: otlpHeaders)
    }

    /// An endpoint and `name=value` headers, registered as secrets before anything can print them.
    static func endpoint(_ url: String, headers: [String]) throws -> OTLPEndpoint {
        var parsed: [(name: String, value: String)] = []
        for header in headers {
            guard let equals = header.firstIndex(of: "="), equals != header.startIndex else {
                throw ValidationError(
                    "a header is name=value, as in 'Authorization=Bearer …'; got a header without '='.")
            }
            let value = String(header[header.index(after: equals)...]).trimmingCharacters(in: .whitespaces)
            parsed.append((String(header[..<equals]).trimmingCharacters(in: .whitespaces), value))
        }
        do {
            let endpoint = try OTLPEndpoint(url, headers: parsed)
            for secret in endpoint.secrets { ProcessSecrets.register(secret) }
            return endpoint
        } catch {
            throw ValidationError(error.message)
        }
    }

    /// The tracing of a command that stores spans in the database `history` reads: `database` (a `--db`
    /// value), else `$HOSTSCOPE_DB`, else the XDG default.
    func setup(database: String?, retention: Duration? = nil) throws -> TraceSetup {
        let environment = ProcessInfo.processInfo.environment
        let capacity =
            traceBuffer ?? TraceRuntime.capacity(fromEnvironment: environment) ?? TraceSetup.defaultCapacity
        return TraceSetup(
            capacity: capacity, databasePath: DatabaseLocation.path(explicit: database, environment: environment),
            retention: retention, otlpEndpoint: try endpoint())
    }
}

extension TraceRuntime {
    /// Starts tracing for a command, warnings on stderr.
    static func start(_ setup: TraceSetup) async -> TraceRuntime {
        await start(setup, warn: { Output.warning($0) })
    }

    /// Flushes and reports what went wrong with the export, if anything, on stderr.
    func finishReporting() async {
        let summary = await finish()
        guard let export = summary.export else { return }
        if export.failedSpans > 0 || export.droppedSpans > 0 {
            var parts = ["\(export.exportedSpans) span(s) exported"]
            if export.failedSpans > 0 { parts.append("\(export.failedSpans) not delivered") }
            if export.droppedSpans > 0 { parts.append("\(export.droppedSpans) dropped while the queue was full") }
            let reason = export.lastFailure.map { " (" + ProcessSecrets.scrub($0.message) + ")" } ?? ""
            Output.warning("OTLP export: " + parts.joined(separator: ", ") + reason)
        }
        if export.rejectedSpans > 0 {
            let messages = export.rejectionMessages.map(ProcessSecrets.scrub).joined(separator: "; ")
            Output.warning(
                "OTLP export: the receiver rejected \(export.rejectedSpans) span(s)"
                    + (messages.isEmpty ? "" : ": " + messages))
        }
    }
}
