import AgentTracing
import Chat
import CurlHTTP
import Foundation
import HostStats
import HostscopeCore
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

/// The GenAI attributes that make a chat whole in a tracing backend: the conversation on every span, the
/// response's id and model, tool arguments and results, and message content only when the user opted in.
@Suite(.serialized) struct ChatTracingContentTests {
    static let apiKey = "sk-test-2b7e9d4c1a6f4e08b3c5d7e9f1a2b4c6"

    /// One `mock-tool-loop` turn (two tools, three model calls) with the API key typed into the question, so
    /// that captured content holds a registered secret.
    static func turn(captureContent: Bool) async throws -> (spans: [FinishedSpan], events: [ChatEvent]) {
        try await withPythonServer("llm_mock_server.py") { server in
            try await withHTTPClient { client in
                let tracer = RingBufferTracer(
                    capacity: 1_000, resource: TraceRuntime.resource, scrubber: SecretScrubber(secrets: [apiKey]))
                let provider = ChatProvider(
                    ProviderConfiguration(
                        kind: .openAI, baseURL: server.baseURL + "/v1", apiKey: APIKey(apiKey, origin: "OPENAI_API_KEY")
                    ))
                let events = await withTracer(tracer) {
                    let session = ChatSession(
                        provider: provider, client: client, model: "mock-tool-loop",
                        systemPrompt: "You look after hosts.", tools: ChatTracingTests.CommandTools(),
                        observer: TracingChatObserver(captureContent: captureContent), conversationID: "conv-42")
                    var events: [ChatEvent] = []
                    for await event in await session.send("Why is the disk filling up? My key is \(apiKey)") {
                        events.append(event)
                    }
                    return events
                }
                return (tracer.finishedSpans(), events)
            }
        }
    }

    @Test func everyChatSpanCarriesTheConversationAndDoneNamesIt() async throws {
        let (spans, events) = try await Self.turn(captureContent: false)
        let chat = spans.filter { $0.attributes["gen_ai.operation.name"] != nil }
        #expect(chat.count == 6)  // the turn, three model calls, two tools
        for span in chat {
            #expect(span.attributes["gen_ai.conversation.id"] == "conv-42", "\(span.name)")
        }
        guard case .done(_, let session)? = events.last else {
            Issue.record("the turn did not end with done")
            return
        }
        #expect(session == "conv-42")
    }

    @Test func modelCallsNameTheResponseAndToolsCarryTheirArgumentsAndResults() async throws {
        let (spans, _) = try await Self.turn(captureContent: false)
        let calls = spans.filter { $0.name == "chat mock-tool-loop" }.sorted {
            $0.startNanoseconds < $1.startNanoseconds
        }
        #expect(
            calls.compactMap { $0.attributes["gen_ai.response.id"]?.stringValue } == [
                "chatcmpl-loop1", "chatcmpl-loop2", "chatcmpl-loop3",
            ])
        #expect(calls.allSatisfy { $0.attributes["gen_ai.response.model"] == "mock-tool-loop" })
        let disk = try #require(spans.first { $0.name == "execute_tool disk_usage" })
        let arguments = try JSONParser.parse(try #require(disk.attributes["gen_ai.tool.call.arguments"]?.stringValue))
        #expect(arguments["path"]?.stringValue == "/var")
        #expect(disk.attributes["gen_ai.tool.call.result"] == "disk_usage\n")
    }

    @Test func messageContentIsRecordedOnlyWhenCaptureIsOnAndThenScrubbed() async throws {
        let contentKeys = ["gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions"]
        let (quiet, _) = try await Self.turn(captureContent: false)
        for span in quiet {
            #expect(contentKeys.allSatisfy { span.attributes[$0] == nil }, "\(span.name) carries content")
        }

        let (captured, _) = try await Self.turn(captureContent: true)
        let calls = captured.filter { $0.name == "chat mock-tool-loop" }
            .sorted { $0.startNanoseconds < $1.startNanoseconds }
        try #require(calls.count == 3)
        let system = try JSONParser.parse(try #require(calls[0].attributes["gen_ai.system_instructions"]?.stringValue))
        #expect(system == .array([.object(["type": "text", "content": "You look after hosts."])]))
        let firstInput = try JSONParser.parse(try #require(calls[0].attributes["gen_ai.input.messages"]?.stringValue))
        #expect(firstInput[0]?["role"] == "user")
        let question = try #require(firstInput[0]?["parts"]?[0]?["content"]?.stringValue)
        #expect(question == "Why is the disk filling up? My key is REDACTED")
        // The first call asked for a tool; its output message says so, in the conventions' words.
        let firstOutput = try JSONParser.parse(try #require(calls[0].attributes["gen_ai.output.messages"]?.stringValue))
        #expect(firstOutput[0]?["role"] == "assistant")
        #expect(firstOutput[0]?["finish_reason"] == "tool_call")
        #expect(firstOutput[0]?["parts"]?[0]?["type"] == "tool_call")
        #expect(firstOutput[0]?["parts"]?[0]?["name"] == "disk_usage")
        // The second call was sent the tool's result.
        let secondInput = try JSONParser.parse(try #require(calls[1].attributes["gen_ai.input.messages"]?.stringValue))
        let roles = (secondInput.arrayValue ?? []).compactMap { $0["role"]?.stringValue }
        #expect(roles == ["user", "assistant", "tool"])
        #expect(secondInput[2]?["parts"]?[0]?["type"] == "tool_call_response")
        #expect(secondInput[2]?["parts"]?[0]?["response"] == "disk_usage\n")
        let last = try JSONParser.parse(try #require(calls[2].attributes["gen_ai.output.messages"]?.stringValue))
        #expect(last[0]?["finish_reason"] == "stop")
        #expect(last[0]?["parts"]?[0]?["type"] == "text")
        for span in captured {
            for attribute in span.attributes {
                #expect(attribute.value.displayText.contains(Self.apiKey) == false, "\(span.name) \(attribute.key)")
            }
        }
    }
}
