import AgentTracing
import CurlHTTP
import Foundation
import Synchronization
import TestSupport
import Testing
import ValueFormats

/// The metrics exporter against the real receiver in `Scripts/` (which decodes with opentelemetry-proto's
/// official definitions) and against rotel.
@Suite("OTLP/HTTP metrics exporter", .serialized)
struct OTLPMetricsExporterTests {
    static let time: UInt64 = 1_795_000_000_000_000_000
    static let boot: UInt64 = 1_794_000_000_000_000_000

    /// One host's metrics: a double gauge, a monotonic double sum, an up-down integer sum, several attributes.
    static func sample(host: String = "web1") -> ResourceMetrics {
        ResourceMetrics(
            resource: TraceResource(attributes: [
                Attribute("service.name", "hostscope"), Attribute("host.name", .string(host)),
                Attribute("os.type", "linux"),
            ]),
            metrics: [
                Metric(
                    name: "system.cpu.time", description: "Seconds per mode.", unit: "s",
                    kind: .cumulativeSum(monotonic: true),
                    points: [
                        MetricPoint(
                            attributes: [Attribute("cpu.mode", "user"), Attribute("cpu.logical_number", 0)],
                            startNanoseconds: boot, timeNanoseconds: time, value: .double(1234.5)),
                        MetricPoint(
                            attributes: [Attribute("cpu.mode", "idle"), Attribute("cpu.logical_number", 0)],
                            startNanoseconds: boot, timeNanoseconds: time, value: .double(0)),
                    ]),
                Metric(
                    name: "system.cpu.utilization", unit: "1", kind: .gauge,
                    points: [
                        MetricPoint(
                            attributes: [Attribute("cpu.mode", "user")], timeNanoseconds: time, value: .double(0.25))
                    ]),
                Metric(
                    name: "system.memory.usage", unit: "By", kind: .cumulativeSum(monotonic: false),
                    points: [
                        MetricPoint(
                            attributes: [Attribute("system.memory.state", "used")], startNanoseconds: boot,
                            timeNanoseconds: time, value: .int(8_589_934_592)),
                        MetricPoint(
                            attributes: [Attribute("system.memory.state", "free")], startNanoseconds: boot,
                            timeNanoseconds: time, value: .int(-1)),
                    ]),
            ])
    }

    static func exporter(
        _ url: String, _ encoding: OTLPEncoding = .protobuf, _ compression: OTLPCompression = .gzip,
        attempts: Int = 1
    ) throws -> OTLPMetricsExporter {
        OTLPMetricsExporter(
            endpoint: try OTLPEndpoint(url, signal: .metrics), scope: SampleTraces.scope, encoding: encoding,
            compression: compression,
            policy: OTLPRetryPolicy(maximumAttempts: attempts, initialBackoff: .milliseconds(10), jitter: { $0 }))
    }

    static func metricRequests(_ server: PythonServer) async throws -> [[String: Any]] {
        try await withHTTPClient { client in
            try await OTLPHTTPExporterTests.received(server, client)["metric_requests"] as? [[String: Any]] ?? []
        }
    }

    @Test(
        "Metrics reach /v1/metrics in every encoding and compression, as the official definitions read them",
        arguments: OTLPHTTPExporterTests.wireFormats)
    func delivers(encoding: OTLPEncoding, compression: OTLPCompression) async throws {
        try await withPythonServer("otlp_receiver.py") { server in
            let exporter = try Self.exporter(server.baseURL, encoding, compression)
            let result = await exporter.export([Self.sample(), Self.sample(host: "db1")])
            await exporter.shutdown()
            #expect(result.failure == nil)
            #expect(result.accepted == 10)
            let requests = try await Self.metricRequests(server)
            try #require(requests.count == 1)
            #expect(requests[0]["content_type"] as? String == encoding.contentType)
            #expect(requests[0]["data_point_count"] as? Int == 10)
            let resources = requests[0]["resource_metrics"] as? [[String: Any]] ?? []
            let hosts = resources.compactMap { ($0["resource"] as? [String: Any])?["attributes"] as? [String: Any] }
                .compactMap { $0["host.name"] as? String }
            #expect(hosts == ["web1", "db1"])
            let metrics = resources.first?["metrics"] as? [[String: Any]] ?? []
            let cpu = try #require(metrics.first { $0["name"] as? String == "system.cpu.time" })
            #expect(cpu["type"] as? String == "sum")
            #expect(cpu["unit"] as? String == "s")
            #expect(cpu["description"] as? String == "Seconds per mode.")
            #expect(cpu["aggregation_temporality"] as? Int == 2)
            #expect(cpu["is_monotonic"] as? Bool == true)
            let points = cpu["data_points"] as? [[String: Any]] ?? []
            #expect(points.compactMap { $0["value"] as? Double } == [1234.5, 0])
            #expect(points.first?["value_type"] as? String == "as_double")
            #expect(points.first?["start_time_unix_nano"] as? String == String(Self.boot))
            #expect(points.first?["time_unix_nano"] as? String == String(Self.time))
            let attributes = points.first?["attributes"] as? [String: Any]
            #expect(attributes?["cpu.mode"] as? String == "user")
            #expect(attributes?["cpu.logical_number"] as? Int == 0)
            let gauge = try #require(metrics.first { $0["name"] as? String == "system.cpu.utilization" })
            #expect(gauge["type"] as? String == "gauge")
            #expect((gauge["data_points"] as? [[String: Any]])?.first?["start_time_unix_nano"] as? String == "0")
            let memory = try #require(metrics.first { $0["name"] as? String == "system.memory.usage" })
            #expect(memory["is_monotonic"] as? Bool == false)
            let memoryPoints = memory["data_points"] as? [[String: Any]] ?? []
            #expect(memoryPoints.compactMap { $0["value_type"] as? String } == ["as_int", "as_int"])
            #expect(memoryPoints.compactMap { $0["value"] as? Int } == [8_589_934_592, -1])
        }
    }

    @Test("Protobuf and JSON bodies of the same metrics are the same request once decoded")
    func protobufMatchesJSON() async throws {
        let file = NSTemporaryDirectory() + "hostscope-metrics-\(UUID().uuidString).jsonl"
        defer { try? FileManager.default.removeItem(atPath: file) }
        try await withPythonServer("otlp_receiver.py", arguments: ["--metrics-ndjson", file]) { server in
            for encoding in OTLPEncoding.allCases {
                let exporter = try Self.exporter(server.baseURL, encoding)
                #expect(await exporter.export([Self.sample()]).failure == nil)
                await exporter.shutdown()
            }
        }
        let lines = try OTLPProtobufEncoderTests.lines(file)
        try #require(lines.count == 2)
        #expect(
            NSDictionary(dictionary: lines[0] as! [String: Any]) == NSDictionary(dictionary: lines[1] as! [String: Any])
        )
    }

    @Test(
        "Rejected data points (partial success) are counted with the receiver's message",
        arguments: OTLPEncoding.allCases)
    func partialSuccess(encoding: OTLPEncoding) async throws {
        try await withPythonServer("otlp_receiver.py") { server in
            try await withHTTPClient { client in
                try await OTLPHTTPExporterTests.control(
                    server, client, "partial", #"{"rejected_spans": 2, "error_message": "points too old"}"#)
            }
            let exporter = try Self.exporter(server.baseURL, encoding)
            let result = await exporter.export([Self.sample()])
            await exporter.shutdown()
            #expect(result.delivered == 5)
            #expect(result.rejected == 2)
            #expect(result.accepted == 3)
            #expect(result.rejectionMessages == ["points too old"])
        }
    }

    @Test("The continuous metrics exporter drops and counts data points beyond its queue, and sends the rest")
    func boundedQueue() async throws {
        try await withPythonServer("otlp_receiver.py") { server in
            let failures = Lock<[String]>([])
            let batches = OTLPMetricsBatchExporter(
                exporter: try Self.exporter(server.baseURL),
                configuration: OTLPBatchExporter.Configuration(queueCapacity: 2, batchSize: 10, interval: .seconds(60))
            ) { error in failures.withLock { $0.append(error.message) } }
            for index in 0..<5 { batches.enqueue(Self.sample(host: "web\(index)")) }
            batches.start()
            let statistics = await batches.shutdown(timeout: .seconds(10))
            #expect(statistics.dropped == 15)
            #expect(statistics.exported == 10)
            #expect(statistics.failed == 0)
            #expect(failures.withLock { $0 }.isEmpty)
            #expect(try await Self.metricRequests(server).first?["data_point_count"] as? Int == 10)
        }
    }

    @Test("A receiver that is down fails the batch, is reported once, and the points count as failed")
    func receiverDown() async throws {
        let port = try await withPythonServer("otlp_receiver.py") { $0.port }
        let failures = Lock<[String]>([])
        let batches = OTLPMetricsBatchExporter(
            exporter: try Self.exporter("http://127.0.0.1:\(port)", attempts: 2),
            configuration: OTLPBatchExporter.Configuration(queueCapacity: 10, batchSize: 1, interval: .seconds(60))
        ) { error in failures.withLock { $0.append(error.message) } }
        batches.start()
        for index in 0..<3 { batches.enqueue(Self.sample(host: "web\(index)")) }
        let statistics = await batches.shutdown(timeout: .seconds(10))
        #expect(statistics.failed == 15)
        #expect(statistics.exported == 0)
        let messages = failures.withLock { $0 }
        #expect(messages.count == 1)
        #expect(
            messages.first?.hasPrefix("could not deliver 5 data point(s) to the OTLP receiver within 2 attempt(s)")
                == true)
    }

    @Test(
        "rotel receives the metrics in every encoding and forwards them to a receiver that reads them with the official definitions",
        arguments: OTLPHTTPExporterTests.wireFormats)
    func rotelForwards(encoding: OTLPEncoding, compression: OTLPCompression) async throws {
        guard let agent = RotelAgent.path else {
            Issue.record("PyPI's rotel is not installed: pip install rotel (Scripts/setup.sh --tests does)")
            return
        }
        try await withPythonServer("otlp_receiver.py") { server in
            let rotel = try RotelAgent.start(agent, forwardingTo: server.baseURL)
            defer { rotel.stop() }
            let exporter = try Self.exporter("http://127.0.0.1:\(rotel.port)", encoding, compression)
            let result = await exporter.export([Self.sample()])
            await exporter.shutdown()
            #expect(result.failure == nil)
            var points = 0
            var metrics: [[String: Any]] = []
            for _ in 0..<100 {
                let requests = try await Self.metricRequests(server)
                points = requests.reduce(0) { $0 + ($1["data_point_count"] as? Int ?? 0) }
                metrics = requests.flatMap { request in
                    (request["resource_metrics"] as? [[String: Any]] ?? []).flatMap {
                        $0["metrics"] as? [[String: Any]] ?? []
                    }
                }
                if points >= 5 { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(points == 5)
            #expect(
                Set(metrics.compactMap { $0["name"] as? String }) == [
                    "system.cpu.time", "system.cpu.utilization", "system.memory.usage",
                ])
            #expect(rotel.output().contains("system.cpu.time"))
        }
    }
}
