public import CurlHTTP
import Tracing

/// What one export did: items (spans or data points) the receiver took, items it rejected (OTLP partial
/// success), items that were not delivered, and why.
public struct OTLPExportResult: Sendable, Equatable {
    /// Items in requests the receiver answered 2xx, rejected ones included.
    public var delivered = 0
    /// Items the receiver reported rejected in `partialSuccess`.
    public var rejected: Int64 = 0
    /// The receivers' `partialSuccess.errorMessage`s, in order, without repeats.
    public var rejectionMessages: [String] = []
    /// Items in requests that failed for good.
    public var failed = 0
    /// Requests sent, retries included.
    public var attempts = 0
    /// Bytes of request bodies as sent (compressed when compression is on), retries included.
    public var bytesSent = 0
    /// The first request that failed for good, if any.
    public var failure: TracingError?

    public init() {}

    /// Items delivered and not rejected.
    public var accepted: Int { max(0, delivered - Int(rejected)) }

    /// Adds another export's counts to these.
    public mutating func merge(_ other: OTLPExportResult) {
        delivered += other.delivered
        rejected += other.rejected
        for message in other.rejectionMessages where !rejectionMessages.contains(message) {
            rejectionMessages.append(message)
        }
        failed += other.failed
        attempts += other.attempts
        bytesSent += other.bytesSent
        if failure == nil { failure = other.failure }
    }

    /// Records the outcome of one request holding `items` items.
    mutating func record(_ outcome: OTLPHTTPSender.Outcome, items: Int) {
        attempts += outcome.attempts
        bytesSent += outcome.wireBytes * outcome.attempts
        switch outcome.result {
        case .success(let partial):
            delivered += items
            rejected += partial.rejected
            if let message = partial.message, !message.isEmpty, !rejectionMessages.contains(message) {
                rejectionMessages.append(message)
            }
        case .failure(let error):
            failed += items
            failure = error
        }
    }
}

/// Sends finished spans to an OTLP/HTTP receiver: `POST …/v1/traces` with binary protobuf bodies
/// (``OTLPProtobufEncoder``, each under 4 MiB) by default or OTLP/JSON ones (``OTLPJSONEncoder``, each one line
/// under 1 MiB), gzip-compressed by default, retried per ``OTLPRetryPolicy``.
///
/// Every attempt is an HTTP client span marked with ``HTTPClientTracing/exportMarkerKey`` (see
/// `OTLPHTTPSender`), so exporters and `trace push` leave those spans out instead of exporting their own
/// exports.
public final class OTLPHTTPExporter: Sendable {
    /// Where requests go.
    public var endpoint: OTLPEndpoint { sender.endpoint }
    /// How refusals are retried.
    public var policy: OTLPRetryPolicy { sender.policy }
    /// Connect, idle and total limits of each request.
    public var timeouts: HTTPTimeouts { sender.timeouts }
    /// How bodies are encoded.
    public var encoding: OTLPEncoding { sender.encoding }
    /// How bodies are compressed.
    public var compression: OTLPCompression { sender.compression }
    private let jsonEncoder: OTLPJSONEncoder
    private let protobufEncoder: OTLPProtobufEncoder
    private let sender: OTLPHTTPSender

    /// The request limits an OTLP/HTTP exporter uses unless told otherwise.
    public static let defaultTimeouts = HTTPTimeouts(connect: .seconds(5), idle: .seconds(15), total: .seconds(30))

    /// An exporter with its own HTTP client; call ``shutdown()`` when done.
    public init(
        endpoint: OTLPEndpoint, scope: InstrumentationScope, encoding: OTLPEncoding = .protobuf,
        compression: OTLPCompression = .gzip, policy: OTLPRetryPolicy = OTLPRetryPolicy(),
        timeouts: HTTPTimeouts = OTLPHTTPExporter.defaultTimeouts, userAgent: String = "hostscope"
    ) {
        jsonEncoder = OTLPJSONEncoder(scope: scope)
        protobufEncoder = OTLPProtobufEncoder(scope: scope)
        sender = OTLPHTTPSender(
            endpoint: endpoint, encoding: encoding, compression: compression, policy: policy, timeouts: timeouts,
            userAgent: userAgent)
    }

    /// Stops the HTTP client; exports still running fail.
    public func shutdown() async {
        await sender.shutdown()
    }

    /// Sends `spans` (as many requests as their size needs) and reports what became of them. Never throws: a
    /// failure is in the result, and later requests are not attempted once one failed for good, since the
    /// receiver is unlikely to take them either.
    ///
    /// - Parameters:
    ///   - droppedSpanCount: the cumulative dropped-span count to carry as a scope attribute.
    ///   - deadline: no retry starts a wait that would end after it.
    public func export(
        _ spans: some Collection<FinishedSpan>, droppedSpanCount: UInt64? = nil,
        deadline: ContinuousClock.Instant? = nil
    ) async -> OTLPExportResult {
        var bodies: [(body: [UInt8], spans: Int)] = []
        switch encoding {
        case .protobuf:
            protobufEncoder.encodeCounted(spans, droppedSpanCount: droppedSpanCount) { bodies.append(($0, $1)) }
        case .json:
            jsonEncoder.encodeCounted(spans, droppedSpanCount: droppedSpanCount) { line, count in
                // The newline ends a line of a file; a request body needs none.
                bodies.append((Array(line.dropLast()), count))
            }
        }
        return await send(bodies, deadline: deadline)
    }

    /// Sends spans already encoded as protobuf (what `trace push` reads from the database), as many requests as
    /// their size needs, and reports what became of them, like ``export(_:droppedSpanCount:deadline:)``.
    ///
    /// Encoded spans go only as protobuf: an exporter whose ``encoding`` is JSON sends nothing and reports them
    /// failed (its caller sends ``FinishedSpan``s instead).
    public func export(
        _ spans: OTLPEncodedSpans, droppedSpanCount: UInt64? = nil, deadline: ContinuousClock.Instant? = nil
    ) async -> OTLPExportResult {
        guard encoding == .protobuf else {
            var result = OTLPExportResult()
            result.failed = spans.count
            result.failure = TracingError(
                code: .invalidSetting, message: "spans encoded as protobuf cannot be sent as OTLP/JSON")
            return result
        }
        var bodies: [(body: [UInt8], spans: Int)] = []
        protobufEncoder.encodeCounted(spans, droppedSpanCount: droppedSpanCount) { bodies.append(($0, $1)) }
        return await send(bodies, deadline: deadline)
    }

    /// Posts the bodies in order; once one fails for good, the rest are counted failed without being sent.
    private func send(_ bodies: [(body: [UInt8], spans: Int)], deadline: ContinuousClock.Instant?) async
        -> OTLPExportResult
    {
        var result = OTLPExportResult()
        for body in bodies {
            if result.failure != nil {
                result.failed += body.spans
                continue
            }
            let outcome = await sender.post(body.body, itemCount: body.spans, deadline: deadline)
            result.record(outcome, items: body.spans)
        }
        return result
    }
}
