import AgentTracing
import Foundation
import HostscopeCore
import Storage
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `hostscope serve`'s `/mcp` (MCP over Streamable HTTP) watching the harness sshd, driven by the official Python
/// MCP SDK and by raw HTTP requests (`Scripts/mcp_http_check.py`, one scenario per test): every tool through the
/// SDK client, the token, the `Origin` check and the bad messages, resource updates as the watch records the
/// host, and a client that goes away in the middle of a long grep.
@Suite(.serialized) struct MCPHTTPTests {
    let server: SSHTestServer
    let directory: String
    let root: String
    let config: String
    let tokenFile: String
    let database: String

    init() throws {
        server = try SSHTestServer.shared()
        directory = NSTemporaryDirectory() + "hostscope-mcp-http-\(UUID().uuidString)"
        root = directory + "/root"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        try "first line\nthe needle is here\nlast line\n".write(
            toFile: root + "/notes.txt", atomically: true, encoding: .utf8)
        config = directory + "/ssh_config"
        try server.configBlock("web1").write(toFile: config, atomically: true, encoding: .utf8)
        tokenFile = directory + "/token"
        try "0123456789abcdef0123456789abcdef\n".write(toFile: tokenFile, atomically: true, encoding: .utf8)
        chmod(tokenFile, 0o600)
        database = directory + "/hostscope.sqlite"
    }

    /// Runs `scenario` against a serve of web1 that ticks every second.
    func run(_ scenario: String, _ extra: [String] = []) throws -> (result: CLIResult, serve: String) {
        let serve = try RunningServe(
            [
                "web1", "--ssh-config", config, "--every", "1s", "--listen", "127.0.0.1:0", "--token-file", tokenFile,
                "--db", database,
            ] + extra + CLI.harnessArguments(server), directory: directory)
        defer { _ = serve.stop() }
        try serve.waitUntilListening()
        let script = Repository.root.appendingPathComponent("Scripts/mcp_http_check.py").path
        let line =
            [
                "python3", script, "--url", serve.url("/mcp"), "--token-file", tokenFile, "--host", "web1", "--root",
                root, "--scenario", scenario, "--serve-pid", String(serve.process.pid), "--sshd-port",
                String(server.port),
            ].map(CLI.shellQuoted).joined(separator: " ")
        return (try CLI.runShell("timeout 300 " + line), serve.log)
    }

    /// Every tool through the SDK client over Streamable HTTP, each result checked against its output schema;
    /// `host_snapshot` answers from the watch's latest record; the request spans say `network.transport=tcp`.
    @Test func theSDKClientCallsEveryToolOverHTTPAndEachResultFitsItsSchema() async throws {
        let (result, log) = try run("tour")
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)\(log.suffix(3000))")
        let service = TraceService(settings: CoreSettings(database: database))
        let spans = try await service.recent(host: "web1", limit: 1000).spans
        let stored = try #require(spans.first { $0.name == "tools/call host_snapshot" }, "\(spans.map(\.name))")
        guard case .trace(let trace) = try await service.show(stored.traceID) else {
            Issue.record("the trace \(stored.traceID) is not stored")
            return
        }
        let span = try #require(trace.forest.first?.span)
        #expect(span.name == "tools/call host_snapshot")
        #expect(span.attributes["network.transport"]?.stringValue == "tcp")
        #expect(span.attributes["mcp.session.id"]?.stringValue?.count == 32)
    }

    /// serve evaluates a rule that fires at once; `list_alerts` shows the alert live, as `/api/v1/alerts` does.
    @Test func listAlertsShowsServesFiringAlertLive() throws {
        let rules = directory + "/rules.yml"
        try AlertTestRules.memoryInUse.write(toFile: rules, atomically: true, encoding: .utf8)
        let (result, log) = try run("alerts", ["--rules", rules])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)\(log.suffix(3000))")
    }

    @Test func noTokenIsRefusedAForeignOriginIsForbiddenAndBadMessagesGetClearErrors() throws {
        let (result, log) = try run("guards")
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)\(log.suffix(3000))")
    }

    @Test func aSubscribedSnapshotIsAnnouncedAsTheWatchRecordsTheHost() throws {
        let (result, log) = try run("subscribe")
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)\(log.suffix(3000))")
    }

    /// The client closes its stream in the middle of a grep through /usr: the host's SFTP server stops reading
    /// within seconds and holds none of the grep's files open (it reads `/proc` of the test user's processes,
    /// so only as root).
    @Test(.enabled(if: getuid() == 0)) func aClientThatGoesAwayMidCallStopsTheWorkAndLeavesNoFileOpen() throws {
        let (result, log) = try run("disconnect")
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)\(log.suffix(3000))")
    }

    /// The same with a client that takes JSON only (no event stream): the answer is written as it comes (a newline
    /// a second until the JSON), so that its going away is noticed and the grep stops as well.
    @Test(.enabled(if: getuid() == 0)) func aJSONClientThatGoesAwayMidCallStopsTheWorkToo() throws {
        let (result, log) = try run("disconnect-json")
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)\(log.suffix(3000))")
    }
}
