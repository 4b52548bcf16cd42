import HostStats
import HostscopeCore
import AgentTracing
import Chat
import CurlHTTP
import Foundation
import OrderedJSON
import TestSupport
import Testing
import Tracing

/// The chat observer's GenAI spans, from a real chat session against the mock LLM server in `Scripts/`:
/// a turn, its model calls (whose ids reach the provider as `traceparent`), its tool executions, and the
/// commands a tool runs as the tool span's children.
@Suite(.serialized) struct ChatTracingTests {
    /// Tools that answer from a command run on this machine, so each execution makes a `local exec` span.
    struct CommandTools: ToolExecutor {
        var tools: [ToolDefinition] {
            [
                ToolDefinition(
                    name: "disk_usage", description: "Disk usage of a directory tree on the host.",
                    inputSchema: .object([
                        "type": "object", "properties": .object(["path": .object(["type": "string"])]),
                        "required": ["path"],
                    ])),
                ToolDefinition(
                    name: "tail_log", description: "The last lines of a log file on the host.",
                    inputSchema: .object([
                        "type": "object",
                        "properties": .object([
                            "path": .object(["type": "string"]), "lines": .object(["type": "integer"]),
                        ]),
                        "required": ["path"],
                    ])),
            ]
        }

        func execute(name: String, input: JSONValue, context: ToolContext) async throws -> ToolOutput {
            let output = try await LocalCommandRunner().run("echo \(name)", timeout: .seconds(10))
            return ToolOutput(text: output.stdoutText, exitCode: output.exitStatus.map(Int.init))
        }
    }

    @Test func aTurnIsATraceOfModelCallsAndToolsWithTheToolsCommandsBelowThem() async throws {
        try await withPythonServer("llm_mock_server.py") { server in
            try await withHTTPClient { client in
                let tracer = RingBufferTracer(capacity: 1_000, resource: TraceRuntime.resource)
                let provider = ChatProvider(
                    ProviderConfiguration(
                        kind: .openAI, baseURL: server.baseURL + "/v1",
                        apiKey: APIKey("sk-test-7f3a9c2e5b1d4f60a8e2c9b7d3f1a0e4", origin: "OPENAI_API_KEY")))
                let events = await withTracer(tracer) {
                    let session = ChatSession(
                        provider: provider, client: client, model: "mock-tool-loop",
                        systemPrompt: "You look after hosts.",
                        tools: CommandTools(), observer: TracingChatObserver())
                    var events: [ChatEvent] = []
                    for await event in await session.send("Why is the disk filling up?") { events.append(event) }
                    return events
                }
                #expect(events.contains { if case .done = $0 { true } else { false } })
                let spans = tracer.finishedSpans()
                let turn = try #require(spans.first { $0.name == "invoke_agent hostscope" })
                #expect(turn.parentSpanID == nil)
                #expect(turn.attributes["gen_ai.operation.name"] == "invoke_agent")
                #expect(turn.attributes["gen_ai.request.model"] == "mock-tool-loop")

                let calls = spans.filter { $0.name == "chat mock-tool-loop" }
                #expect(calls.count == 3)
                for call in calls {
                    #expect(call.parentSpanID == turn.spanID)
                    #expect(call.kind == .client)
                    #expect(call.attributes["gen_ai.provider.name"] == "openai")
                    #expect(call.attributes["server.address"] == "127.0.0.1")
                }
                let tools = spans.filter { $0.name.hasPrefix("execute_tool ") }
                #expect(tools.map(\.name) == ["execute_tool disk_usage", "execute_tool tail_log"])
                for tool in tools {
                    #expect(tool.parentSpanID == turn.spanID)
                    #expect(tool.attributes["gen_ai.tool.call.id"]?.stringValue?.isEmpty == false)
                    #expect(tool.attributes["openinference.span.kind"] == "TOOL")
                    #expect(tool.attributes["process.exit.code"] == 0)
                    let commands = spans.filter { $0.parentSpanID == tool.spanID }
                    #expect(commands.map(\.name) == ["local exec"])
                }
                #expect(Set(turn.links.map(\.spanID)) == Set(tools.map(\.spanID)))

                // Each model call's ids went to the provider as its traceparent.
                let response = try await client.execute(HTTPRequest(url: server.baseURL + "/requests"))
                let requests = try JSONParser.parse(bytes: response.body)["requests"]?.arrayValue ?? []
                let sent = Set(requests.compactMap { $0["traceparent"]?.stringValue })
                #expect(sent == Set(calls.map { "00-\($0.traceID.hex)-\($0.spanID.hex)-01" }))

                let lines = OTLPJSONEncoder(scope: TraceRuntime.scope).encode(spans)
                if let report = try OTLPValidation.validate(lines) {
                    #expect(report.status == 0, "\(report.output)")
                    #expect(report.orphans == 0)
                } else {
                    print("validate_otlp_ndjson.py not found beside the checkout; OTLP validation skipped")
                }
            }
        }
    }
}
