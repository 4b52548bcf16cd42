public import AgentTracing

extension TraceRuntime {
    /// Starts tracing, its problems reported to `diagnostics`.
    public static func start(_ setup: TraceSetup, diagnostics: Diagnostics) async -> TraceRuntime {
        await start(setup, warn: diagnostics.warning, note: diagnostics.note)
    }

    /// Starts tracing for `settings`, runs `body`, and flushes and closes what tracing opened whatever
    /// `body` does (cancellation included), export problems reported to the settings' diagnostics.
    public static func with<T: Sendable>(
        _ setup: TraceSetup, diagnostics: Diagnostics, _ body: (TraceRuntime) async throws -> T
    ) async rethrows -> T {
        let runtime = await start(setup, diagnostics: diagnostics)
        do {
            let result = try await body(runtime)
            await runtime.finish(reportingTo: diagnostics)
            return result
        } catch {
            await runtime.finish(reportingTo: diagnostics)
            throw error
        }
    }

    /// Flushes and closes, and reports what went wrong with the export, if anything.
    public func finish(reportingTo diagnostics: Diagnostics) async {
        let summary = await finish()
        if let export = summary.export { Self.report(export, items: "span(s)", to: diagnostics) }
    }

    /// What a continuous exporter could not do, as warnings; nothing when all went out.
    public static func report(_ export: OTLPExportStatistics, items: String, to diagnostics: Diagnostics) {
        if export.failed > 0 || export.dropped > 0 {
            var parts = ["\(export.exported) \(items) exported"]
            if export.failed > 0 { parts.append("\(export.failed) not delivered") }
            if export.dropped > 0 { parts.append("\(export.dropped) dropped while the queue was full") }
            let reason = export.lastFailure.map { " (" + ProcessSecrets.scrub($0.message) + ")" } ?? ""
            diagnostics.warning("OTLP export: " + parts.joined(separator: ", ") + reason)
        }
        if export.rejected > 0 {
            let messages = export.rejectionMessages.map(ProcessSecrets.scrub).joined(separator: "; ")
            diagnostics.warning(
                "OTLP export: the receiver rejected \(export.rejected) \(items)"
                    + (messages.isEmpty ? "" : ": " + messages))
        }
    }
}
