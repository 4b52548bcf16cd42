/// Exports spans continuously while a command runs (`watch --otlp-endpoint`): a ``FinishedSpanSink``
/// that queues each finished span and sends batches from a task of its own.
///
/// - The queue is bounded (``Configuration/queueCapacity``): when the receiver is slow or down, new
///   spans are dropped and counted (``OTLPExportStatistics/dropped``) rather than blocking the code that
///   ends them or growing without bound. The count rides on every later request as the scope attribute
///   `hostscope.tracer.dropped_spans`.
/// - A batch goes out when ``Configuration/batchSize`` spans are waiting or every
///   ``Configuration/interval``, whichever is first; each batch is retried per the exporter's
///   ``OTLPRetryPolicy`` and counted failed when that gives up.
/// - Spans of export requests (marked with ``HTTPClientTracing/exportMarkerKey``) are not queued, so an
///   export never causes another.
/// - ``shutdown(timeout:)`` sends what is queued within the timeout, then stops.
public final class OTLPBatchExporter: FinishedSpanSink {
    /// Queue and batching bounds.
    public struct Configuration: Sendable {
        /// Entries waiting at most; more are dropped and counted.
        public var queueCapacity: Int
        /// Entries per batch.
        public var batchSize: Int
        /// The longest an entry waits in the queue before its batch goes out.
        public var interval: Duration

        public init(queueCapacity: Int = 8_192, batchSize: Int = 512, interval: Duration = .seconds(2)) {
            self.queueCapacity = max(1, queueCapacity)
            self.batchSize = max(1, batchSize)
            self.interval = interval
        }
    }

    /// The exporter that sends the batches.
    public let exporter: OTLPHTTPExporter
    /// The bounds in force.
    public var configuration: Configuration { queue.configuration }
    private let queue: OTLPExportQueue<FinishedSpan>

    /// An exporter; `onFailure` hears of the first failure after a stretch of successes (for one warning
    /// line, not one per batch). Call ``start()`` to begin sending.
    public init(
        exporter: OTLPHTTPExporter, configuration: Configuration = Configuration(),
        onFailure: (@Sendable (TracingError) -> Void)? = nil
    ) {
        self.exporter = exporter
        queue = OTLPExportQueue(
            configuration: configuration, weight: { _ in 1 },
            send: { batch, dropped, deadline in
                await exporter.export(batch, droppedSpanCount: dropped, deadline: deadline)
            },
            onFailure: onFailure)
    }

    /// Starts the sending task and its timer. Calling it again does nothing.
    public func start() {
        queue.start()
    }

    public func spanFinished(_ span: FinishedSpan) {
        if span.isExportRequest { return }
        queue.enqueue(span)
    }

    public func forceFlush() {
        queue.flush()
    }

    /// The counts so far, in spans.
    public var statistics: OTLPExportStatistics { queue.statistics }

    /// Spans waiting to be sent.
    public var queuedSpanCount: Int { queue.queuedCount }

    /// Sends what is queued, giving up at `timeout` from now, and stops; spans not delivered by then
    /// count as failed. Returns the final counts.
    @discardableResult
    public func shutdown(timeout: Duration) async -> OTLPExportStatistics {
        let statistics = await queue.shutdown(timeout: timeout)
        await exporter.shutdown()
        return statistics
    }
}

/// Exports metrics continuously while a command runs (`watch --otlp-endpoint`): each collection's
/// ``ResourceMetrics`` is queued and sent in batches from a task of its own, under the same rules as
/// ``OTLPBatchExporter``'s spans (a bounded queue that drops and counts, batches by size or interval, retries
/// per ``OTLPRetryPolicy``, a bounded flush on shutdown). Counts are data points.
public final class OTLPMetricsBatchExporter: Sendable {
    /// The exporter that sends the batches.
    public let exporter: OTLPMetricsExporter
    private let queue: OTLPExportQueue<ResourceMetrics>

    /// The default bounds: up to 1,024 hosts' collections waiting, 64 per request.
    public static let defaultConfiguration = OTLPBatchExporter.Configuration(
        queueCapacity: 1_024, batchSize: 64, interval: .seconds(2))

    /// An exporter; `onFailure` hears of the first failure after a stretch of successes. Call ``start()``.
    public init(
        exporter: OTLPMetricsExporter,
        configuration: OTLPBatchExporter.Configuration = OTLPMetricsBatchExporter.defaultConfiguration,
        onFailure: (@Sendable (TracingError) -> Void)? = nil
    ) {
        self.exporter = exporter
        queue = OTLPExportQueue(
            configuration: configuration, weight: { $0.pointCount },
            send: { batch, _, deadline in await exporter.export(batch, deadline: deadline) },
            onFailure: onFailure)
    }

    /// Starts the sending task and its timer.
    public func start() {
        queue.start()
    }

    /// Queues one collection's metrics; dropped (and counted) when the queue is full.
    public func enqueue(_ metrics: ResourceMetrics) {
        guard metrics.pointCount > 0 else { return }
        queue.enqueue(metrics)
    }

    /// Sends what is queued now rather than at the next interval.
    public func flush() {
        queue.flush()
    }

    /// The counts so far, in data points.
    public var statistics: OTLPExportStatistics { queue.statistics }

    /// Sends what is queued within `timeout`, then stops; returns the final counts.
    @discardableResult
    public func shutdown(timeout: Duration) async -> OTLPExportStatistics {
        let statistics = await queue.shutdown(timeout: timeout)
        await exporter.shutdown()
        return statistics
    }
}

extension FinishedSpan {
    /// Whether the span is an OTLP export request of hostscope's own (``HTTPClientTracing/exportMarkerKey``),
    /// which no exporter sends on.
    public var isExportRequest: Bool { attributes[HTTPClientTracing.exportMarkerKey] == .bool(true) }
}
