public import CurlHTTP

/// Sends metrics to an OTLP/HTTP receiver: `POST …/v1/metrics` with one `ExportMetricsServiceRequest` per call
/// (``OTLPMetricsEncoder``), binary protobuf and gzip by default, retried per ``OTLPRetryPolicy`` like the
/// trace exporter; counts in the result are data points.
public final class OTLPMetricsExporter: Sendable {
    /// Where requests go.
    public var endpoint: OTLPEndpoint { sender.endpoint }
    /// How bodies are encoded.
    public var encoding: OTLPEncoding { sender.encoding }
    private let encoder: OTLPMetricsEncoder
    private let sender: OTLPHTTPSender

    /// An exporter with its own HTTP client; call ``shutdown()`` when done.
    public init(
        endpoint: OTLPEndpoint, scope: InstrumentationScope, encoding: OTLPEncoding = .protobuf,
        compression: OTLPCompression = .gzip, policy: OTLPRetryPolicy = OTLPRetryPolicy(),
        timeouts: HTTPTimeouts = OTLPHTTPExporter.defaultTimeouts, userAgent: String = "hostscope"
    ) {
        encoder = OTLPMetricsEncoder(scope: scope)
        sender = OTLPHTTPSender(
            endpoint: endpoint, encoding: encoding, compression: compression, policy: policy, timeouts: timeouts,
            userAgent: userAgent)
    }

    /// Stops the HTTP client; exports still running fail.
    public func shutdown() async {
        await sender.shutdown()
    }

    /// Sends the metrics in one request and reports what became of their data points. Never throws.
    ///
    /// - Parameter deadline: no retry starts a wait that would end after it.
    public func export(
        _ batches: some Collection<ResourceMetrics>, deadline: ContinuousClock.Instant? = nil
    ) async -> OTLPExportResult {
        let points = batches.reduce(0) { $0 + $1.pointCount }
        var result = OTLPExportResult()
        guard points > 0 else { return result }
        let body = encoding == .protobuf ? encoder.protobuf(batches) : encoder.json(batches)
        result.record(await sender.post(body, itemCount: points, deadline: deadline), items: points)
        return result
    }
}
