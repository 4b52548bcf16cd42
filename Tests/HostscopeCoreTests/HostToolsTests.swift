import AgentTracing
import Chat
import Foundation
import HostscopeCore
import OrderedJSON
import SSHTransport
import TestSupport
import Testing
import Tracing

#if canImport(Glibc)
    import Glibc
#endif

/// The chat's host tools on the harness sshd, over a workspace tree in /tmp (the harness host is this machine).
@Suite(.serialized) struct HostToolsTests {
    static func host(_ server: SSHTestServer) -> ResolvedHost {
        .ssh(
            SSHConnectionOptions(
                displayName: "harness", hostName: server.host, port: server.port, user: server.user,
                identityFiles: [server.keyPath], identitiesOnly: true, knownHostsFiles: [server.knownHostsPath]))
    }

    static func run(_ tools: HostTools, _ name: String, _ input: JSONValue) async throws -> ToolOutput {
        // What the session does first: the call must pass the tool's schema.
        let definition = try #require(tools.tools.first { $0.name == name })
        #expect(JSONSchemaValidator.validate(input, against: definition.inputSchema) == [], "\(name) \(input)")
        return try await tools.execute(name: name, input: input, context: ToolContext(callID: "t", span: nil))
    }

    @Test func everySchemaIsAClosedObjectThatTakesNoHostAndNoCommand() {
        let ssh = HostToolCatalog.definitions(fileTools: true)
        #expect(ssh.map(\.name) == HostToolCatalog.monitoringTools + HostToolCatalog.fileTools)
        #expect(HostToolCatalog.definitions(fileTools: false).map(\.name) == HostToolCatalog.monitoringTools)
        for tool in ssh {
            #expect(tool.inputSchema["type"] == "object")
            #expect(tool.inputSchema["additionalProperties"] == false)
            let properties = tool.inputSchema["properties"]?.objectValue?.keys ?? []
            #expect(
                !properties.contains { ["host", "command", "cmd", "content", "data"].contains($0) }, "\(tool.name)")
            // Extra arguments, e.g. a host, are refused before the tool runs.
            let smuggled = JSONValue.object(["host": "db1", "pattern": "x", "path": "a"])
            #expect(!JSONSchemaValidator.validate(smuggled, against: tool.inputSchema).isEmpty, "\(tool.name)")
        }
        let readFile = ssh.first { $0.name == "read_file" }!
        #expect(
            JSONSchemaValidator.validate(.object(["path": "a", "max_bytes": 1_000_000]), against: readFile.inputSchema)
                .count == 1)
        #expect(JSONSchemaValidator.validate(.object([:]), against: readFile.inputSchema).count == 1)
    }

    @Test func theFileToolsReadTheWorkspaceCappedAndSayWhenTheyCut() async throws {
        let server = try SSHTestServer.shared()
        let tree = try FilesTestTree(prefix: "hostscope-chat-tools")
        defer { tree.remove() }
        let tools = HostTools(host: Self.host(server), root: tree.root)
        defer { Task { await tools.close() } }

        let listing = try await Self.run(tools, "list_dir", .object(["path": "src"]))
        #expect(!listing.isError)
        #expect(listing.text.contains("app.py"))
        #expect(listing.text.contains("deep/"))

        let whole = try await Self.run(tools, "read_file", .object(["path": "hello.txt"]))
        #expect(whole.text.hasSuffix("\nhello\nworld\n"))
        let cut = try await Self.run(tools, "read_file", .object(["path": "numbered.log", "max_bytes": 100]))
        #expect(cut.text.contains("showing bytes 0–100"))
        #expect(cut.text.contains("line 1\nline 2\n"))
        #expect(cut.text.contains("call read_file with offset 100 for more"))
        let next = try await Self.run(
            tools, "read_file", .object(["path": "numbered.log", "offset": 100, "max_bytes": 10]))
        #expect(next.text.contains("showing bytes 100–110"))

        let binary = try await Self.run(tools, "read_file", .object(["path": "image.png"]))
        #expect(binary.text.contains("is a binary file"))
        #expect(!binary.text.contains("PNG\r\n"))

        let tail = try await Self.run(tools, "tail_log", .object(["path": "numbered.log", "lines": 3]))
        #expect(tail.text.hasSuffix("\nline 998\nline 999\nline 1000\n"))

        let grep = try await Self.run(tools, "grep", .object(["pattern": "needle", "path": "src", "include": "*.py"]))
        #expect(grep.text.contains("src/app.py:1:print('needle')"))
        #expect(!grep.text.contains("app.js"))
        let few = try await Self.run(
            tools, "grep", .object(["pattern": "line", "path": "numbered.log", "max_matches": 5]))
        #expect(few.text.contains("stopped at 5 matching lines"))

        let found = try await Self.run(tools, "find_files", .object(["name": "*.py", "type": "file"]))
        #expect(found.text.contains("src/app.py"))
        #expect(found.text.contains("src/deep/deeper/x.py"))

        for (name, input) in [
            ("read_file", JSONValue.object(["path": "/etc/hostname"])),
            ("read_file", .object(["path": "outside-file"])),
            ("list_dir", .object(["path": "../"])), ("grep", .object(["pattern": "root", "path": "/etc"])),
        ] {
            let refused = try await Self.run(tools, name, input)
            #expect(refused.isError, "\(name) \(input)")
            #expect(refused.text.contains("outside the workspace"), "\(refused.text)")
        }
        let missing = try await Self.run(tools, "read_file", .object(["path": "nope.txt"]))
        #expect(missing.isError)
        #expect(missing.text.contains("no such file"))
    }

    @Test func theFileToolsNeverShowAFileOutsideTheRootWhileNamesAreSwappedForLinks() async throws {
        let race = try RaceTree()
        defer { race.remove() }
        let tools = HostTools(host: Self.host(try SSHTestServer.shared()), root: race.workspace)
        defer { Task { await tools.close() } }
        let before = try await Self.run(tools, "read_file", .object(["path": "race"]))
        #expect(before.text.hasSuffix(race.decoy), "\(before.text)")

        var escapes: [String] = []
        var swaps = 0
        // A file exchanged with a link to a file outside, then a directory with a link to a directory outside.
        let plans: [(PathSwapper, [(String, JSONValue)])] = [
            (race.fileSwapper(), [("read_file", .object(["path": "race"])), ("tail_log", .object(["path": "race"]))]),
            (
                race.directorySwapper(),
                [("read_file", .object(["path": "sub/inside.txt"])), ("list_dir", .object(["path": "sub"]))]
            ),
        ]
        for (swapper, calls) in plans {
            try swapper.start()
            for round in 0..<60 {
                for (name, input) in calls + [("grep", .object(["pattern": "LINE", "path": "."]))] {
                    let output = try await Self.run(tools, name, input)
                    // Refusals name where the path resolved to; a listing must not name the outside file.
                    let listedOutside = name == "list_dir" && !output.isError && output.text.contains("secret.txt")
                    if output.text.contains("TOP-SECRET") || listedOutside {
                        escapes.append("\(name) round \(round): \(output.text)")
                    }
                }
            }
            swaps += try swapper.stop()
        }
        #expect(swaps >= 200, "\(swaps) swaps")
        #expect(escapes.isEmpty, "\(escapes.count) escapes, the first: \(escapes.first ?? "")")
    }

    @Test func theMonitoringToolsReportTheHostWithTheProbesExitCode() async throws {
        let tools = HostTools(host: Self.host(try SSHTestServer.shared()))
        defer { Task { await tools.close() } }
        let snapshot = try await Self.run(tools, "host_snapshot", .object([:]))
        #expect(snapshot.exitCode == 0)
        let json = try JSONParser.parse(snapshot.text)
        #expect(json["schema"] == "hostscope.snapshot/1")
        #expect((json["processes"]?.arrayValue?.count ?? 99) <= 10)
        let top = try await Self.run(tools, "top_processes", .object(["sort_by": "memory", "limit": 3]))
        #expect(top.text.contains("3 of "))
        #expect(top.text.split(separator: "\n").count == 5)
        let disk = try await Self.run(tools, "disk_usage", .object(["path": "/tmp"]))
        #expect(disk.text.contains("the filesystem holding /tmp"))
        #expect(disk.text.split(separator: "\n").count == 3)
        let relative = try await Self.run(tools, "disk_usage", .object(["path": "tmp"]))
        #expect(relative.isError)
    }

    /// A host nothing listens for (port 1): the monitoring and file tools say so as errors that name it once.
    @Test func aHostThatIsDownIsNamedOnceInTheError() async throws {
        let server = try SSHTestServer.shared()
        let down = ResolvedHost.ssh(
            SSHConnectionOptions(
                displayName: "down1", hostName: "127.0.0.1", port: 1, user: server.user,
                identityFiles: [server.keyPath], identitiesOnly: true, knownHostsFiles: [server.knownHostsPath]))
        let tools = HostTools(host: down)
        defer { Task { await tools.close() } }
        for name in ["host_snapshot", "list_dir"] {
            let output = try await Self.run(tools, name, .object([:]))
            #expect(output.isError)
            #expect(output.text.hasPrefix("down1: cannot connect to 127.0.0.1 port 1"), "\(name): \(output.text)")
            #expect(!output.text.contains("down1: down1:"), "\(name): \(output.text)")
        }
    }

    @Test func theLocalHostOffersOnlyTheMonitoringTools() async throws {
        let tools = HostTools(host: .local)
        #expect(tools.tools.map(\.name) == HostToolCatalog.monitoringTools)
        let refused = try await tools.execute(
            name: "read_file", input: .object(["path": "/etc/hostname"]), context: ToolContext(callID: "t", span: nil))
        #expect(refused.isError)
    }

    @Test func aToolsSSHAndSFTPSpansAreChildrenOfTheSpanItRunsIn() async throws {
        let tracer = RingBufferTracer(capacity: 1_000, resource: TraceRuntime.resource)
        let tree = try FilesTestTree(prefix: "hostscope-chat-spans")
        defer { tree.remove() }
        let tools = HostTools(host: Self.host(try SSHTestServer.shared()), root: tree.root)
        let observer = TracingChatObserver(tracer: tracer)
        let turn = TurnInfo(number: 1, provider: .openAI, model: "m")
        let call = ToolCall(id: "call_1", name: "read_file", input: .object(["path": "hello.txt"]))
        let span = observer.toolStarted(call, turn: turn, parent: nil)
        let output = await withTracer(tracer) {
            await observer.withSpan(span) {
                (try? await tools.execute(
                    name: call.name, input: call.input, context: ToolContext(callID: "call_1", span: span)))
                    ?? ToolOutput(text: "failed", isError: true)
            }
        }
        observer.toolEnded(
            call,
            result: ToolResult(
                id: "call_1", name: "read_file", isError: false, durationMs: 1, exitCode: nil, output: output.text,
                span: span))
        await tools.close()
        #expect(!output.isError)
        let spans = tracer.finishedSpans()
        let tool = try #require(spans.first { $0.name == "execute_tool read_file" })
        let children = spans.filter { $0.parentSpanID == tool.spanID }.map(\.name)
        #expect(children.contains("files.cat"))
        #expect(children.contains { $0.hasPrefix("ssh connect") })
    }

    /// Writes a file the harness user can read.
    static func write(_ text: String, to path: String) throws {
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        chmod(path, 0o644)
    }

    @Test func resultsAreScrubbedOfTheProcesssSecretsAndHostscopesOwnArgumentsAreHidden() async throws {
        let marker = "Mk" + UUID().uuidString.replacingOccurrences(of: "-", with: "")
        let tree = try FilesTestTree(prefix: "hostscope-chat-secrets")
        defer { tree.remove() }
        try Self.write("token=\(marker)\n", to: tree.root + "/leak.txt")
        let secrets = SecretScrubber(secrets: [marker])
        let tools = HostTools(host: Self.host(try SSHTestServer.shared()), root: tree.root, secrets: secrets)
        defer { Task { await tools.close() } }

        let read = try await Self.run(tools, "read_file", .object(["path": "leak.txt"]))
        #expect(read.text.contains("token=REDACTED"))
        #expect(!read.text.contains(marker))
        let grep = try await Self.run(tools, "grep", .object(["pattern": "token", "path": "leak.txt"]))
        #expect(grep.text.contains("leak.txt:1:token=REDACTED"), "\(grep.text)")

        // The harness host is this machine: its process list holds this test process, which must show no
        // arguments, and a process whose arguments hold the marker, which must show it scrubbed. The holder
        // is busy, so that it tops the list by CPU however many larger processes the machine runs; this
        // test process is among the largest, so it tops the list by memory.
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/bin/sh")
        holder.arguments = ["-c", "while :; do :; done; : \(marker)"]
        try holder.run()
        defer {
            // SIGKILL: the test runner's children may inherit a mask that blocks SIGTERM.
            kill(holder.processIdentifier, SIGKILL)
            holder.waitUntilExit()
        }
        let busiest = try await Self.run(tools, "top_processes", .object(["sort_by": "cpu", "limit": 100]))
        #expect(!busiest.isError)
        #expect(!busiest.text.contains(marker))
        #expect(busiest.text.contains("while :; do :; done; : REDACTED"), "\(busiest.text)")
        let top = try await Self.run(tools, "top_processes", .object(["sort_by": "memory", "limit": 100]))
        #expect(!top.isError)
        #expect(!top.text.contains(marker))
        #expect(top.text.contains(OwnProcess.concealed), "\(top.text)")
        #expect(!top.text.contains(OwnProcess.commandLine))
        let snapshot = try await Self.run(tools, "host_snapshot", .object([:]))
        #expect(!snapshot.text.contains(marker))
    }

    @Test func theLocalHostsProcessListHidesHostscopesOwnArgumentsToo() async throws {
        let tools = HostTools(host: .local)
        let top = try await tools.execute(
            name: "top_processes", input: .object(["sort_by": "memory", "limit": 100]),
            context: ToolContext(callID: "t", span: nil))
        let mine = try #require(top.text.split(separator: "\n").first { $0.hasPrefix("\(getpid())\t") })
        #expect(mine.hasSuffix("\t" + OwnProcess.concealed), "\(mine)")
    }

    @Test func aCallWhoseOutputPassesTheByteLimitStopsGatheringAndSaysSoAsAnError() async throws {
        let tree = try FilesTestTree(prefix: "hostscope-chat-bytes")
        defer { tree.remove() }
        let line = "needle " + String(repeating: "x", count: 500) + "\n"
        try Self.write(String(repeating: line, count: 2000), to: tree.root + "/big.log")
        // One line of a minified file: a megabyte without a newline.
        try Self.write("needle" + String(repeating: "y", count: 1 << 20), to: tree.root + "/min.js")
        let limits = HostTools.Limits(maxOutputBytes: 64 * 1024, maxLineBytes: 1024)
        let tools = HostTools(host: Self.host(try SSHTestServer.shared()), root: tree.root, limits: limits)
        defer { Task { await tools.close() } }

        let grep = try await Self.run(
            tools, "grep", .object(["pattern": "needle", "path": "big.log", "max_matches": 1000]))
        #expect(grep.isError)
        #expect(grep.text.utf8.count <= 64 * 1024)
        #expect(grep.text.contains("big.log:1:needle xxx"))
        #expect(
            grep.text.hasSuffix(
                "[grep stopped: its output passed the limit of 65536 bytes per call; narrow the path, the pattern "
                    + "or the limit to see the rest]"))

        let minified = try await Self.run(tools, "grep", .object(["pattern": "needle", "path": "min.js"]))
        #expect(!minified.isError)
        #expect(minified.text.contains("… [line cut: 1048582 bytes]"), "\(minified.text.prefix(200))")
        #expect(minified.text.utf8.count < 4096)

        let found = try await Self.run(tools, "find_files", .object(["name": "*.log"]))
        #expect(!found.isError)
        #expect(found.text.contains("big.log"))
    }
}
