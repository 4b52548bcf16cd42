import CurlHTTP
import Gzip
import OrderedJSON
import Tracing

/// Posts encoded OTLP request bodies of one signal to its endpoint, compressing them as configured, and
/// retries per the ``OTLPRetryPolicy``: the transport both OTLP/HTTP exporters share.
///
/// Every attempt is an HTTP client span (``HTTPClientTracing``) started at the top level and marked with
/// ``HTTPClientTracing/exportMarkerKey``, so a push is visible in `trace list --kind http` while exporters skip
/// those spans instead of exporting their own exports. The requests carry no `traceparent`: they belong to no
/// trace the receiver should continue.
final class OTLPHTTPSender: Sendable {
    let endpoint: OTLPEndpoint
    let policy: OTLPRetryPolicy
    let timeouts: HTTPTimeouts
    let encoding: OTLPEncoding
    let compression: OTLPCompression
    private let client: HTTPClient

    /// What a receiver said it did not take (OTLP partial success).
    struct PartialSuccess {
        var rejected: Int64 = 0
        var message: String?
    }

    /// What became of one body: the receiver's answer or the failure, the requests it took, and the size of
    /// the body as sent.
    struct Outcome {
        var result: Result<PartialSuccess, TracingError>
        var attempts: Int
        var wireBytes: Int
    }

    init(
        endpoint: OTLPEndpoint, encoding: OTLPEncoding, compression: OTLPCompression, policy: OTLPRetryPolicy,
        timeouts: HTTPTimeouts, userAgent: String
    ) {
        self.endpoint = endpoint
        self.encoding = encoding
        self.compression = compression
        self.policy = policy
        self.timeouts = timeouts
        // No additionalHeaders hook: export requests must not carry a traceparent.
        client = HTTPClient(configuration: HTTPClient.Configuration(userAgent: userAgent))
    }

    func shutdown() async {
        await client.shutdown()
    }

    /// Posts `body` (encoded, not yet compressed), holding `itemCount` spans or data points.
    func post(_ body: [UInt8], itemCount: Int, deadline: ContinuousClock.Instant?) async -> Outcome {
        var headers = HTTPHeaders()
        for header in endpoint.headers { headers.add(name: header.name, value: header.value) }
        headers.replaceOrAdd(name: "Content-Type", value: encoding.contentType)
        var wire = body
        if compression == .gzip {
            wire = Gzip.compress(body)
            headers.replaceOrAdd(name: "Content-Encoding", value: "gzip")
        }
        let request = HTTPRequest(method: .post, url: endpoint.url, headers: headers, body: wire, timeouts: timeouts)
        let place = endpoint.redactedURL
        let items = "\(itemCount) \(endpoint.signal.items)"
        let size = wire.count
        func outcome(_ result: Result<PartialSuccess, TracingError>, _ attempts: Int) -> Outcome {
            Outcome(result: result, attempts: attempts, wireBytes: size)
        }
        var attempt = 0
        while true {
            attempt += 1
            if Task.isCancelled {
                return outcome(
                    .failure(TracingError(code: .exportUnavailable, message: "export to \(place) cancelled")),
                    attempt - 1
                )
            }
            var attributes = [
                Attribute(HTTPClientTracing.exportMarkerKey, .bool(true)),
                Attribute("hostscope.otlp.signal", .string(endpoint.signal.rawValue)),
                Attribute("hostscope.otlp.items", .int(Int64(itemCount))),
                Attribute("http.request.body.size", .int(Int64(wire.count))),
            ]
            if attempt > 1 { attributes.append(Attribute("http.request.resend_count", .int(Int64(attempt - 1)))) }
            let wait: Duration
            let refusal: String
            do {
                let response = try await HTTPClientTracing.execute(
                    request, on: client, maxBodyBytes: 1 << 20, attributes: attributes, context: .topLevel)
                if response.head.isSuccess {
                    return outcome(.success(partialSuccess(response)), attempt)
                }
                let detail = Self.statusMessage(response)
                refusal = "\(place) answered \(response.status)\(detail.map { ": " + $0 } ?? "")"
                guard OTLPRetryPolicy.isRetryable(status: response.status) else {
                    return outcome(
                        .failure(
                            TracingError(
                                code: .exportRejected,
                                message: "the OTLP receiver refused \(items): \(refusal) (not retried)"
                                    + Self.hint(status: response.status, encoding: encoding))),
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
                    return outcome(
                        .failure(
                            TracingError(
                                code: .exportUnavailable, message: "cannot send \(items) to \(place): \(error.message)")
                        ),
                        attempt
                    )
                }
                refusal = error.message
                wait = policy.jitter(policy.backoff(afterAttempt: attempt))
            }
            let tooLate = deadline.map { ContinuousClock.now + wait > $0 } ?? false
            if attempt >= policy.maximumAttempts || tooLate {
                let why = tooLate ? "the export deadline" : "\(attempt) attempt(s)"
                return outcome(
                    .failure(
                        TracingError(
                            code: .exportUnavailable,
                            message: "could not deliver \(items) to the OTLP receiver within \(why): " + refusal)),
                    attempt
                )
            }
            do {
                try await policy.sleep(wait)
            } catch {
                return outcome(
                    .failure(TracingError(code: .exportUnavailable, message: "export to \(place) cancelled")), attempt
                )
            }
        }
    }

    /// What to try when a receiver refuses the encoding: the other one.
    private static func hint(status: Int, encoding: OTLPEncoding) -> String {
        guard status == 415 else { return "" }
        return encoding == .protobuf
            ? "; this receiver may take only OTLP/JSON: try --encoding json" : "; try the default --encoding protobuf"
    }

    static func isRetryable(_ error: HTTPError) -> Bool {
        switch error.code {
        case .resolve, .connect, .timeout, .send, .receive, .closed: true
        default: false
        }
    }

    /// The `partialSuccess` of an export response, protobuf or JSON by its `Content-Type`; an empty body, `{}`
    /// or `null` means everything was accepted. A body that cannot be read is taken as full success: the
    /// receiver said 2xx.
    private func partialSuccess(_ response: HTTPResponse) -> PartialSuccess {
        guard !response.body.isEmpty else { return PartialSuccess() }
        let contentType = response.headers["Content-Type"]?.lowercased() ?? ""
        if contentType.contains("protobuf") {
            return (try? Self.protobufPartialSuccess(response.body[...])) ?? PartialSuccess()
        }
        guard let value = try? JSONParser.parse(response.bodyText), let partial = value["partialSuccess"],
            !partial.isNull
        else { return PartialSuccess() }
        let key = endpoint.signal == .traces ? "rejectedSpans" : "rejectedDataPoints"
        let rejected = partial[key].flatMap { $0.int64Value ?? $0.stringValue.flatMap { Int64($0) } } ?? 0
        return PartialSuccess(rejected: rejected, message: partial["errorMessage"]?.stringValue)
    }

    /// `Export{Trace,Metrics}ServiceResponse { partial_success = 1 { rejected = 1; error_message = 2 } }`.
    static func protobufPartialSuccess(_ body: ArraySlice<UInt8>) throws(ProtobufReader.Malformed) -> PartialSuccess {
        var result = PartialSuccess()
        var response = ProtobufReader(body)
        while let field = try response.next() {
            guard case .lengthDelimited(1, let partial) = field else { continue }
            var reader = ProtobufReader(partial)
            while let inner = try reader.next() {
                switch inner {
                case .varint(1, let count): result.rejected = Int64(bitPattern: count)
                case .lengthDelimited(2, let text): result.message = String(decoding: text, as: UTF8.self)
                default: continue
                }
            }
        }
        return result
    }

    /// The `message` of a `google.rpc.Status` error body (JSON or protobuf), else the start of a text body.
    static func statusMessage(_ response: HTTPResponse) -> String? {
        guard !response.body.isEmpty else { return nil }
        let contentType = response.headers["Content-Type"]?.lowercased() ?? ""
        if contentType.contains("protobuf") {
            var reader = ProtobufReader(response.body[...])
            while let field = try? reader.next() {
                if case .lengthDelimited(2, let text) = field { return String(decoding: text, as: UTF8.self) }
            }
            return nil
        }
        if let value = try? JSONParser.parse(response.bodyText), let message = value["message"]?.stringValue {
            return message
        }
        guard contentType.hasPrefix("text/") || contentType.contains("json") else { return nil }
        let text = response.bodyText
        return text.utf8.count > 300 ? SpanLimits.truncate(text, toBytes: 300) : text
    }
}
