import AgentTracing
import Foundation
import HostscopeCore
import Storage
import TestSupport
import Testing

/// `hostscope mcp` against the harness sshd, driven by the official Python MCP SDK and by raw JSON-RPC lines
/// (`Scripts/mcp_client_check.py`, one scenario per test): every tool called and its structured result checked
/// against its output schema, resources and prompts, the refusals (host outside the set, path outside --root,
/// wrong argument types, the rate limit) as tool errors, the protocol faults (malformed JSON, unknown method,
/// a batch, an oversized request, a call before initialize) as JSON-RPC errors, cancelling a long grep, and
/// exit 0 when stdin closes. The spans of the calls are then read from the database.
@Suite(.serialized) struct MCPStdioTests {
    let server: SSHTestServer
    let directory: String
    let root: String
    let config: String
    let database: String

    init() throws {
        server = try SSHTestServer.shared()
        directory = NSTemporaryDirectory() + "hostscope-mcp-\(UUID().uuidString)"
        root = directory + "/root"
        try FileManager.default.createDirectory(atPath: root + "/logs", withIntermediateDirectories: true)
        try "first line\nthe needle is here\nlast line\n".write(
            toFile: root + "/notes.txt", atomically: true, encoding: .utf8)
        try "one\ntwo\n".write(toFile: root + "/logs/app.txt", atomically: true, encoding: .utf8)
        config = directory + "/ssh_config"
        try String(repeating: "a line of a big file\n", count: 2000).write(
            toFile: root + "/big.txt", atomically: true, encoding: .utf8)
        // down1: nothing listens on port 1.
        let down =
            "Host down1\n    HostName 127.0.0.1\n    Port 1\n    User \(server.user)\n    IdentityFile \(server.keyPath)\n"
        try (server.configBlock("web1") + down).write(toFile: config, atomically: true, encoding: .utf8)
        database = directory + "/hostscope.sqlite"
    }

    func run(_ scenario: String, _ extra: [String] = []) throws -> CLIResult {
        let script = Repository.root.appendingPathComponent("Scripts/mcp_client_check.py").path
        let line =
            ([
                "python3", script, "--binary", CLI.binary, "--ssh-config", config, "--host", "web1", "--root", root,
                "--db", database, "--scenario", scenario,
            ] + extra).map(CLI.shellQuoted).joined(separator: " ")
        return try CLI.runShell("timeout 300 " + line)
    }

    func spans(of traceID: String) async throws -> [FinishedSpan] {
        let service = TraceService(settings: CoreSettings(database: database))
        guard case .trace(let trace) = try await service.show(traceID) else { return [] }
        var all: [FinishedSpan] = []
        func walk(_ nodes: [TraceTree.Node]) {
            for node in nodes {
                all.append(node.span)
                walk(node.children)
            }
        }
        walk(trace.forest)
        return all
    }

    /// Every tool, resource and prompt through the SDK client; the client's traceparent makes its span the parent
    /// of `tools/call host_snapshot`, whose SSH spans are its children.
    @Test func theSDKClientCallsEveryToolAndEachResultFitsItsSchema() async throws {
        let traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
        let parent = "00f067aa0ba902b7"
        let result = try run("tour", ["--trace-id", traceID, "--parent-span-id", parent])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let spans = try await spans(of: traceID)
        let call = try #require(spans.first { $0.name == "tools/call host_snapshot" }, "\(spans.map(\.name))")
        #expect(call.parentSpanID?.hex == parent)
        #expect(call.kind == .server)
        let attributes = call.attributes
        #expect(attributes["mcp.method.name"]?.stringValue == "tools/call")
        #expect(attributes["gen_ai.operation.name"]?.stringValue == "execute_tool")
        #expect(attributes["gen_ai.tool.name"]?.stringValue == "host_snapshot")
        #expect(attributes["gen_ai.tool.call.id"]?.stringValue != nil)
        #expect(attributes["jsonrpc.request.id"]?.stringValue != nil)
        #expect(attributes["mcp.session.id"]?.stringValue?.isEmpty == false)
        #expect(attributes["mcp.protocol.version"]?.stringValue == "2025-11-25")
        #expect(attributes["network.transport"]?.stringValue == "pipe")
        // Arguments stay out of spans unless the user opts in.
        #expect(attributes["gen_ai.tool.call.arguments"] == nil)
        let children = spans.filter { $0.parentSpanID == call.spanID }
        #expect(children.contains { $0.name.hasPrefix("ssh ") }, "\(spans.map(\.name))")

        // Every span of the session exported as OTLP lines validates; the one orphan is the call whose parent is
        // the client's span.
        let otlpFile = directory + "/spans.jsonl"
        let export = try CLI.run(["trace", "export", "--format", "otlp", "--output", otlpFile, "--db", database])
        #expect(export.status == 0, "\(export.stderr)")
        guard let report = try OTLPValidation.validate(URL(fileURLWithPath: otlpFile)) else {
            print("validate_otlp_ndjson.py not found beside the checkout; OTLP validation skipped")
            return
        }
        #expect(report.status == 0, "\(report.output)")
        #expect(report.failed == 0)
        #expect(report.orphans == 1, "\(report.output)")
    }

    /// A `watch --rules` leaves a firing alert in the database; `list_alerts` reads it back with its labels and
    /// summary, filtered by state and host, each result fitting the tool's output schema.
    @Test func listAlertsReadsTheAlertsAWatchStored() throws {
        let rules = directory + "/rules.yml"
        try AlertTestRules.memoryInUse.write(toFile: rules, atomically: true, encoding: .utf8)
        let watch = try CLI.run(
            [
                "watch", "web1", "--ssh-config", config, "--every", "300ms", "--count", "4", "--rules", rules, "--db",
                database, "-o", directory + "/out.ndjson",
            ] + CLI.harnessArguments(server))
        #expect(watch.status == 0, "\(watch.stderr)")
        let result = try run("alerts")
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    }

    /// With --capture-message-content, a tool call's span carries its arguments and result.
    @Test func argumentsAndResultsReachSpansOnlyWhenAskedFor() async throws {
        let traceID = "5bf92f3577b34da6a3ce929d0e0e4737"
        let result = try run("capture", ["--trace-id", traceID, "--parent-span-id", "00f067aa0ba902b8"])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let call = try #require(try await spans(of: traceID).first { $0.name == "tools/call list_hosts" })
        #expect(call.attributes["gen_ai.tool.call.arguments"]?.stringValue == #"{"limit":5}"#)
        #expect(call.attributes["gen_ai.tool.call.result"]?.stringValue?.contains(#""name":"web1""#) == true)
    }

    /// Without host arguments the set is ssh_config's Host entries without wildcards; with none, one sentence and
    /// exit 2 before anything is read from stdin.
    @Test func withoutHostsTheConfiguredOnesAreTheSet() throws {
        let patterned = directory + "/patterned_config"
        try ("Host web-*\n    User nobody\n" + server.configBlock("web1 alias1")).write(
            toFile: patterned, atomically: true, encoding: .utf8)
        let requests = [
            #"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
            #"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_hosts","arguments":{}}}"#,
        ]
        let script =
            "(printf '%s\\n' \(requests.map(CLI.shellQuoted).joined(separator: " ")); sleep 2) | "
            + ([CLI.binary, "mcp", "--ssh-config", patterned, "--db", database].map(CLI.shellQuoted)
                .joined(separator: " "))
        let result = try CLI.runShell(script)
        #expect(result.status == 0, "\(result.stderr)")
        let answer = try #require(result.stdout.split(separator: "\n").last)
        #expect(answer.contains(#"\"name\":\"web1\""#) && answer.contains(#"\"name\":\"alias1\""#), "\(answer)")
        #expect(!answer.contains("web-*"))

        let empty = directory + "/empty_config"
        FileManager.default.createFile(atPath: empty, contents: Data())
        let none = try CLI.runShell(
            ([CLI.binary, "mcp", "--ssh-config", empty].map(CLI.shellQuoted).joined(separator: " ")) + " </dev/null")
        #expect(none.status == 64)
        #expect(none.stdout.isEmpty)
        #expect(
            none.stderr
                == "hostscope: no hosts for the tools: name hosts or 'pattern*' arguments, pass --hosts-file, or add "
                + "Host entries to ~/.ssh/config\n")
    }

    @Test func refusalsAreToolErrorsTheModelReads() throws {
        let result = try run("errors")
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    }

    /// A host that does not answer is a tool error naming it, not a protocol error.
    @Test func aHostThatIsDownIsAToolErrorNamingIt() throws {
        let result = try run("down")
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    }

    /// A result past --max-result-bytes is cut, says truncated and how to ask for less; a list past its limit says
    /// has_more.
    @Test func resultsStayWithinTheirBoundsAndSaySo() throws {
        let result = try run("bounds")
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    }

    @Test func theFourthCallInAMinuteIsRefusedUnderALimitOfThree() throws {
        let result = try run("rate-limit")
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    }

    /// Malformed JSON, an unknown method, a batch, an oversized request and a call before initialize are JSON-RPC
    /// errors; the session goes on; closing stdin ends it with exit 0 and stdout held only JSON-RPC.
    @Test func protocolFaultsAreJSONRPCErrorsAndClosingStdinExitsZero() throws {
        let result = try run("raw")
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    }

    /// A grep through /usr sends progress, and notifications/cancelled stops it: no answer, no more progress,
    /// and its span ends marked cancelled.
    @Test func cancellingALongGrepStopsIt() async throws {
        let result = try run("cancel")
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let service = TraceService(settings: CoreSettings(database: database))
        let recent = try await service.recent(limit: 50)
        let grep = try #require(recent.spans.first { $0.name == "tools/call grep" }, "\(recent.spans.map(\.name))")
        #expect(grep.json.contains("cancelled"))
    }
}
