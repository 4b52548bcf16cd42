import AgentTracing
import Foundation
import GRDB
import HostscopeCore
import TestSupport
import Testing

@testable import Storage

/// `trace push` of a database an earlier hostscope wrote, before spans were stored with their OTLP encoding:
/// opening it adds the encoding columns, and its spans, read from their JSON, reach the receiver exactly as
/// the spans of a database written now, which go as their stored encodings. The receiver in `Scripts/` decodes
/// every body with PyPI's opentelemetry-proto and writes each request back as one OTLP/JSON line.
@Suite(.serialized) struct TracePushMigrationTests {
    static let start: UInt64 = 1_795_000_000_000_000_000

    /// `count` spans of watch ticks and chat turns from two processes (every attribute type, events, a link, error
    /// statuses), every 97th one of hostscope's own export requests.
    static func spans(_ count: Int, from first: Int = 0) -> [FinishedSpan] {
        let resources = [
            TraceResource.hostscope(version: "0.1.0", hostName: "ops-laptop"),
            TraceResource.hostscope(version: "0.0.9", hostName: "bastion"),
        ]
        return (first..<(first + count)).map { index in
            let time = start + UInt64(index) * 1_000_000
            let trace = TraceID(high: 0x0af7_6519_16cd_43dd, low: UInt64(index / 4 + 1))!
            var span = FinishedSpan(
                traceID: trace, spanID: SpanID(UInt64(index + 1))!,
                parentSpanID: index % 4 == 0 ? nil : SpanID(UInt64(index - index % 4 + 1)),
                name: index % 4 == 0 ? "collect snapshot" : "ssh exec", kind: index % 4 == 0 ? .internal : .client,
                startNanoseconds: time, endNanoseconds: time + 2_500_000,
                status: index % 9 == 0 ? .init(code: .error, message: "exit 1: “no such file”") : .init(),
                attributes: [
                    Attribute("hostscope.host", .string("web\(index % 5)")),
                    Attribute("process.command_args", .stringArray(["df", "-P", "-k"])),
                    Attribute("process.exit.code", .int(Int64(index % 3) - 1)),
                    Attribute("hostscope.process.duration_ms", .double(2.5)),
                    Attribute("hostscope.process.output.truncated", .bool(index % 2 == 0)),
                ],
                events: index % 9 == 0
                    ? [.init(name: "stderr", timeNanoseconds: time + 1, attributes: [Attribute("lines", .int(2))])]
                    : [],
                links: index % 8 == 0 ? [.init(traceID: trace, spanID: SpanID(UInt64(index + 3))!)] : [],
                resource: resources[index % 3 == 0 ? 1 : 0])
            if index % 97 == 5 {
                span.name = "POST"
                span.attributes.append(Attribute(HTTPClientTracing.exportMarkerKey, .bool(true)))
            }
            return span
        }
    }

    /// A database as hostscope wrote it before schema 5: the first four migrations, each span's JSON only.
    static func writeLegacy(_ spans: [FinishedSpan], to path: String) async throws {
        let pool = try DatabasePool(path: path)
        try StorageSchema.migrator.migrate(pool, upTo: "4-chat")
        let rows = spans.map(StoredSpan.init)
        try await pool.write { db in
            for row in rows {
                try db.execute(
                    sql: """
                        INSERT INTO span (trace_id, span_id, parent_span_id, name, kind, start_unix_nano, end_unix_nano,
                            status_code, host, service, json) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """,
                    arguments: [
                        row.traceID, row.spanID, row.parentSpanID, row.name, row.kind, row.startUnixNano,
                        row.endUnixNano, row.statusCode.rawValue, row.host, row.service, row.json,
                    ])
            }
        }
        try pool.close()
    }

    static func push(
        _ path: String, to server: PythonServer, resourceAttributes: [Attribute] = []
    ) async throws -> TracePushOutcome {
        let database = try await StorageDatabase.open(at: path, mode: .existingOnly)
        let push = TracePush(
            otlp: OTLPSignalSettings(endpoint: try OTLPEndpoint(server.baseURL)),
            resourceAttributes: resourceAttributes, until: Date(timeIntervalSince1970: 1_900_000_000), batchSize: 512)
        let outcome = try await TraceService(database: database).push(push, diagnostics: .silent)
        try await database.close()
        return outcome
    }

    static func lines(_ path: String) throws -> [NSDictionary] {
        try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map {
            NSDictionary(dictionary: try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] ?? [:])
        }
    }

    static func spanCount(_ request: NSDictionary) -> Int {
        ((request["resourceSpans"] as? [[String: Any]]) ?? []).reduce(0) { total, resource in
            total
                + ((resource["scopeSpans"] as? [[String: Any]]) ?? []).reduce(0) {
                    $0 + (($1["spans"] as? [Any])?.count ?? 0)
                }
        }
    }

    @Test func aDatabaseWrittenBeforeEncodingsWereStoredPushesTheSameRequestsAsOneWrittenNow() async throws {
        let directory = try TemporaryDirectory()
        let legacy = directory.file("legacy.sqlite")
        let current = directory.file("current.sqlite")
        let received = directory.file("received.jsonl")
        let spans = Self.spans(1_200)
        let exportRequests = spans.count(where: \.isExportRequest)
        #expect(exportRequests == 13)
        try await Self.writeLegacy(spans, to: legacy)
        do {
            let database = try await StorageDatabase.open(at: current)
            try await database.spans.insert(spans.map(StoredSpan.init))
            try await database.close()
        }

        try await withPythonServer("otlp_receiver.py", arguments: ["--ndjson", received]) { server in
            let old = try await Self.push(legacy, to: server)
            #expect(old.result.failure == nil, "\(old.result.failure?.message ?? "")")
            #expect(old.found == spans.count - exportRequests)
            #expect(old.skipped == 0)
            let now = try await Self.push(current, to: server)
            #expect(now.result.failure == nil, "\(now.result.failure?.message ?? "")")
            #expect(now.found == old.found)
            #expect(now.result.accepted == old.found)
        }
        let requests = try Self.lines(received)
        try #require(requests.count == 6, "1,187 spans in batches of 512, twice")
        #expect(Array(requests[3...]) == Array(requests[..<3]), "the same requests from either database")
        #expect(requests[..<3].reduce(0) { $0 + Self.spanCount($1) } == spans.count - exportRequests)
        #expect(((requests[0]["resourceSpans"] as? [Any])?.count) == 2)

        // The older file now has the new schema; spans stored since carry their encodings, and a push sends
        // both kinds alike, the user's resource attributes applied to each.
        let database = try await StorageDatabase.open(at: legacy, mode: .existingOnly)
        #expect(try await database.appliedMigrations().contains("5-span-otlp"))
        let later = Self.spans(300, from: 1_200)
        try await database.spans.insert(later.map(StoredSpan.init))
        try await database.close()
        do {
            let database = try await StorageDatabase.open(at: current)
            try await database.spans.insert(later.map(StoredSpan.init))
            try await database.close()
        }
        try FileManager.default.removeItem(atPath: received)
        let overrides = [
            Attribute("service.name", .string("fleet-watch")), Attribute("deployment.environment", .string("staging")),
        ]
        try await withPythonServer("otlp_receiver.py", arguments: ["--ndjson", received]) { server in
            let mixed = try await Self.push(legacy, to: server, resourceAttributes: overrides)
            let now = try await Self.push(current, to: server, resourceAttributes: overrides)
            #expect(mixed.result.failure == nil && now.result.failure == nil)
            #expect(mixed.found == spans.count + later.count - (spans + later).count(where: \.isExportRequest))
            #expect(now.found == mixed.found)
        }
        let again = try Self.lines(received)
        try #require(again.count % 2 == 0)
        #expect(Array(again[(again.count / 2)...]) == Array(again[..<(again.count / 2)]))
        for request in again {
            for resource in (request["resourceSpans"] as? [[String: Any]]) ?? [] {
                let attributes = ((resource["resource"] as? [String: Any])?["attributes"] as? [[String: Any]]) ?? []
                let keys = attributes.compactMap { $0["key"] as? String }
                #expect(keys == ["service.name", "service.version", "host.name", "deployment.environment"])
                #expect(
                    (attributes.first?["value"] as? [String: Any])?["stringValue"] as? String == "fleet-watch")
            }
        }
    }
}
