import AgentTracing
import Foundation
import HostStats
import HostscopeCore
import SSHTransport
import Storage
import TestSupport
import Testing
import Tracing

/// Spans of real work against the harness sshd: a snapshot's tree, failed commands, connect failures,
/// and the persister that stores spans in SQLite.
@Suite(.serialized) struct TracingInstrumentationTests {
    static func tracer(capacity: Int = 1_000) -> RingBufferTracer {
        RingBufferTracer(capacity: capacity, resource: TraceRuntime.resource)
    }

    static func options(_ server: SSHTestServer) -> SSHConnectionOptions {
        SSHConnectionOptions(
            displayName: "harness", hostName: server.host, port: server.port, user: server.user,
            identityFiles: [server.keyPath], identitiesOnly: true, knownHostsFiles: [server.knownHostsPath])
    }

    @Test func aSnapshotIsOneTraceOfConnectAndCommandSpansUnderTheCollection() async throws {
        let server = try SSHTestServer.shared()
        let tracer = Self.tracer()
        let records = await withTracer(tracer) {
            await SnapshotService.collect([.ssh(Self.options(server))], options: CollectorOptions())
        }
        guard case .snapshot = records.first else {
            Issue.record("the snapshot failed: \(records)")
            return
        }
        let spans = tracer.finishedSpans()
        let root = try #require(spans.first { $0.name == "collect snapshot" })
        #expect(root.parentSpanID == nil)
        #expect(root.attributes["hostscope.host"] == "harness")
        #expect(root.attributes["hostscope.collector"] == "proc")
        #expect(root.attributes["hostscope.snapshot.warnings"] == 0)
        #expect(root.status.code == .unset)
        #expect(Set(spans.map(\.traceID)) == [root.traceID])

        let connect = try #require(spans.first { $0.name == "ssh connect harness" })
        #expect(connect.parentSpanID == root.spanID)
        #expect(connect.kind == .client)
        #expect(connect.attributes["server.address"] == .string(server.host))
        #expect(connect.attributes["server.port"] == .int(Int64(server.port)))
        #expect(connect.attributes["hostscope.ssh.host_key.type"] == "ssh-ed25519")
        #expect(connect.attributes["hostscope.ssh.host_key.status"] == "known")
        let fingerprint = try #require(connect.attributes["hostscope.ssh.host_key.fingerprint"]?.stringValue)
        #expect(fingerprint.hasPrefix("SHA256:"))
        #expect(connect.attributes["hostscope.ssh.auth.method"]?.stringValue?.hasPrefix("publickey") == true)

        let phases = spans.filter { $0.parentSpanID == connect.spanID }.sorted {
            $0.startNanoseconds < $1.startNanoseconds
        }
        #expect(phases.map(\.name) == ["ssh tcp connect", "ssh handshake", "ssh auth"])
        for phase in phases {
            #expect(phase.startNanoseconds >= connect.startNanoseconds)
            #expect(phase.endNanoseconds <= connect.endNanoseconds)
        }
        // Back to back: each phase ends where the next begins.
        #expect(phases[0].endNanoseconds == phases[1].startNanoseconds)
        #expect(phases[1].endNanoseconds == phases[2].startNanoseconds)
        #expect(phases[1].durationNanoseconds > 0)
        #expect(phases[1].attributes["hostscope.ssh.cipher"] == "aes128-ctr")
        #expect(phases[2].durationNanoseconds > 0)

        let execs = spans.filter { $0.name == "ssh exec" }
        #expect(execs.count == 3)  // platform detection, the probe, the listed processes' command lines and owners
        for exec in execs {
            #expect(exec.parentSpanID == root.spanID)
            #expect(exec.attributes["process.exit.code"] == 0)
            #expect((exec.attributes["hostscope.process.stdout.bytes"]?.intValue ?? 0) > 0)
            let arguments = exec.attributes["process.command_args"]
            guard case .stringArray(let texts) = arguments else {
                Issue.record("process.command_args is \(String(describing: arguments))")
                continue
            }
            #expect(texts.count == 1)
            #expect(texts[0].utf8.count <= 512)
            #expect(exec.startNanoseconds >= connect.endNanoseconds)
        }
        // The probe is a long script: the span keeps its start and says how long it was.
        let probe = try #require(
            execs.max {
                ($0.attributes["hostscope.command.bytes"]?.intValue ?? 0)
                    < ($1.attributes["hostscope.command.bytes"]?.intValue ?? 0)
            })
        #expect((probe.attributes["hostscope.command.bytes"]?.intValue ?? 0) > 512)

        let lines = OTLPJSONEncoder(scope: TraceRuntime.scope).encode(spans, droppedSpanCount: tracer.droppedSpanCount)
        guard let report = try OTLPValidation.validate(lines) else {
            // The validator lives in the shared folder beside the checkout; a plain clone has none.
            print("validate_otlp_ndjson.py not found beside the checkout; OTLP validation skipped")
            return
        }
        #expect(report.status == 0, "\(report.output)")
        #expect(report.failed == 0)
        #expect(report.passed == 1)
        #expect(report.orphans == 0)
    }

    @Test func aFailedCommandIsAnErrorSpanCarryingItsStderrLines() async throws {
        let server = try SSHTestServer.shared()
        let tracer = Self.tracer()
        let connection = HostConnection(options: Self.options(server))
        let output = try await withTracer(tracer) {
            try await connection.run(
                "echo 'first problem' >&2; echo 'second problem' >&2; exit 3", timeout: .seconds(10))
        }
        await connection.close()
        #expect(output.exitStatus == 3)
        let exec = try #require(tracer.finishedSpans().first { $0.name == "ssh exec" })
        #expect(exec.status == FinishedSpan.Status(code: .error, message: "exit status 3"))
        #expect(exec.attributes["process.exit.code"] == 3)
        #expect(exec.attributes["hostscope.process.stderr.bytes"] == 29)
        let event = try #require(exec.events.first { $0.name == "stderr" })
        #expect(
            event.attributes["hostscope.process.stderr.lines"] == .stringArray(["first problem", "second problem"]))
    }

    @Test func aCommandOnTheLocalMachineIsALocalExecSpan() async throws {
        let tracer = Self.tracer()
        _ = try await withTracer(tracer) {
            try await LocalCommandRunner().run("echo out; echo err >&2; exit 1", timeout: .seconds(10))
        }
        let exec = try #require(tracer.finishedSpans().first)
        #expect(exec.name == "local exec")
        #expect(exec.attributes["hostscope.host"] == "local")
        #expect(exec.attributes["process.exit.code"] == 1)
        #expect(exec.attributes["hostscope.process.stdout.bytes"] == 4)
        #expect(exec.status.code == .error)
        #expect(exec.events.first?.attributes["hostscope.process.stderr.lines"] == .stringArray(["err"]))
    }

    @Test func aConnectThatFailsIsAnErrorSpanNamingTheFailureKind() async throws {
        let tracer = Self.tracer()
        let refused = HostConnection(
            options: SSHConnectionOptions(
                displayName: "closed", hostName: "127.0.0.1", port: 1, user: "x", knownHostsFiles: []))
        let record = await withTracer(tracer) {
            await SnapshotTracing.collect(host: "closed", options: CollectorOptions()) {
                await HostCollector(host: "closed", runner: refused).snapshot()
            }
        }
        guard case .failure(let failure) = record else {
            Issue.record("a closed port yielded a snapshot")
            return
        }
        let spans = tracer.finishedSpans()
        let connect = try #require(spans.first { $0.name == "ssh connect closed" })
        #expect(connect.status.code == .error)
        #expect(connect.status.message?.isEmpty == false)
        #expect(connect.attributes["hostscope.error.kind"] == "connect")
        #expect(connect.events.contains { $0.name == "exception" })
        let root = try #require(spans.first { $0.name == "collect snapshot" })
        #expect(root.status == FinishedSpan.Status(code: .error, message: failure.message))
        #expect(root.attributes["hostscope.error.kind"] == "connect")
        #expect(connect.parentSpanID == root.spanID)
    }

    @Test func thePersisterStoresSpansInBatchesAndCountsThoseOverwrittenBeforeItRead() async throws {
        let path = NSTemporaryDirectory() + "hostscope-persister-\(UUID().uuidString).sqlite"
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let database = try await StorageDatabase.open(at: path)
        let tracer = Self.tracer(capacity: 5)
        let persister = SpanPersister(tracer: tracer, database: database)
        withTracer(tracer) {
            withSpan("collect snapshot") { span in
                span.setAttribute("hostscope.host", value: "web1")
                withSpan("ssh exec") { _ in }
            }
        }
        await persister.flush()
        #expect(try await database.spans.count() == 2)
        for index in 0..<12 {
            withTracer(tracer) { withSpan("span \(index)") { _ in } }
        }
        await persister.shutdown()
        #expect(try await database.spans.count() == 7)
        #expect(try await database.meta.integer(SpanPersister.droppedSpansKey) == 7)
        let stored = try await database.spans.recent(SpanFilter(host: "web1"))
        #expect(stored.map(\.name) == ["collect snapshot"])
        #expect(stored.first?.kind == "snapshot")
        let exec = try #require(try await database.spans.recent(SpanFilter(kind: "ssh")).first)
        #expect(exec.parentSpanID == stored.first?.spanID)
        #expect(try exec.finishedSpan().name == "ssh exec")
        try await database.close()
    }

    @Test func thePersisterPrunesSpansOlderThanTheRetention() async throws {
        let path = NSTemporaryDirectory() + "hostscope-prune-\(UUID().uuidString).sqlite"
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let database = try await StorageDatabase.open(at: path)
        let now = SystemTracingClock().nanosecondsSinceEpoch()
        let clock = ManualTracingClock(start: now - 3 * 3_600_000_000_000)  // three hours ago
        let old = RingBufferTracer(capacity: 10, resource: TraceRuntime.resource, clock: clock)
        withTracer(old) { withSpan("old") { _ in } }
        let keepAll = SpanPersister(tracer: old, database: database)
        await keepAll.shutdown()
        #expect(try await database.spans.count() == 1)
        let tracer = Self.tracer()
        withTracer(tracer) { withSpan("new") { _ in } }
        let pruning = SpanPersister(tracer: tracer, database: database, retention: .seconds(3600))
        await pruning.shutdown()
        #expect(try await database.spans.recent().map(\.name) == ["new"])
        try await database.close()
    }
}
