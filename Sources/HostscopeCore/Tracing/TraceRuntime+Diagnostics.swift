import AgentTracing

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
        guard let export = summary.export else { return }
        if export.failedSpans > 0 || export.droppedSpans > 0 {
            var parts = ["\(export.exportedSpans) span(s) exported"]
            if export.failedSpans > 0 { parts.append("\(export.failedSpans) not delivered") }
            if export.droppedSpans > 0 { parts.append("\(export.droppedSpans) dropped while the queue was full") }
            let reason = export.lastFailure.map { " (" + ProcessSecrets.scrub($0.message) + ")" } ?? ""
            diagnostics.warning("OTLP export: " + parts.joined(separator: ", ") + reason)
        }
        if export.rejectedSpans > 0 {
            let messages = export.rejectionMessages.map(ProcessSecrets.scrub).joined(separator: "; ")
            diagnostics.warning(
                "OTLP export: the receiver rejected \(export.rejectedSpans) span(s)"
                    + (messages.isEmpty ? "" : ": " + messages))
        }
    }
}
