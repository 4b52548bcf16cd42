public import CurlHTTP
import OrderedJSON
import Tracing

/// What one export did: spans the receiver took, spans it rejected (OTLP partial success), spans that
/// were not delivered, and why.
public struct OTLPExportResult: Sendable, Equatable {
    /// Spans in requests the receiver answered 2xx, rejected ones included.
    public var deliveredSpans = 0
    /// Spans the receiver reported rejected in `partialSuccess.rejectedSpans`.
    public var rejectedSpans: Int64 = 0
    /// The receivers' `partialSuccess.errorMessage`s, in order, without repeats.
    public var rejectionMessages: [String] = []
    /// Spans in requests that failed for good.
    public var failedSpans = 0
    /// Requests sent, retries included.
    public var attempts = 0
    /// The first request that failed for good, if any.
    public var failure: TracingError?

    public init() {}

    /// Spans delivered and not rejected.
    public var acceptedSpans: Int { max(0, deliveredSpans - Int(rejectedSpans)) }

    /// Adds another export's counts to these.
    public mutating func merge(_ other: OTLPExportResult) {
        deliveredSpans += other.deliveredSpans
        rejectedSpans += other.rejectedSpans
        for message in other.rejectionMessages where !rejectionMessages.contains(message) {
            rejectionMessages.append(message)
        }
        failedSpans += other.failedSpans
        attempts += other.attempts
        if failure == nil { failure = other.failure }
    }
}

/// Sends finished spans to an OTLP/HTTP receiver: `POST /v1/traces` with `application/json` bodies, each
/// one ``OTLPJSONEncoder`` line (under 1 MiB), retried per ``OTLPRetryPolicy``.
///
/// Every attempt is an HTTP client span (``HTTPClientTracing``) started at the top level and marked with
/// ``HTTPClientTracing/exportMarkerKey``, so a push is visible in `trace list --kind http`, while the
/// continuous exporter skips those spans instead of exporting its own exports forever. The requests carry
/// no `traceparent`: they belong to no trace the receiver should continue.
public final class OTLPHTTPExporter: Sendable {
    /// Where requests go.
    public let endpoint: OTLPEndpoint
    /// How refusals are retried.
    public let policy: OTLPRetryPolicy
    /// Connect, idle and total limits of each request.
    public let timeouts: HTTPTimeouts
    private let encoder: OTLPJSONEncoder
    private let client: HTTPClient

    /// An exporter with its own HTTP client; call ``shutdown()`` when done.
    public init(
        endpoint: OTLPEndpoint, scope: InstrumentationScope, policy: OTLPRetryPolicy = OTLPRetryPolicy(),
        timeouts: HTTPTimeouts = HTTPTimeouts(connect: .seconds(5), idle: .seconds(15), total: .seconds(30)),
        userAgent: String = "hostscope"
    ) {
        self.endpoint = endpoint
        self.policy = policy
        self.timeouts = timeouts
        encoder = OTLPJSONEncoder(scope: scope)
        // No additionalHeaders hook: export requests must not carry a traceparent.
        client = HTTPClient(configuration: HTTPClient.Configuration(userAgent: userAgent))
    }

    /// Stops the HTTP client; exports still running fail.
    public func shutdown() async {
        await client.shutdown()
    }

    /// Sends `spans` (as many requests as their lines need) and reports what became of them. Never throws:
    /// a failure is in the result, and later requests are not attempted once one failed for good, since
    /// the receiver is unlikely to take them either.
    ///
    /// - Parameters:
    ///   - droppedSpanCount: the cumulative dropped-span count to carry as a scope attribute.
    ///   - deadline: no retry starts a wait that would end after it.
    public func export(
        _ spans: some Collection<FinishedSpan>, droppedSpanCount: UInt64? = nil,
        deadline: ContinuousClock.Instant? = nil
    ) async -> OTLPExportResult {
        var lines: [(body: [UInt8], spans: Int)] = []
        encoder.encodeCounted(spans, droppedSpanCount: droppedSpanCount) { line, count in
            lines.append((line, count))
        }
        var result = OTLPExportResult()
        for line in lines {
            if result.failure != nil {
                result.failedSpans += line.spans
                continue
            }
            let outcome = await post(line.body, spanCount: line.spans, deadline: deadline)
            result.attempts += outcome.attempts
            switch outcome.result {
            case .success(let partial):
                result.deliveredSpans += line.spans
                result.rejectedSpans += partial.rejected
                if let message = partial.message, !message.isEmpty, !result.rejectionMessages.contains(message) {
                    result.rejectionMessages.append(message)
                }
            case .failure(let error):
                result.failedSpans += line.spans
                result.failure = error
            }
        }
        return result
    }

    private struct PartialSuccess {
        var rejected: Int64 = 0
        var message: String?
    }

    private func post(
        _ body: [UInt8], spanCount: Int, deadline: ContinuousClock.Instant?
    ) async -> (result: Result<PartialSuccess, TracingError>, attempts: Int) {
        var headers = HTTPHeaders()
        for header in endpoint.headers { headers.add(name: header.name, value: header.value) }
        headers.replaceOrAdd(name: "Content-Type", value: "application/json")
        let request = HTTPRequest(
            method: .post, url: endpoint.tracesURL, headers: headers, body: body, timeouts: timeouts)
        let place = endpoint.redactedURL
        var attempt = 0
        while true {
            attempt += 1
            if Task.isCancelled {
                return (
                    .failure(TracingError(code: .exportUnavailable, message: "export to \(place) cancelled")),
                    attempt - 1
                )
            }
            var attributes = [
                Attribute(HTTPClientTracing.exportMarkerKey, .bool(true)),
                Attribute("hostscope.otlp.spans", .int(Int64(spanCount))),
            ]
            if attempt > 1 { attributes.append(Attribute("http.request.resend_count", .int(Int64(attempt - 1)))) }
            let wait: Duration
            let refusal: String
            do {
                let response = try await HTTPClientTracing.execute(
                    request, on: client, maxBodyBytes: 1 << 20, attributes: attributes, context: .topLevel)
                if response.head.isSuccess {
                    return (.success(Self.partialSuccess(response)), attempt)
                }
                let detail = Self.statusMessage(response)
                refusal = "\(place) answered \(response.status)\(detail.map { ": " + $0 } ?? "")"
                guard OTLPRetryPolicy.isRetryable(status: response.status) else {
                    return (
                        .failure(
                            TracingError(
                                code: .exportRejected,
                                message: "the OTLP receiver refused \(spanCount) span(s): \(refusal) (not retried)")),
                        attempt
                    )
                }
                if let asked = response.head.retryAfter() {
                    wait = min(asked, policy.maximumRetryAfter)
                } else {
                    wait = policy.jitter(policy.backoff(afterAttempt: attempt))
                }
            } catch {
                guard Self.isRetryable(error) else {
                    return (
                        .failure(
                            TracingError(
                                code: .exportUnavailable,
                                message: "cannot send spans to \(place): \(error.message)")), attempt
                    )
                }
                refusal = error.message
                wait = policy.jitter(policy.backoff(afterAttempt: attempt))
            }
            let tooLate = deadline.map { ContinuousClock.now + wait > $0 } ?? false
            if attempt >= policy.maximumAttempts || tooLate {
                let why = tooLate ? "the export deadline" : "\(attempt) attempt(s)"
                return (
                    .failure(
                        TracingError(
                            code: .exportUnavailable,
                            message: "could not deliver \(spanCount) span(s) to the OTLP receiver within \(why): "
                                + refusal)), attempt
                )
            }
            do {
                try await policy.sleep(wait)
            } catch {
                return (
                    .failure(TracingError(code: .exportUnavailable, message: "export to \(place) cancelled")), attempt
                )
            }
        }
    }

    static func isRetryable(_ error: HTTPError) -> Bool {
        switch error.code {
        case .resolve, .connect, .timeout, .send, .receive, .closed: true
        default: false
        }
    }

    /// `partialSuccess` of an `ExportTraceServiceResponse` in JSON; an empty, `{}` or `null` one means
    /// everything was accepted.
    private static func partialSuccess(_ response: HTTPResponse) -> PartialSuccess {
        guard !response.body.isEmpty, let value = try? JSONParser.parse(response.bodyText),
            let partial = value["partialSuccess"], !partial.isNull
        else { return PartialSuccess() }
        let rejected = partial["rejectedSpans"].flatMap { $0.int64Value ?? $0.stringValue.flatMap { Int64($0) } } ?? 0
        return PartialSuccess(rejected: rejected, message: partial["errorMessage"]?.stringValue)
    }

    /// The `message` of a `google.rpc.Status` error body, else the start of a text body.
    private static func statusMessage(_ response: HTTPResponse) -> String? {
        guard !response.body.isEmpty else { return nil }
        if let value = try? JSONParser.parse(response.bodyText), let message = value["message"]?.stringValue {
            return message
        }
        let contentType = response.headers["Content-Type"]?.lowercased() ?? ""
        guard contentType.hasPrefix("text/") || contentType.contains("json") else { return nil }
        let text = response.bodyText
        return text.utf8.count > 300 ? SpanLimits.truncate(text, toBytes: 300) : text
    }
}
