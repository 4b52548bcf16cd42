import CurlHTTP
import Foundation
import TestSupport
import Testing

/// The OTLP receiver in `Scripts/`, driven through CurlHTTP as an exporter would drive a collector.
@Suite("OTLP receiver script")
struct OTLPReceiverTests {
    static let traceID = "0af7651916cd43dd8448eb211c80319c"
    static let rootSpanID = "b7ad6b7169203331"
    static let childSpanID = "00f067aa0ba902b7"

    /// Two spans, parent and child, as OTLP/JSON: hex ids, 64-bit integers as strings, enums as integers.
    static let twoSpans = """
        {"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"hostscope"}},\
        {"key":"host.name","value":{"stringValue":"web1"}}]},"scopeSpans":[{"scope":{"name":"hostscope",\
        "version":"0.1.0"},"spans":[{"traceId":"\(traceID)","spanId":"\(rootSpanID)","name":"snapshot web1",\
        "kind":1,"startTimeUnixNano":"1763750000000000000","endTimeUnixNano":"1763750000250000000"},\
        {"traceId":"\(traceID)","spanId":"\(childSpanID)","parentSpanId":"\(rootSpanID)","name":"GET",\
        "kind":3,"startTimeUnixNano":"1763750000100000000","endTimeUnixNano":"1763750000200000000",\
        "attributes":[{"key":"http.response.status_code","value":{"intValue":"200"}},\
        {"key":"url.full","value":{"stringValue":"https://example.com/x"}}],\
        "events":[{"timeUnixNano":"1763750000150000000","name":"retry"}]}]}]}]}
        """

    static func withReceiver(
        arguments: [String] = [], _ body: (PythonServer, HTTPClient, String) async throws -> Void
    ) async throws {
        try await withPythonServer("otlp_receiver.py", arguments: arguments) { server in
            try await withHTTPClient { client in
                try await body(server, client, server.baseURL + "/v1/traces")
            }
        }
    }

    static func received(_ server: PythonServer, _ client: HTTPClient) async throws -> [String: Any] {
        try jsonObject(try await client.execute(HTTPRequest(url: server.baseURL + "/received")).body)
    }

    static func control(_ server: PythonServer, _ client: HTTPClient, _ what: String, _ json: String) async throws {
        let response = try await client.execute(.postJSON(url: server.baseURL + "/control/" + what, json: json))
        #expect(response.status == 200)
    }

    @Test("Valid OTLP/JSON is answered with {} and its spans, attributes and traceparent are recorded")
    func acceptsJSON() async throws {
        try await Self.withReceiver { server, client, endpoint in
            let traceparent = "00-\(Self.traceID)-\(Self.rootSpanID)-01"
            let response = try await client.execute(
                .postJSON(
                    url: endpoint, json: Self.twoSpans,
                    headers: ["traceparent": traceparent, "Authorization": "Bearer otlp-s3cret"]))
            #expect(response.status == 200)
            #expect(response.headers["Content-Type"] == "application/json")
            #expect(response.bodyText == "{}")

            let received = try await Self.received(server, client)
            #expect(received["span_count"] as? Int == 2)
            let requests = received["requests"] as? [[String: Any]] ?? []
            try #require(requests.count == 1)
            let request = requests[0]
            #expect(request["traceparent"] as? String == traceparent)
            let headers = request["headers"] as? [String: String] ?? [:]
            #expect(headers["authorization"] == "REDACTED")
            let resource = (request["resource_spans"] as? [[String: Any]])?.first
            let resourceAttributes = (resource?["resource"] as? [String: Any])?["attributes"] as? [String: Any]
            #expect(resourceAttributes?["service.name"] as? String == "hostscope")
            let scope = (resource?["scope_spans"] as? [[String: Any]])?.first
            #expect((scope?["scope"] as? [String: Any])?["name"] as? String == "hostscope")
            let spans = scope?["spans"] as? [[String: Any]] ?? []
            #expect(spans.map { $0["name"] as? String } == ["snapshot web1", "GET"])
            #expect(spans.last?["parent_span_id"] as? String == Self.rootSpanID)
            let attributes = spans.last?["attributes"] as? [String: Any]
            #expect(attributes?["http.response.status_code"] as? Int == 200)
            #expect((spans.last?["events"] as? [[String: Any]])?.first?["name"] as? String == "retry")

            let raw = try await client.execute(HTTPRequest(url: server.baseURL + "/received")).bodyText
            #expect(!raw.contains("otlp-s3cret"))
        }
    }

    @Test("A body that does not decode is refused with 400 and the reason, and nothing is stored")
    func refusesMalformedBodies() async throws {
        try await Self.withReceiver { server, client, endpoint in
            let base64ID = Data(repeating: 7, count: 16).base64EncodedString()
            let cases: [(HTTPRequest, String)] = [
                (.postJSON(url: endpoint, json: "{not json"), "not valid JSON"),
                (
                    .postJSON(
                        url: endpoint,
                        json: #"{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"\#(base64ID)"}]}]}]}"#),
                    "hex"
                ),
                (.postJSON(url: endpoint, json: #"{"resource_spans":[]}"#), "lowerCamelCase"),
                (.postJSON(url: endpoint, json: #"{"resourceSpans":[{"bogus":1}]}"#), "bogus"),
                (
                    HTTPRequest(
                        method: .post, url: endpoint, headers: ["Content-Type": "application/x-protobuf"],
                        body: [0x0A, 0xFF, 0x01]),
                    ""
                ),
            ]
            for (request, reason) in cases {
                let response = try await client.execute(request)
                #expect(response.status == 400, "\(request.debugDescription)")
                if !reason.isEmpty {
                    let status = try jsonObject(response.body)
                    #expect(status["code"] as? Int == 3)
                    #expect((status["message"] as? String)?.contains(reason) == true, "\(status)")
                }
            }
            let wrongType = try await client.execute(
                HTTPRequest(method: .post, url: endpoint, headers: ["Content-Type": "text/plain"], body: [0x7B]))
            #expect(wrongType.status == 415)

            let received = try await Self.received(server, client)
            #expect((received["requests"] as? [Any])?.isEmpty == true)
            #expect(
                (received["attempts"] as? [[String: Any]])?.map { $0["status"] as? Int } == [
                    400, 400, 400, 400, 400, 415,
                ])
        }
    }

    @Test("An injected 429 reaches the client with its Retry-After, and the next request is accepted")
    func injectedThrottling() async throws {
        try await Self.withReceiver { server, client, endpoint in
            try await Self.control(server, client, "fail", #"{"status":429,"count":1,"retry_after":"2"}"#)
            let throttled = try await client.execute(.postJSON(url: endpoint, json: Self.twoSpans))
            #expect(throttled.status == 429)
            #expect(throttled.head.retryAfter() == .seconds(2))
            #expect(try jsonObject(throttled.body)["code"] as? Int == 8)

            let accepted = try await client.execute(.postJSON(url: endpoint, json: Self.twoSpans))
            #expect(accepted.status == 200)
            let received = try await Self.received(server, client)
            #expect(received["span_count"] as? Int == 2)
            #expect((received["attempts"] as? [[String: Any]])?.map { $0["status"] as? Int } == [429, 200])
        }
    }

    @Test("Failures given on the command line answer the first requests, 503 then 504")
    func commandLineFailures() async throws {
        try await Self.withReceiver(arguments: ["--fail", "503:1", "--fail", "504:1:1"]) { _, client, endpoint in
            let statuses = try await [1, 2, 3].asyncMap { _ in
                try await client.execute(.postJSON(url: endpoint, json: Self.twoSpans))
            }
            #expect(statuses.map(\.status) == [503, 504, 200])
            #expect(statuses[0].head.retryAfter() == nil)
            #expect(statuses[1].head.retryAfter() == .seconds(1))
        }
    }

    @Test("A partial success is reported in OTLP/JSON with the rejected span count as a string")
    func partialSuccessJSON() async throws {
        try await Self.withReceiver { server, client, endpoint in
            try await Self.control(server, client, "partial", #"{"rejected_spans":1,"error_message":"too old"}"#)
            let response = try await client.execute(.postJSON(url: endpoint, json: Self.twoSpans))
            #expect(response.status == 200)
            #expect(response.bodyText == #"{"partialSuccess":{"rejectedSpans":"1","errorMessage":"too old"}}"#)
            #expect(try await Self.received(server, client)["rejected_spans"] as? Int == 1)
        }
    }

    @Test("A protobuf request is decoded and answered with a protobuf ExportTraceServiceResponse")
    func acceptsProtobuf() async throws {
        try await Self.withReceiver { server, client, endpoint in
            let request = HTTPRequest(
                method: .post, url: endpoint, headers: ["Content-Type": "application/x-protobuf"],
                body: ProtobufTrace.request(spanNames: ["exec uptime", "sftp stat"]))
            let empty = try await client.execute(request)
            #expect(empty.status == 200)
            #expect(empty.headers["Content-Type"] == "application/x-protobuf")
            #expect(empty.body.isEmpty)

            try await Self.control(server, client, "partial", #"{"rejected_spans":1,"error_message":"too old"}"#)
            let partial = try await client.execute(request)
            // partial_success (1, LEN) { rejected_spans (1, VARINT) = 1, error_message (2, LEN) = "too old" }
            #expect(partial.body == [0x0A, 0x0B, 0x08, 0x01, 0x12, 0x07] + Array("too old".utf8))

            let received = try await Self.received(server, client)
            #expect(received["span_count"] as? Int == 4)
            let first = (received["requests"] as? [[String: Any]])?.first
            #expect(first?["content_type"] as? String == "application/x-protobuf")
            let resource = (first?["resource_spans"] as? [[String: Any]])?.first
            let scope = (resource?["scope_spans"] as? [[String: Any]])?.first
            let spans = scope?["spans"] as? [[String: Any]]
            #expect(spans?.map { $0["name"] as? String } == ["exec uptime", "sftp stat"])
            #expect(spans?.first?["trace_id"] as? String == "0102030405060708090a0b0c0d0e0f10")
        }
    }

    @Test("Accepted requests are written as OTLP JSON lines that the validator accepts")
    func ndjsonFile() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("hostscope-otlp-\(UUID()).ndjson")
        defer { try? FileManager.default.removeItem(at: file) }
        try await Self.withReceiver(arguments: ["--ndjson", file.path]) { _, client, endpoint in
            let json = try await client.execute(.postJSON(url: endpoint, json: Self.twoSpans))
            let protobuf = try await client.execute(
                HTTPRequest(
                    method: .post, url: endpoint, headers: ["Content-Type": "application/x-protobuf"],
                    body: ProtobufTrace.request(spanNames: ["exec df"])))
            let broken = try await client.execute(.postJSON(url: endpoint, json: "{broken"))
            let statuses: [Int] = [json.status, protobuf.status, broken.status]
            #expect(statuses == [200, 200, 400])
        }
        let lines = try String(contentsOf: file, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 2)
        #expect(lines.first?.contains(#""spanId":"\#(Self.childSpanID)""#) == true)
        #expect(lines.last?.contains(#""traceId":"0102030405060708090a0b0c0d0e0f10""#) == true)

        if let shared = Repository.shared {
            let validator = Process()
            validator.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            validator.arguments = [
                "python3", shared.appendingPathComponent("tools/validate_otlp_ndjson.py").path, file.path,
            ]
            let output = Pipe()
            validator.standardOutput = output
            try validator.run()
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            validator.waitUntilExit()
            #expect(validator.terminationStatus == 0, "\(text)")
            #expect(text.hasSuffix("2 passed, 0 failed\n"), "\(text)")
        }
    }
}

/// Builds a small `ExportTraceServiceRequest` in protobuf wire format, field by field.
enum ProtobufTrace {
    static func request(spanNames: [String]) -> [UInt8] {
        let traceID = (1...16).map { UInt8($0) }
        let spans = spanNames.enumerated().map { index, name in
            var span = bytes(1, traceID) + bytes(2, (0..<8).map { UInt8(index + 1 + $0) }) + bytes(5, Array(name.utf8))
            span += varint(6, 3)
            span += fixed64(7, 1_763_750_000_000_000_000) + fixed64(8, 1_763_750_000_100_000_000)
            return span
        }
        let attribute = bytes(1, Array("service.name".utf8)) + bytes(2, bytes(1, Array("hostscope".utf8)))
        let resource = bytes(1, attribute)
        let scope = bytes(1, Array("hostscope".utf8))
        let scopeSpans = bytes(1, scope) + spans.flatMap { bytes(2, $0) }
        let resourceSpans = bytes(1, resource) + bytes(2, scopeSpans)
        return bytes(1, resourceSpans)
    }

    static func rawVarint(_ value: UInt64) -> [UInt8] {
        var value = value
        var out: [UInt8] = []
        repeat {
            let byte = UInt8(value & 0x7F)
            value >>= 7
            out.append(value == 0 ? byte : byte | 0x80)
        } while value != 0
        return out
    }

    static func bytes(_ field: UInt64, _ payload: [UInt8]) -> [UInt8] {
        rawVarint(field << 3 | 2) + rawVarint(UInt64(payload.count)) + payload
    }

    static func varint(_ field: UInt64, _ value: UInt64) -> [UInt8] {
        rawVarint(field << 3) + rawVarint(value)
    }

    static func fixed64(_ field: UInt64, _ value: UInt64) -> [UInt8] {
        rawVarint(field << 3 | 1) + withUnsafeBytes(of: value.littleEndian) { Array($0) }
    }
}

extension Sequence {
    /// Maps in order, awaiting each element before the next, so requests reach a server in sequence.
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var results: [T] = []
        for element in self {
            results.append(try await transform(element))
        }
        return results
    }
}
