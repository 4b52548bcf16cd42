import AgentTracing
import Foundation
import HostscopeCore
import Storage
import TestSupport
import Testing

/// `hostscope trace` in processes of its own, reading what `snapshot` and `watch` stored, and
/// `trace push` to real OTLP receivers.
@Suite(.serialized) struct TraceCommandTests {
    /// The spans of one snapshot: the collection, the connect and its three phases, and three commands
    /// (platform detection, the probe, the command lines and owners of the processes it lists).
    static let snapshotSpans = 8

    static func temporaryDatabase() -> String {
        NSTemporaryDirectory() + "hostscope-trace-\(UUID().uuidString).sqlite"
    }

    static func remove(_ path: String) {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    /// A snapshot of the harness host that stores its spans in `database`.
    static func snapshot(_ server: SSHTestServer, database: String, extra: [String] = []) throws -> CLIResult {
        try CLI.run(
            ["snapshot", server.target, "-o", "json", "--db", database] + CLI.harnessArguments(server) + extra)
    }

    static func flatSpans(_ text: String) throws -> [[String: Any]] {
        try text.split(separator: "\n").map {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] ?? [:]
        }
    }

    @Test func spansOfASnapshotAreListedShownAndExportedByLaterProcesses() throws {
        let server = try SSHTestServer.shared()
        let database = Self.temporaryDatabase()
        defer { Self.remove(database) }
        let snapshot = try Self.snapshot(server, database: database)
        #expect(snapshot.status == 0, "\(snapshot.stderr)")
        #expect(snapshot.stderr.isEmpty)

        // By default, one row per trace: the snapshot, its root span, host and span count.
        let traces = try CLI.run(["trace", "list", "--db", database])
        #expect(traces.status == 0, "\(traces.stderr)")
        let traceRows = traces.stdout.split(separator: "\n").map(String.init)
        #expect(traceRows.first?.hasPrefix("START (UTC)") == true)
        #expect(traceRows.count == 3, "\(traces.stdout)")
        #expect(traceRows[1].contains("collect snapshot") && traceRows[1].contains(server.target))
        #expect(traceRows[1].hasSuffix(" \(Self.snapshotSpans)"))
        #expect(traceRows.last == "1 trace(s), newest first; 0 span(s) dropped before reaching the database")
        let traceID = try #require(
            traceRows[1].split(separator: " ", omittingEmptySubsequences: true).dropFirst(2).first)

        let list = try CLI.run(["trace", "list", "--spans", "--db", database])
        #expect(list.status == 0, "\(list.stderr)")
        let rows = list.stdout.split(separator: "\n").map(String.init)
        #expect(rows.first?.hasPrefix("TIME (UTC)") == true)
        #expect(rows.contains { $0.contains("collect snapshot") })
        #expect(rows.filter { $0.contains("ssh exec") && $0.hasSuffix(" 0") }.count == 3)
        #expect(
            rows.last == "\(Self.snapshotSpans) span(s), newest first; 0 span(s) dropped before reaching the database")

        let errorsOnly = try CLI.run(["trace", "list", "--spans", "--errors", "--db", database])
        #expect(
            errorsOnly.stdout.hasSuffix("0 span(s), newest first; 0 span(s) dropped before reaching the database\n"))
        let noFailedTrace = try CLI.run(["trace", "list", "--errors", "--db", database])
        #expect(
            noFailedTrace.stdout.hasSuffix("0 trace(s), newest first; 0 span(s) dropped before reaching the database\n")
        )
        let sshOnly = try CLI.run(["trace", "list", "--spans", "--kind", "ssh", "--since", "10m", "--db", database])
        #expect(!sshOnly.stdout.contains("collect snapshot"))
        #expect(sshOnly.stdout.contains("ssh handshake"))
        // A trace holding an ssh span is listed by its root.
        let sshTraces = try CLI.run(["trace", "list", "--kind", "ssh", "--db", database])
        #expect(sshTraces.stdout.contains("collect snapshot"))

        // The trace by a prefix of its id: every span with its offset and bar, nested by parent.
        let whole = try CLI.run(["trace", "show", String(traceID), "--db", database])
        #expect(whole.status == 0, "\(whole.stderr)")
        #expect(whole.stdout.hasPrefix("trace \(traceID)"))
        #expect(whole.stdout.contains("  collect snapshot  "))
        #expect(whole.stdout.contains("    ssh connect \(server.target)"))
        #expect(whole.stdout.contains("      ssh handshake"))
        #expect(whole.stdout.contains("+0.000 ms") || whole.stdout.contains("+0.0 ms"))
        #expect(whole.stdout.contains("█"))

        let flat = try CLI.run(["trace", "export", "--format", "spans", "--db", database])
        #expect(flat.status == 0)
        let spans = try Self.flatSpans(flat.stdout)
        #expect(spans.count == Self.snapshotSpans)
        let root = try #require(spans.first { $0["name"] as? String == "collect snapshot" })
        let rootID = try #require(root["span_id"] as? String)

        // A prefix is enough; the tree shows the children, the details every attribute.
        let show = try CLI.run(["trace", "show", String(rootID.prefix(10)), "--db", database])
        #expect(show.status == 0, "\(show.stderr)")
        #expect(show.stdout.contains("\(rootID.prefix(12))  ▶ collect snapshot"))
        #expect(show.stdout.contains("span \(rootID)  collect snapshot"))
        #expect(show.stdout.contains("    ssh connect \(server.target)"))
        #expect(show.stdout.contains("      ssh handshake"))
        #expect(show.stdout.contains("    ssh exec"))
        #expect(show.stdout.contains("hostscope.collector = proc"))
        #expect(show.stdout.contains("resource   service.name=hostscope"))

        let otlpFile = NSTemporaryDirectory() + "hostscope-export-\(UUID().uuidString).jsonl"
        defer { try? FileManager.default.removeItem(atPath: otlpFile) }
        let export = try CLI.run(["trace", "export", "--format", "otlp", "--output", otlpFile, "--db", database])
        #expect(export.status == 0, "\(export.stderr)")
        let text = try String(contentsOfFile: otlpFile, encoding: .utf8)
        #expect(text.split(separator: "\n").count == 1)
        #expect(text.contains(#""key":"hostscope.tracer.dropped_spans","value":{"intValue":"0"}"#))
        guard let report = try OTLPValidation.validate(URL(fileURLWithPath: otlpFile)) else {
            print("validate_otlp_ndjson.py not found beside the checkout; OTLP validation skipped")
            return
        }
        #expect(report.status == 0, "\(report.output)")
        #expect(report.failed == 0)
        #expect(report.orphans == 0)
    }

    /// A `files` command is one trace: its connect and its SFTP calls under the command's span; a failure carries the
    /// sentence the user saw. `trace export` takes whole traces by host, kind and trace id.
    @Test func aFilesCommandIsOneTraceWhoseFailureSaysTheUsersSentenceAndExportFiltersTraces() throws {
        let server = try SSHTestServer.shared()
        let database = Self.temporaryDatabase()
        defer { Self.remove(database) }
        let root = NSTemporaryDirectory() + "hostscope-trace-files-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: root + "/inside", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        try "hello\n".write(toFile: root + "/inside/a.txt", atomically: true, encoding: .utf8)
        let connection = ["-p", String(server.port)] + CLI.harnessArguments(server)
        let environment = ["HOSTSCOPE_DB": database]
        let listed = try CLI.run(
            ["files", "ls", "\(server.user)@\(server.host):\(root)/inside"] + connection, environment: environment)
        #expect(listed.status == 0, "\(listed.stderr)")
        let refused = try CLI.run(
            ["files", "cat", "--root", root + "/inside", "\(server.user)@\(server.host):../a.txt"] + connection,
            environment: environment)
        #expect(refused.status == 8, "\(refused.stderr)")
        let sentence = refused.stderr.replacingOccurrences(of: "hostscope: ", with: "")
            .trimmingCharacters(in: .newlines)
        // Also a snapshot, a trace of another kind and host.
        #expect(try Self.snapshot(server, database: database).status == 0)

        let spans = try Self.flatSpans(
            CLI.run(["trace", "export", "--format", "spans", "--db", database]).stdout)
        let files = spans.filter { ($0["name"] as? String)?.hasPrefix("files ") == true }
        #expect(Set(files.compactMap { $0["name"] as? String }) == ["files ls", "files cat"], "\(files)")
        for command in files {
            let trace = command["trace_id"] as? String
            let inTrace = spans.filter { $0["trace_id"] as? String == trace }
            let connect = try #require(inTrace.first { ($0["name"] as? String)?.hasPrefix("ssh connect") == true })
            #expect(connect["parent_span_id"] as? String == command["span_id"] as? String)
            #expect(command["parent_span_id"] == nil || command["parent_span_id"] is NSNull)
        }
        // The failed SFTP call and the command both say what the user read, not a code's name.
        let failed = spans.filter { ($0["status"] as? [String: Any])?["code"] as? String == "error" }
        #expect(failed.count == 2, "\(failed)")
        for span in failed {
            let message = (span["status"] as? [String: Any])?["message"] as? String
            #expect(message == sentence, "\(span)")
        }
        let list = try CLI.run(["trace", "list", "--errors", "--db", database])
        #expect(list.stdout.contains("files cat"), "\(list.stdout)")
        #expect(!list.stdout.contains("outsideRoot"), "\(list.stdout)")

        // Export by kind (whole traces holding an sftp span), by host, by trace id.
        let sftp = try Self.flatSpans(
            CLI.run(["trace", "export", "--format", "spans", "--kind", "sftp", "--db", database]).stdout)
        #expect(
            Set(sftp.compactMap { $0["trace_id"] as? String }) == Set(files.compactMap { $0["trace_id"] as? String }))
        #expect(!sftp.contains { $0["name"] as? String == "collect snapshot" })
        let byHost = try Self.flatSpans(
            CLI.run(["trace", "export", "--format", "spans", "--host", server.target, "--db", database]).stdout)
        #expect(byHost.contains { $0["name"] as? String == "collect snapshot" })
        let one = try #require(files.first { $0["name"] as? String == "files cat" }?["trace_id"] as? String)
        let byTrace = try Self.flatSpans(
            CLI.run(["trace", "export", "--format", "spans", "--trace", String(one.prefix(12)), "--db", database])
                .stdout)
        #expect(!byTrace.isEmpty && byTrace.allSatisfy { $0["trace_id"] as? String == one })
        let none = try CLI.run(["trace", "export", "--host", "nowhere", "--db", database])
        #expect(none.status == 0 && none.stdout.isEmpty && none.stderr.contains("no spans match"))
        let bad = try CLI.run(["trace", "export", "--trace", "not-hex", "--db", database])
        #expect(bad.status == 64)
    }

    @Test func aFailedTickIsExplainedByTraceShow() throws {
        let server = try SSHTestServer.shared()
        let database = Self.temporaryDatabase()
        defer { Self.remove(database) }
        // A known_hosts file without the harness key: the connect fails with host_key.
        let emptyKnownHosts = NSTemporaryDirectory() + "hostscope-empty-known-hosts-\(UUID().uuidString)"
        FileManager.default.createFile(atPath: emptyKnownHosts, contents: Data())
        defer { try? FileManager.default.removeItem(atPath: emptyKnownHosts) }
        let watch = try CLI.run(
            [
                "watch", server.target, "--every", "2s", "--count", "2", "-i", server.keyPath, "--known-hosts",
                emptyKnownHosts, "--format", "ndjson",
            ],
            environment: ["HOSTSCOPE_DB": database])
        #expect(watch.status == 0, "\(watch.stderr)")
        let list = try CLI.run(
            ["trace", "list", "--spans", "--errors", "--kind", "snapshot"], environment: ["HOSTSCOPE_DB": database])
        let failed = list.stdout.split(separator: "\n").filter { $0.contains("collect snapshot") }
        // A host key not trusted backs off: the second tick waits it out, with no collection.
        #expect(failed.count == 1, "\(list.stdout)")
        let spanID = try #require(
            failed.first?.split(separator: " ", omittingEmptySubsequences: true).dropFirst(2).first)
        let show = try CLI.run(["trace", "show", String(spanID)], environment: ["HOSTSCOPE_DB": database])
        #expect(show.status == 0, "\(show.stderr)")
        #expect(show.stdout.contains("hostscope.error.kind = host_key"))
        #expect(show.stdout.contains("span ") && show.stdout.contains("ssh connect \(server.target)"))
        #expect(show.stdout.contains("status     error: "))
    }

    @Test func traceShowAndListSayWhatIsMissing() throws {
        let missing = try CLI.run(["trace", "list", "--db", NSTemporaryDirectory() + "none-\(UUID().uuidString)"])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("no spans yet"))
        let server = try SSHTestServer.shared()
        let database = Self.temporaryDatabase()
        defer { Self.remove(database) }
        _ = try Self.snapshot(server, database: database)
        let unknown = try CLI.run(["trace", "show", "0000000000000000", "--db", database])
        #expect(unknown.status == 1)
        #expect(unknown.stderr.contains("no trace or span with id 0000000000000000"))
        let notHex = try CLI.run(["trace", "show", "xyz", "--db", database])
        #expect(notHex.status == 1)
        #expect(notHex.stderr.contains("not a trace or span id"))
    }

    // MARK: - push

    static func received(_ server: PythonServer) throws -> [String: Any] {
        let result = try CLI.runShell("curl -s \(server.baseURL)/received")
        return try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any] ?? [:]
    }

    static func withStoredSpans(_ body: (String) async throws -> Void) async throws {
        let server = try SSHTestServer.shared()
        let database = temporaryDatabase()
        defer { remove(database) }
        let snapshot = try Self.snapshot(server, database: database)
        #expect(snapshot.status == 0, "\(snapshot.stderr)")
        try await body(database)
    }

    @Test func pushWithNoSpansInRangeSaysNothingWasSent() async throws {
        try await Self.withStoredSpans { database in
            // Nothing listens on port 1: with nothing to send, the receiver is never contacted.
            let push = try CLI.run([
                "trace", "push", "--endpoint", "http://127.0.0.1:1", "--since", "2099-01-01T00:00:00Z", "--db",
                database,
            ])
            #expect(push.status == 0, "\(push.stderr)")
            #expect(
                push.stdout
                    == "no spans in that time range in \(database); nothing was sent to http://127.0.0.1:1/v1/traces\n")
        }
    }

    @Test func pushSendsEverySpanAsGzippedProtobufAndALaterPushDoesNotSendThePushItself() async throws {
        try await Self.withStoredSpans { database in
            try await withPythonServer("otlp_receiver.py") { receiver in
                let push = try CLI.run(["trace", "push", "--endpoint", receiver.baseURL, "--db", database])
                #expect(push.status == 0, "\(push.stderr)")
                #expect(push.stdout == "pushed \(Self.snapshotSpans) span(s) to \(receiver.baseURL)/v1/traces\n")
                let received = try Self.received(receiver)
                #expect(received["span_count"] as? Int == Self.snapshotSpans)
                let request = try #require((received["requests"] as? [[String: Any]])?.first)
                #expect(request["traceparent"] is NSNull)
                #expect(request["content_type"] as? String == "application/x-protobuf")
                #expect(request["content_encoding"] as? String == "gzip")
                // The push's own request is a span in the database now, listed with the HTTP spans...
                let list = try CLI.run(["trace", "list", "--spans", "--kind", "http", "--db", database])
                #expect(list.stdout.contains("POST"))
                #expect(list.stdout.contains("127.0.0.1"))
                // ...but a later push leaves it out: pushes do not feed on each other.
                let again = try CLI.run(["trace", "push", "--endpoint", receiver.baseURL, "--db", database])
                #expect(again.stdout == "pushed \(Self.snapshotSpans) span(s) to \(receiver.baseURL)/v1/traces\n")
                let requests = try Self.received(receiver)["requests"] as? [[String: Any]] ?? []
                #expect(requests.compactMap { $0["span_count"] as? Int } == [Self.snapshotSpans, Self.snapshotSpans])
                #expect(!Self.spanNames(requests).contains("POST"))
            }
        }
    }

    static func spanNames(_ requests: [[String: Any]]) -> [String] {
        requests.flatMap { request in
            ((request["resource_spans"] as? [[String: Any]]) ?? []).flatMap { resource in
                ((resource["scope_spans"] as? [[String: Any]]) ?? []).flatMap { scope in
                    ((scope["spans"] as? [[String: Any]]) ?? []).compactMap { $0["name"] as? String }
                }
            }
        }
    }

    @Test func pushSendsJSONWithoutCompressionWhenAsked() async throws {
        try await Self.withStoredSpans { database in
            try await withPythonServer("otlp_receiver.py") { receiver in
                let push = try CLI.run([
                    "trace", "push", "--endpoint", receiver.baseURL, "--encoding", "json", "--compression", "none",
                    "--db", database,
                ])
                #expect(push.status == 0, "\(push.stderr)")
                let request = try #require((try Self.received(receiver)["requests"] as? [[String: Any]])?.first)
                #expect(request["content_type"] as? String == "application/json")
                #expect(request["content_encoding"] is NSNull)
                #expect(request["span_count"] as? Int == Self.snapshotSpans)
            }
        }
    }

    @Test func pushTakesItsReceiverFormAndResourceFromTheOpenTelemetryVariablesUnlessOptionsSay() async throws {
        try await Self.withStoredSpans { database in
            try await withPythonServer("otlp_receiver.py") { receiver in
                let environment = [
                    // A signal-specific endpoint is used as it is: no /v1/traces is appended.
                    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": receiver.baseURL + "/v1/traces",
                    "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json",
                    "OTEL_EXPORTER_OTLP_COMPRESSION": "none",
                    "OTEL_EXPORTER_OTLP_HEADERS": "x-tenant=ops%20team",
                    "OTEL_SERVICE_NAME": "fleet-watch",
                    "OTEL_RESOURCE_ATTRIBUTES": "deployment.environment=staging",
                ]
                let push = try CLI.run(["trace", "push", "--db", database], environment: environment)
                #expect(push.status == 0, "\(push.stderr)")
                #expect(push.stdout == "pushed \(Self.snapshotSpans) span(s) to \(receiver.baseURL)/v1/traces\n")
                let flagged = try CLI.run(
                    ["trace", "push", "--encoding", "protobuf", "--db", database], environment: environment)
                #expect(flagged.status == 0, "\(flagged.stderr)")
                let requests = try Self.received(receiver)["requests"] as? [[String: Any]] ?? []
                try #require(requests.count == 2)
                #expect(
                    requests.compactMap { $0["content_type"] as? String } == [
                        "application/json", "application/x-protobuf",
                    ])
                for request in requests {
                    #expect((request["headers"] as? [String: Any])?["x-tenant"] as? String == "ops team")
                    let resource =
                        ((request["resource_spans"] as? [[String: Any]])?.first?["resource"]
                        as? [String: Any])?["attributes"] as? [String: Any]
                    #expect(resource?["service.name"] as? String == "fleet-watch")
                    #expect(resource?["openinference.project.name"] as? String == "fleet-watch")
                    #expect(resource?["deployment.environment"] as? String == "staging")
                    #expect(resource?["host.name"] as? String != nil)
                }
            }
        }
    }

    @Test func pushWithoutAReceiverOrWithGRPCSaysWhatToSet() throws {
        let none = try CLI.run(["trace", "push"])
        #expect(none.status == 64)
        #expect(none.stderr.contains("trace push needs a receiver: --endpoint URL, or OTEL_EXPORTER_OTLP_ENDPOINT"))
        let grpc = try CLI.run(
            ["trace", "push"],
            environment: [
                "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
            ])
        #expect(grpc.status == 64)
        #expect(grpc.stderr.contains("OTEL_EXPORTER_OTLP_PROTOCOL is 'grpc'; hostscope sends OTLP over HTTP"))
    }

    @Test func pushRetriesA429AfterItsRetryAfterAndA503WithBackoff() async throws {
        try await Self.withStoredSpans { database in
            try await withPythonServer("otlp_receiver.py", arguments: ["--fail", "429:1:1", "--fail", "503:1"]) {
                receiver in
                let started = Date()
                let push = try CLI.run(["trace", "push", "--endpoint", receiver.baseURL, "--db", database])
                #expect(push.status == 0, "\(push.stderr)")
                #expect(Date().timeIntervalSince(started) >= 1.4)  // 1 s asked, then at least half of 2 s
                let received = try Self.received(receiver)
                #expect(received["span_count"] as? Int == Self.snapshotSpans)
                let attempts = received["attempts"] as? [[String: Any]] ?? []
                #expect(attempts.compactMap { $0["status"] as? Int } == [429, 503, 200])
                // Each attempt is an HTTP span; retries say so.
                let spans = try Self.flatSpans(
                    try CLI.run(["trace", "export", "--format", "spans", "--db", database]).stdout)
                let posts = spans.filter { $0["name"] as? String == "POST" }
                #expect(posts.count == 3)
                let codes = posts.compactMap {
                    ($0["attributes"] as? [String: Any])?["http.response.status_code"] as? Int
                }
                #expect(codes.sorted() == [200, 429, 503])
            }
        }
    }

    @Test func pushDoesNotRetryA400AndExitsNonZero() async throws {
        try await Self.withStoredSpans { database in
            try await withPythonServer("otlp_receiver.py", arguments: ["--fail", "400:1"]) { receiver in
                let push = try CLI.run(["trace", "push", "--endpoint", receiver.baseURL, "--db", database])
                #expect(push.status == 1)
                #expect(push.stderr.contains("refused \(Self.snapshotSpans) span(s)"))
                #expect(push.stderr.contains("answered 400"))
                #expect(push.stderr.contains("not retried"))
                let attempts = try Self.received(receiver)["attempts"] as? [[String: Any]] ?? []
                #expect(attempts.count == 1)
            }
        }
    }

    @Test func pushReportsPartialSuccess() async throws {
        try await Self.withStoredSpans { database in
            try await withPythonServer("otlp_receiver.py") { receiver in
                _ = try CLI.runShell(
                    "curl -s -X POST -H 'Content-Type: application/json' "
                        + "-d '{\"rejected_spans\": 2, \"error_message\": \"2 spans too old\"}' "
                        + "\(receiver.baseURL)/control/partial")
                let push = try CLI.run(["trace", "push", "--endpoint", receiver.baseURL, "--db", database])
                #expect(push.status == 0, "\(push.stderr)")
                #expect(push.stdout.contains("pushed \(Self.snapshotSpans - 2) span(s)"))
                #expect(
                    push.stderr.contains("the receiver rejected 2 of \(Self.snapshotSpans) span(s): 2 spans too old"))
            }
        }
    }

    @Test func pushToAReceiverThatIsDownFailsClearlyAndKeepsTheSpans() async throws {
        try await Self.withStoredSpans { database in
            let port = try await withPythonServer("otlp_receiver.py") { $0.port }
            let before = try CLI.run(["trace", "export", "--format", "spans", "--db", database]).stdout
            let push = try CLI.run(
                ["trace", "push", "--endpoint", "http://127.0.0.1:\(port)", "--timeout", "2s", "--db", database])
            #expect(push.status == 3)
            #expect(
                push.stderr.hasPrefix("hostscope: could not deliver \(Self.snapshotSpans) span(s) to the OTLP receiver")
            )
            #expect(push.stderr.contains("\(Self.snapshotSpans) span(s) not pushed (they stay in the database)"))
            #expect(push.stderr.split(separator: "\n").count == 1)
            // In small batches the first failure ends the push: still one sentence, no retry of later batches.
            let batched = try CLI.run([
                "trace", "push", "--endpoint", "http://127.0.0.1:\(port)", "--timeout", "2s", "--batch-size", "2",
                "--db", database,
            ])
            #expect(batched.status == 3)
            #expect(batched.stderr.split(separator: "\n").count == 1, "\(batched.stderr)")
            let after = try CLI.run(["trace", "export", "--format", "spans", "--db", database]).stdout
            // Every span is still there; the failed attempts were added as spans of their own.
            let beforeIDs = Set(try Self.flatSpans(before).compactMap { $0["span_id"] as? String })
            let afterSpans = try Self.flatSpans(after)
            #expect(beforeIDs.isSubset(of: Set(afterSpans.compactMap { $0["span_id"] as? String })))
            #expect(afterSpans.contains { ($0["attributes"] as? [String: Any])?["error.type"] as? String == "connect" })
            // Those failed attempts are not what a later push sends.
            try await withPythonServer("otlp_receiver.py") { receiver in
                let push = try CLI.run(["trace", "push", "--endpoint", receiver.baseURL, "--db", database])
                #expect(push.stdout == "pushed \(Self.snapshotSpans) span(s) to \(receiver.baseURL)/v1/traces\n")
            }
        }
    }

    @Test func watchSendsEveryTicksFiguresAsSystemMetricsBesideItsSpans() async throws {
        let database = Self.temporaryDatabase()
        defer { Self.remove(database) }
        try await withPythonServer("otlp_receiver.py") { receiver in
            let watch = try CLI.run(
                [
                    "watch", "local", "--every", "1s", "--count", "2", "--format", "ndjson", "--otlp-endpoint",
                    receiver.baseURL,
                ],
                environment: ["HOSTSCOPE_DB": database, "OTEL_RESOURCE_ATTRIBUTES": "deployment.environment=lab"])
            #expect(watch.status == 0, "\(watch.stderr)")
            #expect(watch.stderr.isEmpty)
            let received = try Self.received(receiver)
            #expect(Self.spanNames(received["requests"] as? [[String: Any]] ?? []).contains("collect snapshot"))
            let resources = (received["metric_requests"] as? [[String: Any]] ?? []).flatMap {
                $0["resource_metrics"] as? [[String: Any]] ?? []
            }
            try #require(resources.count == 2, "one collection per tick")
            var cpuTimes: [[String: Double]] = []
            var starts: Set<String> = []
            for resource in resources {
                let attributes = (resource["resource"] as? [String: Any])?["attributes"] as? [String: Any]
                #expect(attributes?["host.name"] as? String == "local")
                #expect(attributes?["os.type"] as? String == "linux")
                #expect(attributes?["service.name"] as? String == "hostscope")
                #expect(attributes?["deployment.environment"] as? String == "lab")
                let metrics = resource["metrics"] as? [[String: Any]] ?? []
                let byName = Dictionary(
                    metrics.map { ($0["name"] as? String ?? "", $0) }, uniquingKeysWith: { a, _ in a })
                for (name, unit) in [
                    ("system.cpu.time", "s"), ("system.memory.usage", "By"), ("system.filesystem.usage", "By"),
                    ("system.network.io", "By"), ("system.disk.io", "By"),
                ] {
                    let metric = try #require(byName[name], "\(name) missing")
                    #expect(metric["unit"] as? String == unit)
                    #expect(metric["type"] as? String == "sum")
                    #expect(metric["aggregation_temporality"] as? Int == 2)
                }
                #expect(byName["system.cpu.time"]?["is_monotonic"] as? Bool == true)
                #expect(byName["system.network.io"]?["is_monotonic"] as? Bool == true)
                #expect(byName["system.memory.usage"]?["is_monotonic"] as? Bool == false)
                var times: [String: Double] = [:]
                for point in byName["system.cpu.time"]?["data_points"] as? [[String: Any]] ?? [] {
                    let labels = point["attributes"] as? [String: Any] ?? [:]
                    let key = "\(labels["cpu.mode"] ?? "?")/\(labels["cpu.logical_number"] ?? "?")"
                    times[key] = point["value"] as? Double
                    starts.insert(point["start_time_unix_nano"] as? String ?? "")
                }
                #expect(times.keys.contains("user/0"))
                #expect(times.keys.contains("interrupt/0"))
                cpuTimes.append(times)
                let states = (byName["system.memory.usage"]?["data_points"] as? [[String: Any]] ?? []).compactMap {
                    ($0["attributes"] as? [String: Any])?["system.memory.state"] as? String
                }
                #expect(Set(states) == ["used", "free", "buffers", "cached"])
            }
            // The kernel's counters, never reset: each one holds or grows from tick to tick, from one boot time.
            for (key, first) in cpuTimes[0] {
                #expect((cpuTimes[1][key] ?? -1) >= first, "\(key)")
            }
            #expect(starts.count == 1)
            #expect(starts.first.flatMap { UInt64($0) }.map { $0 > 0 } == true)
            // CPU shares need two reads: only the second tick has them, and they add up to the whole.
            let utilization = resources.map { resource in
                (resource["metrics"] as? [[String: Any]] ?? []).first {
                    $0["name"] as? String == "system.cpu.utilization"
                }
            }
            #expect(utilization[0] == nil)
            let shares = (utilization[1]?["data_points"] as? [[String: Any]] ?? []).compactMap {
                $0["value"] as? Double
            }
            #expect(abs(shares.reduce(0, +) - 1) < 0.01)
        }
    }

    @Test func watchExportsContinuouslyToAnOTLPEndpoint() async throws {
        let server = try SSHTestServer.shared()
        let database = Self.temporaryDatabase()
        defer { Self.remove(database) }
        let ndjson = NSTemporaryDirectory() + "hostscope-received-\(UUID().uuidString).jsonl"
        defer { try? FileManager.default.removeItem(atPath: ndjson) }
        try await withPythonServer("otlp_receiver.py", arguments: ["--ndjson", ndjson]) { receiver in
            let watch = try CLI.run(
                [
                    "watch", server.target, "--every", "500ms", "--count", "2", "--format", "ndjson", "--otlp-endpoint",
                    receiver.baseURL,
                ] + CLI.harnessArguments(server),
                environment: ["HOSTSCOPE_DB": database])
            #expect(watch.status == 0, "\(watch.stderr)")
            #expect(watch.stderr.isEmpty)
            let received = try Self.received(receiver)
            // Two ticks: two collections, one connect with its three phases, and the commands:
            // detection, the probe and its processes' details on the first tick; the probe on the
            // second, with details only if it lists a process the first did not.
            let names = (received["requests"] as? [[String: Any]] ?? []).flatMap { request in
                ((request["resource_spans"] as? [[String: Any]]) ?? []).flatMap { resource in
                    ((resource["scope_spans"] as? [[String: Any]]) ?? []).flatMap { scope in
                        ((scope["spans"] as? [[String: Any]]) ?? []).compactMap { $0["name"] as? String }
                    }
                }
            }
            #expect(names.filter { $0 == "collect snapshot" }.count == 2)
            #expect((4...5).contains(names.filter { $0 == "ssh exec" }.count))
            #expect(!names.contains("POST"))
            guard let report = try OTLPValidation.validate(URL(fileURLWithPath: ndjson)) else {
                print("validate_otlp_ndjson.py not found beside the checkout; OTLP validation skipped")
                return
            }
            #expect(report.status == 0, "\(report.output)")
            #expect(report.orphans == 0)
        }
        let list = try CLI.run(
            ["trace", "list", "--spans", "--kind", "snapshot"], environment: ["HOSTSCOPE_DB": database])
        #expect(list.stdout.split(separator: "\n").filter { $0.contains("collect snapshot") }.count == 2)
    }

    @Test func aWatchEndedBySIGTERMStoresTheSpansOfEveryTick() throws {
        let server = try SSHTestServer.shared()
        let database = Self.temporaryDatabase()
        defer { Self.remove(database) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CLI.binary)
        process.arguments =
            ["watch", server.target, "--every", "300ms", "--format", "ndjson"] + CLI.harnessArguments(server)
        var environment = ProcessInfo.processInfo.environment
        environment["HOSTSCOPE_DB"] = database
        environment.removeValue(forKey: "SSH_AUTH_SOCK")
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Wait for three records, then ask it to stop.
        var text = ""
        while text.split(separator: "\n").count < 3 {
            let data = output.fileHandleForReading.availableData
            if data.isEmpty { break }
            text += String(decoding: data, as: UTF8.self)
        }
        process.terminate()
        text += String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        // A tick reached after its whole interval (a busy machine) is recorded as skipped, not collected.
        let lines = text.split(separator: "\n")
        let ticks = lines.filter { !$0.contains("skipped: the previous tick") }.count
        #expect(lines.count >= 3)
        let list = try CLI.run(
            ["trace", "list", "--spans", "--kind", "snapshot", "--limit", "1000"],
            environment: ["HOSTSCOPE_DB": database])
        let collections = list.stdout.split(separator: "\n").filter { $0.contains("collect snapshot") }
        // Every tick that produced a record was stored, the one in flight at SIGTERM included when it finished.
        #expect(collections.count >= ticks)
        #expect(collections.count <= ticks + 1)
    }

    // MARK: - On a terminal

    /// A database holding the four traces of Fixtures/traces/sample-spans.ndjson.
    static func sampleDatabase() async throws -> String {
        let path = temporaryDatabase()
        let url = Repository.fixtures.appendingPathComponent("traces/sample-spans.ndjson")
        let spans = try String(contentsOf: url, encoding: .utf8).split(separator: "\n").map { line throws in
            StoredSpan(try FinishedSpan(flatJSONLine: String(line)))
        }
        let database = try await StorageDatabase.open(at: path)
        try await database.spans.insert(spans)
        try await database.close()
        return path
    }

    @Test func onAnEightyColumnTerminalTheListOfTracesAndAWaterfallFitAndMatchTheirGoldens() async throws {
        let database = try await Self.sampleDatabase()
        defer { Self.remove(database) }
        let list = try TerminalSession(["trace", "list", "--db", database], width: 80, height: 24)
        #expect(try list.waitForExit() == 0)
        let listed = try list.screen().filter { !$0.isEmpty }
        let expected = try goldenText("terminal/trace-list-80.txt").split(separator: "\n").map(String.init)
        #expect(listed == expected + ["4 trace(s), newest first; 0 span(s) dropped before reaching the database"])

        let show = try TerminalSession(["trace", "show", "4bf92f35", "--db", database], width: 80, height: 40)
        #expect(try show.waitForExit() == 0)
        let shown = try show.screen().joined(separator: "\n").trimmingCharacters(in: .newlines) + "\n"
        #expect(
            shown
                == (try goldenText("terminal/trace-show-80.txt")).replacingOccurrences(
                    of: " +\n", with: "\n", options: .regularExpression))
        for session in [list, show] {
            let joined = try session.tmux(["capture-pane", "-p", "-J", "-t", "0"]).split(separator: "\n")
            #expect(joined.allSatisfy { $0.count <= 80 })
        }
    }

    @Test func anIDPrefixThatNamesATraceAndASpanIsRefusedAndAnExactIDWins() async throws {
        let database = try await Self.sampleDatabase()
        defer { Self.remove(database) }
        // "0" begins two span ids and a trace id; "0e0e" one trace id and no span id.
        let ambiguous = try CLI.run(["trace", "show", "0", "--db", database])
        #expect(ambiguous.status == 1)
        #expect(ambiguous.stderr.contains("matches several") && ambiguous.stderr.contains("type more digits"))
        let trace = try CLI.run(["trace", "show", "0e0e", "--db", database])
        #expect(trace.status == 0, "\(trace.stderr)")
        #expect(trace.stdout.hasPrefix("trace 0e0e4736a3ce929d4bf92f3577b34da6\ninvoke_agent hostscope"))
        let span = try CLI.run(["trace", "show", "7d4e5f60c93f1b2a", "--db", database])
        #expect(span.status == 0, "\(span.stderr)")
        #expect(span.stdout.contains("▶ execute_tool grep"))
        #expect(span.stdout.contains("span 7d4e5f60c93f1b2a  execute_tool grep"))
    }
}
