public import AgentTracing
public import HostStats

/// Sends every collection's figures to an OTLP/HTTP receiver as metrics (``HostMetrics``) while a command runs:
/// the metrics half of `watch --otlp-endpoint`.
///
/// Collections are queued and sent by an ``OTLPMetricsBatchExporter``: a bounded queue that drops and counts
/// when the receiver is slow or down, batches by size or every 2 s, retries per ``OTLPRetryPolicy``, and a
/// bounded flush at the end, as the span exporter does. Failed collections have no figures and send nothing.
public final class HostMetricsExporter: Sendable {
    private let batches: OTLPMetricsBatchExporter
    private let resourceAttributes: [Attribute]
    private let labels: @Sendable (String) -> [String: String]

    /// Starts an exporter; `warn` hears of the first failure after a stretch of successes. `labels` gives a
    /// host's fleet-file labels, which become resource attributes of its metrics (after the user's own, before
    /// the host's `host.name`, `os.type`…, which win).
    public init(
        settings: OTLPSignalSettings, resourceAttributes: [Attribute] = [],
        labels: @escaping @Sendable (String) -> [String: String] = { _ in [:] },
        retryPolicy: OTLPRetryPolicy = OTLPRetryPolicy(),
        configuration: OTLPBatchExporter.Configuration = OTLPMetricsBatchExporter.defaultConfiguration,
        warn: @escaping @Sendable (String) -> Void
    ) {
        for secret in settings.endpoint.secrets { ProcessSecrets.register(secret) }
        let exporter = OTLPMetricsExporter(
            endpoint: settings.endpoint, scope: TraceRuntime.scope, encoding: settings.encoding,
            compression: settings.compression, policy: retryPolicy, timeouts: settings.timeouts,
            userAgent: TraceRuntime.userAgent)
        batches = OTLPMetricsBatchExporter(exporter: exporter, configuration: configuration) { error in
            warn("OTLP metrics export: \(ProcessSecrets.scrub(error.message))")
        }
        self.resourceAttributes = resourceAttributes
        self.labels = labels
        batches.start()
    }

    /// Queues one collection's metrics.
    public func record(_ record: SnapshotRecord) {
        let labels = labels(record.host).sorted { $0.key < $1.key }.map { Attribute($0.key, .string($0.value)) }
        guard let metrics = HostMetrics.resourceMetrics(for: record, resourceAttributes: resourceAttributes + labels)
        else { return }
        batches.enqueue(metrics)
    }

    /// Sends what is queued within `timeout`, then stops; returns the counts, in data points.
    @discardableResult
    public func finish(timeout: Duration = .seconds(5)) async -> OTLPExportStatistics {
        await batches.shutdown(timeout: timeout)
    }
}
