import AgentTracing
import CurlHTTP
import Foundation
import Synchronization
import TestSupport
import Testing
import Tracing
import ValueFormats

/// The OTLP/HTTP exporter against the real receiver in `Scripts/otlp_receiver.py`, which decodes every
/// body with opentelemetry-proto and can be told to refuse requests.
@Suite("OTLP/HTTP exporter", .serialized)
struct OTLPHTTPExporterTests {
    /// Records the waits a policy asks for instead of sleeping.
    final class Waits: Sendable {
        private let recorded = Lock<[Duration]>([])
        var all: [Duration] { recorded.withLock { $0 } }

        func policy(maximumAttempts: Int = 5) -> OTLPRetryPolicy {
            OTLPRetryPolicy(
                maximumAttempts: maximumAttempts, initialBackoff: .seconds(1), maximumBackoff: .seconds(8),
                jitter: { $0 }, sleep: { [self] wait in recorded.withLock { $0.append(wait) } })
        }
    }

    static func spans(_ count: Int = 3) -> [FinishedSpan] {
        let (tracer, _) = SampleTraces.tracer()
        tracer.withSpan("collect snapshot") { root in
            root.setAttribute("hostscope.host", "web1")
            for index in 0..<(count - 1) {
                tracer.withSpan("ssh exec") { exec in exec.setAttribute("process.exit.code", index) }
            }
        }
        return tracer.finishedSpans()
    }

    static func withReceiver(
        arguments: [String] = [], _ body: (PythonServer, HTTPClient) async throws -> Void
    ) async throws {
        try await withPythonServer("otlp_receiver.py", arguments: arguments) { server in
            try await withHTTPClient { client in try await body(server, client) }
        }
    }

    static func received(_ server: PythonServer, _ client: HTTPClient) async throws -> [String: Any] {
        let body = try await client.execute(HTTPRequest(url: server.baseURL + "/received")).body
        return try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] ?? [:]
    }

    static func control(_ server: PythonServer, _ client: HTTPClient, _ what: String, _ json: String) async throws {
        let response = try await client.execute(.postJSON(url: server.baseURL + "/control/" + what, json: json))
        #expect(response.status == 200)
    }

    static func exporter(
        _ server: PythonServer, policy: OTLPRetryPolicy, encoding: OTLPEncoding = .protobuf,
        compression: OTLPCompression = .gzip
    ) throws -> OTLPHTTPExporter {
        OTLPHTTPExporter(
            endpoint: try OTLPEndpoint(server.baseURL), scope: SampleTraces.scope, encoding: encoding,
            compression: compression, policy: policy)
    }

    static let wireFormats: [(OTLPEncoding, OTLPCompression)] = [
        (.protobuf, .gzip), (.protobuf, .none), (.json, .gzip), (.json, .none),
    ]

    @Test(
        "Spans are posted to /v1/traces in every encoding and compression, decoded by the receiver, with no traceparent",
        arguments: wireFormats)
    func delivers(encoding: OTLPEncoding, compression: OTLPCompression) async throws {
        try await Self.withReceiver { server, client in
            let waits = Waits()
            let exporter = try Self.exporter(
                server, policy: waits.policy(), encoding: encoding, compression: compression)
            let spans = Self.spans()
            let result = await exporter.export(spans, droppedSpanCount: 7)
            await exporter.shutdown()
            #expect(result.failure == nil)
            #expect(result.accepted == 3)
            #expect(result.attempts == 1)
            #expect(waits.all.isEmpty)
            let received = try await Self.received(server, client)
            #expect(received["span_count"] as? Int == 3)
            let request = try #require((received["requests"] as? [[String: Any]])?.first)
            #expect(request["content_type"] as? String == encoding.contentType)
            #expect((request["content_encoding"] as? String) == (compression == .gzip ? "gzip" : nil))
            #expect(request["body_bytes"] as? Int == result.bytesSent)
            #expect(request["traceparent"] is NSNull)
            let scope = ((request["resource_spans"] as? [[String: Any]])?.first?["scope_spans"] as? [[String: Any]])?
                .first
            let names = (scope?["spans"] as? [[String: Any]])?.compactMap { $0["name"] as? String }
            #expect(Set(names ?? []) == ["collect snapshot", "ssh exec"])
            let ids = (scope?["spans"] as? [[String: Any]])?.compactMap { $0["span_id"] as? String }
            #expect(Set(ids ?? []) == Set(spans.map(\.spanID.hex)))
        }
    }

    @Test("A 429 with Retry-After is retried after exactly the time the receiver asked for")
    func honoursRetryAfter() async throws {
        try await Self.withReceiver(arguments: ["--fail", "429:1:3"]) { server, client in
            let waits = Waits()
            let exporter = try Self.exporter(server, policy: waits.policy())
            let result = await exporter.export(Self.spans())
            await exporter.shutdown()
            #expect(result.failure == nil)
            #expect(result.accepted == 3)
            #expect(result.attempts == 2)
            #expect(waits.all == [.seconds(3)])
            let attempts = try await Self.received(server, client)["attempts"] as? [[String: Any]] ?? []
            #expect(attempts.compactMap { $0["status"] as? Int } == [429, 200])
        }
    }

    @Test("503 twice, then success: exponential backoff between attempts")
    func backsOffOn503() async throws {
        try await Self.withReceiver(arguments: ["--fail", "503:2"]) { server, client in
            let waits = Waits()
            let exporter = try Self.exporter(server, policy: waits.policy())
            let result = await exporter.export(Self.spans())
            await exporter.shutdown()
            #expect(result.failure == nil)
            #expect(result.attempts == 3)
            #expect(waits.all == [.seconds(1), .seconds(2)])
            #expect(try await Self.received(server, client)["span_count"] as? Int == 3)
        }
    }

    @Test("A 400 is not retried: the batch fails at once with the receiver's message")
    func doesNotRetry400() async throws {
        try await Self.withReceiver(arguments: ["--fail", "400:1"]) { server, client in
            let waits = Waits()
            let exporter = try Self.exporter(server, policy: waits.policy())
            let result = await exporter.export(Self.spans())
            await exporter.shutdown()
            let failure = try #require(result.failure)
            #expect(failure.code == .exportRejected)
            #expect(failure.message.contains("400"))
            #expect(failure.message.contains("injected 400"))
            #expect(result.failed == 3)
            #expect(result.attempts == 1)
            #expect(waits.all.isEmpty)
            let attempts = try await Self.received(server, client)["attempts"] as? [[String: Any]] ?? []
            #expect(attempts.count == 1)
        }
    }

    @Test("Partial success is reported: rejected spans counted, the receiver's message kept")
    func reportsPartialSuccess() async throws {
        try await Self.withReceiver { server, client in
            try await Self.control(
                server, client, "partial", #"{"rejected_spans": 2, "error_message": "span too old"}"#)
            let exporter = try Self.exporter(server, policy: Waits().policy())
            let result = await exporter.export(Self.spans())
            await exporter.shutdown()
            #expect(result.failure == nil)
            #expect(result.delivered == 3)
            #expect(result.rejected == 2)
            #expect(result.accepted == 1)
            #expect(result.rejectionMessages == ["span too old"])
        }
    }

    @Test("A receiver that is down fails after the attempts run out, with a message naming it")
    func receiverDown() async throws {
        let port = try await withPythonServer("otlp_receiver.py") { server in server.port }
        let waits = Waits()
        let exporter = OTLPHTTPExporter(
            endpoint: try OTLPEndpoint("http://127.0.0.1:\(port)"), scope: SampleTraces.scope,
            policy: waits.policy(maximumAttempts: 3))
        let result = await exporter.export(Self.spans())
        await exporter.shutdown()
        let failure = try #require(result.failure)
        #expect(failure.code == .exportUnavailable)
        #expect(failure.message.contains("3 attempt(s)"))
        #expect(result.failed == 3)
        #expect(waits.all == [.seconds(1), .seconds(2)])
    }

    @Test("A deadline stops retrying before a wait that would end after it")
    func deadlineStopsRetries() async throws {
        try await Self.withReceiver(arguments: ["--fail", "503:5:30"]) { server, client in
            let waits = Waits()
            let exporter = try Self.exporter(server, policy: waits.policy())
            let result = await exporter.export(Self.spans(), deadline: .now + .seconds(5))
            await exporter.shutdown()
            #expect(result.failure?.message.contains("deadline") == true)
            #expect(waits.all.isEmpty)
            #expect(result.attempts == 1)
        }
    }

    @Test("The continuous exporter drops and counts spans beyond its queue, then reports the count on export")
    func boundedQueue() async throws {
        let lines = NSTemporaryDirectory() + "hostscope-queue-\(UUID().uuidString).jsonl"
        defer { try? FileManager.default.removeItem(atPath: lines) }
        try await Self.withReceiver(arguments: ["--ndjson", lines]) { server, client in
            let exporter = try Self.exporter(server, policy: Waits().policy())
            let batch = OTLPBatchExporter(
                exporter: exporter,
                configuration: OTLPBatchExporter.Configuration(queueCapacity: 4, batchSize: 100, interval: .seconds(60))
            )
            let (tracer, _) = SampleTraces.tracer(sinks: [batch])
            for index in 0..<10 {
                tracer.withSpan("span \(index)") { _ in }
            }
            // Export spans of an export request are never queued.
            tracer.withSpan("POST") { span in span.setAttribute(HTTPClientTracing.exportMarkerKey, true) }
            #expect(batch.queuedSpanCount == 4)
            batch.start()
            let statistics = await batch.shutdown(timeout: .seconds(10))
            #expect(statistics.dropped == 6)
            #expect(statistics.exported == 4)
            #expect(statistics.failed == 0)
            let received = try await Self.received(server, client)
            #expect(received["span_count"] as? Int == 4)
            let request = try #require((received["requests"] as? [[String: Any]])?.first)
            let spans =
                (((request["resource_spans"] as? [[String: Any]])?.first?["scope_spans"] as? [[String: Any]])?
                    .first?["spans"] as? [[String: Any]]) ?? []
            #expect(spans.compactMap { $0["name"] as? String } == ["span 0", "span 1", "span 2", "span 3"])
            // The receiver's own re-encoding of the request keeps the scope attribute with the count.
            let line = try String(contentsOfFile: lines, encoding: .utf8)
            #expect(line.contains(#"{"key":"hostscope.tracer.dropped_spans","value":{"intValue":"6"}}"#))
        }
    }

    @Test("The continuous exporter sends a batch when it fills, without waiting for its interval")
    func sendsFullBatches() async throws {
        try await Self.withReceiver { server, client in
            let exporter = try Self.exporter(server, policy: Waits().policy())
            let batch = OTLPBatchExporter(
                exporter: exporter,
                configuration: OTLPBatchExporter.Configuration(
                    queueCapacity: 100, batchSize: 5, interval: .seconds(600)))
            batch.start()
            let (tracer, _) = SampleTraces.tracer(sinks: [batch])
            for index in 0..<5 { tracer.withSpan("span \(index)") { _ in } }
            var count = 0
            for _ in 0..<100 {
                count = try await Self.received(server, client)["span_count"] as? Int ?? 0
                if count == 5 { break }
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(count == 5)
            await batch.shutdown(timeout: .seconds(5))
        }
    }

    @Test("Outgoing HTTP carries a traceparent naming the client span of the request")
    func traceparentMatchesSpan() async throws {
        try await Self.withReceiver { server, client in
            let (tracer, _) = SampleTraces.tracer()
            let body = String(decoding: OTLPJSONEncoder(scope: SampleTraces.scope).encode(Self.spans(1)), as: UTF8.self)
            try await withHTTPClient(configuration: HTTPClientTracing.propagatingConfiguration()) { traced in
                try await withTracer(tracer) {
                    try await withSpan("collect snapshot") { _ in
                        let response = try await HTTPClientTracing.execute(
                            .postJSON(url: server.baseURL + "/v1/traces?token=abc", json: body), on: traced)
                        #expect(response.status == 200)
                    }
                }
            }
            let http = try #require(tracer.finishedSpans().first { $0.name == "POST" })
            #expect(http.kind == .client)
            #expect(http.attributes["http.request.method"] == "POST")
            #expect(http.attributes["url.full"]?.stringValue?.contains("token=REDACTED") == true)
            #expect(http.attributes["server.address"] == "127.0.0.1")
            #expect(http.attributes["server.port"] == .int(Int64(server.port)))
            #expect(http.attributes["http.response.status_code"] == 200)
            let request = try #require((try await Self.received(server, client)["requests"] as? [[String: Any]])?.first)
            #expect(request["traceparent"] as? String == "00-\(http.traceID.hex)-\(http.spanID.hex)-01")
        }
    }

    @Test(
        "rotel, a second independent collector, receives the exported spans in every encoding", arguments: wireFormats)
    func rotelReceives(encoding: OTLPEncoding, compression: OTLPCompression) async throws {
        guard let agent = RotelAgent.path else {
            Issue.record("PyPI's rotel is not installed: pip install rotel (Scripts/setup.sh --tests does)")
            return
        }
        let rotel = try RotelAgent.start(agent)
        defer { rotel.stop() }
        let exporter = OTLPHTTPExporter(
            endpoint: try OTLPEndpoint("http://127.0.0.1:\(rotel.port)"), scope: SampleTraces.scope,
            encoding: encoding, compression: compression, policy: Waits().policy())
        let spans = Self.spans()
        let result = await exporter.export(spans)
        await exporter.shutdown()
        #expect(result.failure == nil)
        #expect(result.accepted == 3)
        var output = ""
        for _ in 0..<100 {
            output = rotel.output()
            if spans.allSatisfy({ output.contains($0.spanID.hex) }) { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        for span in spans {
            #expect(output.contains(span.spanID.hex))
        }
        #expect(output.contains("collect snapshot"))
        #expect(output.contains("service.name: Str(hostscope)"))
    }
}
