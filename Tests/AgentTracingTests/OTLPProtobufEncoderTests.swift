import AgentTracing
import CurlHTTP
import Foundation
import TestSupport
import Testing
import Tracing

/// The protobuf encoder checked against the official definitions: the receiver in `Scripts/` decodes bodies
/// with PyPI's opentelemetry-proto and writes each accepted request back as OTLP/JSON, so a protobuf body and a
/// JSON line of the same spans must come out as the same line.
@Suite("OTLP protobuf encoding", .serialized)
struct OTLPProtobufEncoderTests {
    /// SampleTraces' tick and chat turn (every attribute type, events, links, statuses, escapes) plus strings
    /// whose lengths cross one- and two-byte length prefixes and a span past 16 KiB.
    static func spans() -> [FinishedSpan] {
        let (tracer, _) = SampleTraces.tracer()
        SampleTraces.record(into: tracer)
        tracer.withSpan("long strings") { span in
            span.setAttribute("short", String(repeating: "a", count: 127))
            span.setAttribute("medium", String(repeating: "b", count: 128))
            span.setAttribute("long", String(repeating: "c", count: 20_000))
            span.setAttribute("empty", "")
            span.setAttribute("zero", 0)
            span.setAttribute("negative", -1)
            span.setAttribute("false", false)
            span.setAttribute("no strings", .stringArray([]))
            span.addEvent(
                "big event", attributes: [Attribute("payload", .string(String(repeating: "é", count: 9_000)))])
        }
        return tracer.finishedSpans()
    }

    static func exporter(
        _ server: PythonServer, _ encoding: OTLPEncoding, _ compression: OTLPCompression
    ) throws -> OTLPHTTPExporter {
        OTLPHTTPExporter(
            endpoint: try OTLPEndpoint(server.baseURL), scope: SampleTraces.scope, encoding: encoding,
            compression: compression, policy: OTLPRetryPolicy(maximumAttempts: 1))
    }

    static func lines(_ path: String) throws -> [Any] {
        try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map {
            try JSONSerialization.jsonObject(with: Data($0.utf8))
        }
    }

    /// ``spans()`` with every third span recorded by a second process, so that requests hold two resources
    /// whose spans interleave.
    static func spansOfTwoResources() -> [FinishedSpan] {
        var other = SampleTraces.resource.merging([Attribute("host.name", .string("other-host"))])
        other.attributes.append(Attribute("process.pid", .int(4242)))
        return Self.spans().enumerated().map { index, span in
            var span = span
            if index % 3 == 1 { span.resource = other }
            return span
        }
    }

    /// The spans as `trace push` sends them: from the encodings stored with each span.
    static func stored(_ spans: [FinishedSpan]) -> OTLPEncodedSpans {
        var encoded = OTLPEncodedSpans()
        for span in spans {
            let resource = encoded.addResource(OTLPProtobufEncoder.encodedResource(span.resource))
            encoded.append(encodedSpan: OTLPProtobufEncoder.encodedSpan(span), resource: resource)
        }
        return encoded
    }

    @Test("Protobuf bodies, gzip or not, from spans or stored encodings, decode to exactly the JSON encoder's request")
    func protobufMatchesJSON() async throws {
        let file = NSTemporaryDirectory() + "hostscope-protobuf-\(UUID().uuidString).jsonl"
        defer { try? FileManager.default.removeItem(atPath: file) }
        let spans = Self.spansOfTwoResources()
        try await withPythonServer("otlp_receiver.py", arguments: ["--ndjson", file]) { server in
            for (encoding, compression) in [
                (OTLPEncoding.json, OTLPCompression.none), (.protobuf, .gzip), (.protobuf, .none),
            ] {
                let exporter = try Self.exporter(server, encoding, compression)
                let result = await exporter.export(spans, droppedSpanCount: 3)
                await exporter.shutdown()
                #expect(result.failure == nil, "\(encoding) \(compression): \(result.failure?.message ?? "")")
                #expect(result.accepted == spans.count)
            }
            let exporter = try Self.exporter(server, .protobuf, .gzip)
            let result = await exporter.export(Self.stored(spans), droppedSpanCount: 3)
            await exporter.shutdown()
            #expect(result.failure == nil, "stored encodings: \(result.failure?.message ?? "")")
            #expect(result.accepted == spans.count)
        }
        let received = try Self.lines(file)
        try #require(received.count == 4)
        let resources = ((received[0] as? [String: Any])?["resourceSpans"] as? [Any])?.count
        #expect(resources == 2, "the spans of each resource go together")
        for later in received.dropFirst() {
            #expect(
                NSDictionary(dictionary: later as! [String: Any])
                    == NSDictionary(dictionary: received[0] as! [String: Any]))
        }
        if let report = try OTLPValidation.validate(URL(fileURLWithPath: file)) {
            #expect(report.status == 0, "\(report.output)")
        }
    }

    @Test("Bodies are split between spans under the request limit; every span arrives once, a huge one alone")
    func splitsBetweenSpans() async throws {
        let (tracer, _) = SampleTraces.tracer()
        for index in 0..<60 {
            tracer.withSpan("collect snapshot") { root in
                root.setAttribute("hostscope.host", .string("web\(index)"))
                tracer.withSpan("ssh exec") { $0.setAttribute("process.exit.code", 0) }
            }
            if index == 30 {
                tracer.withSpan("huge") { $0.setAttribute("blob", .string(String(repeating: "x", count: 9_000))) }
            }
        }
        let spans = tracer.finishedSpans()
        #expect(Set(spans.map(\.spanID)).count == 121)
        let encoder = OTLPProtobufEncoder(scope: SampleTraces.scope, maximumRequestBytes: 4096)
        var bodies: [(bytes: [UInt8], count: Int)] = []
        encoder.encodeCounted(spans, droppedSpanCount: nil) { bodies.append(($0, $1)) }
        #expect(bodies.count > 4)
        #expect(bodies.reduce(0) { $0 + $1.count } == spans.count)
        for body in bodies where body.count > 1 {
            #expect(body.bytes.count <= 4096)
        }
        #expect(bodies.contains { $0.count == 1 && $0.bytes.count > 9_000 })
        try await withPythonServer("otlp_receiver.py") { server in
            try await withHTTPClient { client in
                for body in bodies {
                    let response = try await client.execute(
                        HTTPRequest(
                            method: .post, url: server.baseURL + "/v1/traces",
                            headers: ["Content-Type": "application/x-protobuf"], body: body.bytes))
                    #expect(response.status == 200)
                }
                let received = try await OTLPHTTPExporterTests.received(server, client)
                let ids = (received["requests"] as? [[String: Any]] ?? []).flatMap { request in
                    ((request["resource_spans"] as? [[String: Any]]) ?? []).flatMap { resource in
                        ((resource["scope_spans"] as? [[String: Any]]) ?? []).flatMap { scope in
                            ((scope["spans"] as? [[String: Any]]) ?? []).compactMap { $0["span_id"] as? String }
                        }
                    }
                }
                #expect(ids.sorted() == spans.map(\.spanID.hex).sorted())
            }
        }
    }

    @Test("Stored encodings give the very bodies the spans give, split at the same places")
    func storedEncodingsGiveTheSameBodies() {
        let spans = Self.spansOfTwoResources()
        for limit in [1024, 4096, 64 << 10, 4 << 20] {
            let encoder = OTLPProtobufEncoder(scope: SampleTraces.scope, maximumRequestBytes: limit)
            var fromSpans: [([UInt8], Int)] = []
            encoder.encodeCounted(spans, droppedSpanCount: 7) { fromSpans.append(($0, $1)) }
            var fromStored: [([UInt8], Int)] = []
            encoder.encodeCounted(Self.stored(spans), droppedSpanCount: 7) { fromStored.append(($0, $1)) }
            #expect(fromStored.map(\.0) == fromSpans.map(\.0), "limit \(limit)")
            #expect(fromStored.map(\.1) == fromSpans.map(\.1), "limit \(limit)")
            #expect(fromStored.reduce(0) { $0 + $1.1 } == spans.count)
        }
    }

    @Test("A stored resource merged with the user's attributes is the encoding of the merged resource")
    func storedResourceMerging() {
        let resource = SampleTraces.resource
        let cases: [[Attribute]] = [
            [],
            [Attribute("service.name", .string("fleet-watch"))],
            [Attribute("deployment.environment", .string("staging"))],
            [
                Attribute("openinference.project.name", .string("ops")), Attribute("host.name", .string("renamed")),
                Attribute("service.name", .string("first")), Attribute("service.name", .string("second")),
                Attribute("count", .int(3)), Attribute("ratio", .doubleArray([0.5, 1])),
            ],
        ]
        for overrides in cases {
            #expect(
                OTLPProtobufEncoder.mergingResource(OTLPProtobufEncoder.encodedResource(resource), overrides)
                    == OTLPProtobufEncoder.encodedResource(resource.merging(overrides)), "\(overrides)")
        }
        let empty = TraceResource(attributes: [])
        #expect(
            OTLPProtobufEncoder.mergingResource([], [Attribute("a", .bool(true))])
                == OTLPProtobufEncoder.encodedResource(empty.merging([Attribute("a", .bool(true))])))
        #expect(OTLPProtobufEncoder.mergingResource([0x0a, 0x05, 0x01], [Attribute("a", .bool(true))]) == nil)
    }

    @Test("An exporter set to JSON refuses spans encoded as protobuf instead of sending them mislabelled")
    func encodedSpansAreNotSentAsJSON() async throws {
        let exporter = OTLPHTTPExporter(
            endpoint: try OTLPEndpoint("http://127.0.0.1:1"), scope: SampleTraces.scope, encoding: .json)
        let result = await exporter.export(Self.stored(OTLPHTTPExporterTests.spans()))
        await exporter.shutdown()
        #expect(result.attempts == 0)
        #expect(result.failed == OTLPHTTPExporterTests.spans().count)
        #expect(result.failure?.code == .invalidSetting)
    }

    @Test("A receiver refusing the body's type with 415 is reported with the other encoding to try")
    func unsupportedMediaTypeSaysWhatToTry() async throws {
        try await withPythonServer("otlp_receiver.py", arguments: ["--fail", "415:1"]) { server in
            let exporter = try Self.exporter(server, .protobuf, .gzip)
            let result = await exporter.export(OTLPHTTPExporterTests.spans())
            await exporter.shutdown()
            let failure = try #require(result.failure)
            #expect(failure.code == .exportRejected)
            #expect(failure.message.contains("answered 415"))
            #expect(failure.message.hasSuffix("this receiver may take only OTLP/JSON: try --encoding json"))
        }
    }
}
