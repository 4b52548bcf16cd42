import HostStats
public import HostscopeCore
import ValueFormats

/// One `host_snapshot` core call made directly, without MCP: the time around the call, and the collector's own
/// time inside it (the snapshot's `duration_ms`).
public struct DirectCallTiming: Sendable {
    /// Milliseconds from the call to its return, as its caller measured them.
    public var elapsedMs: Double
    /// The snapshot's `duration_ms`: the collector's time around the collection itself.
    public var durationMs: Double
}

extension MCPServer {
    /// Times `host_snapshot`'s core call (``HostTools/snapshot()``) made directly, with no MCP in the way, as the
    /// MCP benchmark compares it with the same call through `hostscope mcp` (`Scripts/bench/mcp`): one call that
    /// opens the SSH session, then `count` warm ones on the first host of `configuration`, with their spans
    /// recorded as under `hostscope mcp`.
    ///
    /// - Throws: `CoreError` when the configuration names no host; `CollectionError` when the host cannot be
    ///   reached or read.
    public static func timeDirectSnapshots(
        _ configuration: MCPConfiguration, count: Int
    ) async throws -> [DirectCallTiming] {
        guard let host = configuration.fleet.hosts.first else {
            throw CoreError(.invalidRequest, "no host to time the snapshot call on; name one host")
        }
        let settings = configuration.settings
        return try await TraceRuntime.with(settings.traceSetup(), diagnostics: settings.diagnostics) { _ in
            let environment = MCPEnvironment(configuration: configuration)
            let tools = environment.tools(for: host)
            _ = try await tools.snapshot()
            var timings: [DirectCallTiming] = []
            for _ in 0..<count {
                let started = ContinuousClock.now
                let (snapshot, _) = try await tools.snapshot()
                timings.append(
                    DirectCallTiming(
                        elapsedMs: started.duration(to: .now).inMilliseconds, durationMs: snapshot.durationMs))
            }
            await environment.close()
            return timings
        }
    }
}
