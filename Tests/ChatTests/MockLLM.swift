import Chat
import CurlHTTP
import Foundation
import OrderedJSON
import Synchronization
import TestSupport
import ValueFormats

/// The mock LLM server of Scripts/llm_mock_server.py and a client, for one test.
struct MockLLM {
    let server: PythonServer
    let client: HTTPClient

    static let apiKey = "sk-test-7f3a9c2e5b1d4f60a8e2c9b7d3f1a0e4"

    /// Runs `body` against a fresh server and client, both stopped afterwards.
    static func run(_ body: (MockLLM) async throws -> Void) async throws {
        try await withPythonServer("llm_mock_server.py") { server in
            try await withHTTPClient { client in
                try await body(MockLLM(server: server, client: client))
            }
        }
    }

    /// The base URL of a provider on the mock, per DESIGN's conventions.
    func baseURL(_ kind: ProviderKind) -> String {
        switch kind {
        case .openAI: server.baseURL + "/v1"
        case .openRouter: server.baseURL + "/api/v1"
        case .anthropic: server.baseURL
        case .gateway: server.baseURL + "/gateway"
        }
    }

    /// A provider on the mock with the test key and any extra (scenario or pacing) headers.
    func provider(
        _ kind: ProviderKind, key: String? = MockLLM.apiKey, headers: HTTPHeaders = [:],
        timeouts: HTTPTimeouts = HTTPTimeouts(connect: .seconds(5), idle: .seconds(20)), pricing: ModelPricing? = nil
    ) -> ChatProvider {
        ChatProvider(
            ProviderConfiguration(
                kind: kind, baseURL: baseURL(kind),
                apiKey: key.map { APIKey($0, origin: kind.apiKeyVariable ?? "KEY") },
                extraHeaders: headers, timeouts: timeouts, pricing: pricing))
    }

    /// Streams one model call of a single user message and collects its events.
    func events(
        _ kind: ProviderKind, model: String, key: String? = MockLLM.apiKey, headers: HTTPHeaders = [:],
        messages: [ChatMessage] = [.user("Why is the disk filling up?")], tools: [ToolDefinition] = [],
        timeouts: HTTPTimeouts = HTTPTimeouts(connect: .seconds(5), idle: .seconds(20)), pricing: ModelPricing? = nil
    ) async -> [ChatEvent] {
        let provider = provider(kind, key: key, headers: headers, timeouts: timeouts, pricing: pricing)
        var events: [ChatEvent] = []
        for await event in provider.stream(ChatRequest(model: model, messages: messages, tools: tools), using: client) {
            events.append(event)
        }
        return events
    }

    /// Every request the server received, oldest first.
    func requests() async throws -> [JSONValue] {
        let response = try await client.execute(HTTPRequest(url: server.baseURL + "/requests"))
        return try JSONParser.parse(bytes: response.body)["requests"]?.arrayValue ?? []
    }

    /// The raw text of `GET /requests`, to search for secrets.
    func requestLogText() async throws -> String {
        try await client.execute(HTTPRequest(url: server.baseURL + "/requests")).bodyText
    }
}

/// The value of a recorded request's header, case-insensitively.
func header(_ request: JSONValue, _ name: String) -> String? {
    request["headers"]?.arrayValue?.first { $0[0]?.stringValue?.lowercased() == name.lowercased() }?[1]?.stringValue
}

extension Array where Element == ChatEvent {
    /// The concatenated text deltas.
    var text: String {
        compactMap { if case .text(let delta) = $0 { delta } else { nil } }.joined()
    }

    var toolCalls: [ToolCall] {
        compactMap { if case .toolCall(let call) = $0 { call } else { nil } }
    }

    var toolResults: [ToolResult] {
        compactMap { if case .toolResult(let result) = $0 { result } else { nil } }
    }

    var errors: [ChatError] {
        compactMap { if case .error(let error) = $0 { error } else { nil } }
    }

    var usages: [ChatUsage] {
        compactMap { if case .usage(let usage) = $0 { usage } else { nil } }
    }

    /// The reason of the last event when it is `done`.
    var finishReason: FinishReason? {
        if case .done(let reason, _) = last { reason } else { nil }
    }

    var sessionID: String? {
        if case .done(_, let session) = last { session } else { nil }
    }

    var doneCount: Int {
        filter { if case .done = $0 { true } else { false } }.count
    }
}

/// The tools used across chat tests: two read-only tools with schemas like the real ones.
final class TestTools: ToolExecutor {
    struct Call: Sendable, Equatable {
        var name: String
        var input: JSONValue
        var span: ChatSpanIDs?
    }

    let calls = Lock<[Call]>([])
    /// How long each execution takes, for stop tests.
    let delay: Duration
    /// Output size for cap tests.
    let outputBytes: Int

    init(delay: Duration = .zero, outputBytes: Int = 0) {
        self.delay = delay
        self.outputBytes = outputBytes
    }

    var recorded: [Call] { calls.withLock { $0 } }

    var tools: [ToolDefinition] {
        [
            ToolDefinition(
                name: "disk_usage", description: "Disk usage of a directory tree on the host.",
                inputSchema: .object([
                    "type": "object",
                    "properties": .object([
                        "path": .object(["type": "string", "maxLength": 256])
                    ]),
                    "required": ["path"],
                    "additionalProperties": false,
                ])),
            ToolDefinition(
                name: "tail_log", description: "The last lines of a log file on the host.",
                inputSchema: .object([
                    "type": "object",
                    "properties": .object([
                        "path": .object(["type": "string", "maxLength": 256]),
                        "lines": .object(["type": "integer", "minimum": 1, "maximum": 1000]),
                    ]),
                    "required": ["path"],
                    "additionalProperties": false,
                ])),
        ]
    }

    func execute(name: String, input: JSONValue, context: ToolContext) async throws -> ToolOutput {
        calls.withLock { $0.append(Call(name: name, input: input, span: context.span)) }
        if delay > .zero {
            try await Task.sleep(for: delay)
        }
        let path = input["path"]?.stringValue ?? "?"
        if outputBytes > 0 {
            return ToolOutput(text: String(repeating: "é", count: outputBytes / 2), exitCode: 0)
        }
        switch name {
        case "disk_usage":
            return ToolOutput(text: "41G\t\(path)\n38G\t\(path)/log", exitCode: 0)
        case "tail_log":
            return ToolOutput(text: "kernel: No space left on device (\(path))", exitCode: 0)
        default:
            return ToolOutput(text: "unknown", isError: true, exitCode: 127)
        }
    }
}

/// An observer that hands out deterministic span ids and records every callback.
final class RecordingObserver: ChatObserver {
    let log = Lock<[String]>([])
    private let counter = Atomic<Int>(0)
    let traceID = "4bf92f3577b34da6a3ce929d0e0e4736"

    private func next() -> ChatSpanIDs {
        let value = counter.add(1, ordering: .relaxed).newValue
        return ChatSpanIDs(traceID: traceID, spanID: String(format: "%016x", value))
    }

    func turnStarted(_ turn: TurnInfo) -> ChatSpanIDs? {
        let span = next()
        log.withLock { $0.append("turn \(turn.number) \(turn.model) \(span.spanID)") }
        return span
    }

    func turnEnded(_ turn: TurnInfo, span: ChatSpanIDs?, summary: TurnSummary) {
        log.withLock { $0.append("turn-end \(turn.number) \(summary.finishReason) \(span?.spanID ?? "-")") }
    }

    func modelCallStarted(_ call: ModelCallInfo, parent: ChatSpanIDs?) -> ChatSpanIDs? {
        let span = next()
        log.withLock { $0.append("model \(call.iteration) \(span.spanID) parent \(parent?.spanID ?? "-")") }
        return span
    }

    func modelCallEnded(_ call: ModelCallInfo, span: ChatSpanIDs?, outcome: ModelCallOutcome) {
        log.withLock { $0.append("model-end \(call.iteration) \(outcome.finishReason)") }
    }

    func toolStarted(_ call: ToolCall, turn: TurnInfo, parent: ChatSpanIDs?) -> ChatSpanIDs? {
        let span = next()
        log.withLock { $0.append("tool \(call.name) \(call.id) \(span.spanID) parent \(parent?.spanID ?? "-")") }
        return span
    }

    func toolEnded(_ call: ToolCall, result: ToolResult) {
        log.withLock {
            $0.append("tool-end \(call.id) \(result.isError ? "error" : "ok") \(result.span?.spanID ?? "-")")
        }
    }
}

/// Collects a session stream.
func collect(_ stream: AsyncStream<ChatEvent>) async -> [ChatEvent] {
    var events: [ChatEvent] = []
    for await event in stream {
        events.append(event)
    }
    return events
}
