import AgentTracing
import Chat
import Foundation
public import HostscopeCore
public import MCP
import OrderedJSON
import Synchronization
import Tracing
import ValueFormats

/// hostscope's MCP server: the read-only host tools, the resources and the prompts, over a transport (stdio for
/// `hostscope mcp`). Every request is a span stored like every command's.
public enum MCPServer {
    /// The name the server gives in `initialize`.
    public static let name = "hostscope"

    /// The tools the server offers for `configuration`, in the order it lists them.
    public static func tools(_ configuration: MCPConfiguration) -> [MCPTool] {
        MCPToolTable.tools(MCPEnvironment(configuration: configuration))
    }

    /// Serves one session on standard input and output (`hostscope mcp`): JSON-RPC messages, one a line.
    public static func runOverStdio(_ configuration: MCPConfiguration) async throws {
        try await run(configuration, transport: StdioLineTransport(maxLineBytes: configuration.maxRequestBytes))
    }

    /// Serves one session over `transport` until the client closes it (stdin closed), then closes every SSH
    /// session the tools opened and flushes the spans.
    public static func run(_ configuration: MCPConfiguration, transport: any Transport) async throws {
        let settings = configuration.settings
        try await TraceRuntime.with(settings.traceSetup(), diagnostics: settings.diagnostics) { _ in
            let environment = MCPEnvironment(configuration: configuration)
            let registry = RequestRegistry()
            let session = MCPSession(
                environment: environment,
                tracing: RequestTracing(
                    sessionID: Hex.randomNonce(), registry: registry, captureContent: configuration.captureContent,
                    networkTransport: "pipe"))
            let server = await makeServer(session)
            try await server.start(
                transport: GuardedTransport(
                    transport, maxMessageBytes: configuration.maxRequestBytes, registry: registry, direct: session))
            await server.waitUntilCompleted()
            await server.stop()
            session.close()
            await environment.close()
        }
    }

    /// The protocol library's server for one session, its handlers registered.
    static func makeServer(_ session: MCPSession) async -> Server {
        let server = Server(
            name: name, version: HostscopeVersion.string, title: "hostscope",
            instructions: "Read-only tools about the hosts this server may reach over SSH. Call list_hosts "
                + "first; every host tool takes one of its hosts. Nothing here changes a host.",
            capabilities: Server.Capabilities(
                prompts: .init(listChanged: false),
                // Updates come from a live watch of the hosts: under `serve`, not on stdio.
                resources: .init(subscribe: session.environment.configuration.watch != nil, listChanged: false),
                tools: .init(listChanged: false)),
            // Not `.strict`: it refuses a request that arrives while `initialize` is still being handled by
            // dropping it unanswered. GuardedTransport refuses requests before `initialize`, with an answer.
            configuration: .default)
        await session.register(on: server)
        return server
    }
}

/// One client's session: its tools, its call budget, and the handlers of every method.
final class MCPSession: DirectAnswers {
    let environment: MCPEnvironment
    let tracing: RequestTracing
    let tools: [MCPTool]
    let budget: CallBudget
    let subscriptions: ResourceSubscriptions
    /// The tool list's result as JSON, written once: the list never changes.
    let listed: [UInt8]

    init(environment: MCPEnvironment, tracing: RequestTracing) {
        self.environment = environment
        self.tracing = tracing
        tools = MCPToolTable.tools(environment)
        var listed: [UInt8] = []
        JSONWriter().write(.object(["tools": .array(tools.map(\.definitionJSON))]), into: &listed)
        self.listed = listed
        budget = CallBudget(perMinute: environment.configuration.callsPerMinute)
        subscriptions = ResourceSubscriptions(watch: environment.configuration.watch)
    }

    /// Ends what the session started beyond its requests (the watch of its subscriptions).
    func close() { subscriptions.close() }

    func register(on server: Server) async {
        let resources = MCPResources(environment: environment)
        await server.withMethodHandler(ListResources.self) { [tracing] _ in
            try await tracing.withSpan(ListResources.name, target: nil) { _, _ in resources.list() }
        }
        await server.withMethodHandler(ListResourceTemplates.self) { [tracing] _ in
            try await tracing.withSpan(ListResourceTemplates.name, target: nil) { _, _ in resources.templates() }
        }
        await server.withMethodHandler(ReadResource.self) { [tracing] params in
            try await tracing.withSpan(ReadResource.name, target: params.uri) { _, _ in
                try await resources.read(params.uri)
            }
        }
        await server.withMethodHandler(ResourceSubscribe.self) { [tracing, subscriptions] params in
            try await tracing.withSpan(ResourceSubscribe.name, target: params.uri) { _, _ in
                try subscriptions.subscribe(params.uri, resources: resources, server: server)
                return Empty()
            }
        }
        await server.withMethodHandler(ResourceUnsubscribe.self) { [tracing, subscriptions] params in
            try await tracing.withSpan(ResourceUnsubscribe.name, target: params.uri) { _, _ in
                subscriptions.unsubscribe(params.uri)
                return Empty()
            }
        }
        await server.withMethodHandler(ListPrompts.self) { [tracing] _ in
            try await tracing.withSpan(ListPrompts.name, target: nil) { _, _ in
                ListPrompts.Result(prompts: MCPPrompts.all)
            }
        }
        await server.withMethodHandler(GetPrompt.self) { [tracing] params in
            try await tracing.withSpan(GetPrompt.name, target: params.name) { _, _ in
                try MCPPrompts.get(params.name, arguments: params.arguments ?? [:])
            }
        }
    }

    /// `tools/list` and `tools/call`, answered without the protocol library (``DirectAnswers``).
    func answers(_ method: String) -> Bool { method == ListTools.name || method == CallTool.name }

    func answer(_ message: JSONValue, info: RequestInfo, send: @escaping @Sendable (Data) async -> Void) async {
        let id = message["id"] ?? .null
        do {
            if info.method == ListTools.name {
                try await tracing.withSpan(ListTools.name, target: nil, info: info) { _, _ in
                    await send(Self.answer(id: id, result: self.listed))
                }
                return
            }
            let params = message["params"]
            guard let name = params?["name"]?.stringValue else {
                throw MCPError.invalidParams("tools/call needs params.name, the name of a tool (tools/list lists them)")
            }
            let arguments = params?["arguments"] ?? .object([:])
            try await tracing.withSpan(CallTool.name, target: name, info: info) { info, span in
                let result = try await self.call(name, arguments: arguments, info: info, span: span, notify: send)
                // Sent before the span ends: the request's span covers its answer's writing.
                await send(Self.answer(id: id, result: result))
            }
        } catch is CancellationError {
            return
        } catch let error as MCPError {
            await send(
                Data(GuardedTransport.error(code: error.code, id: id, error.errorDescription ?? "\(error)").utf8))
        } catch {
            await send(Data(GuardedTransport.error(code: -32603, id: id, "\(error)").utf8))
        }
    }

    /// A JSON-RPC answer whose result is the JSON `result`, framed in one buffer.
    static func answer(id: JSONValue, result: [UInt8]) -> Data {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(result.count + 64)
        bytes.append(contentsOf: "{\"jsonrpc\":\"2.0\",\"id\":".utf8)
        JSONWriter().write(id, into: &bytes)
        bytes.append(contentsOf: ",\"result\":".utf8)
        bytes.append(contentsOf: result)
        bytes.append(UInt8(ascii: "}"))
        return Data(bytes)
    }

    /// A tool call: the tool must exist (else a protocol error); everything else that goes wrong is an `isError`
    /// result with one sentence: arguments that do not fit the schema, the session's call budget spent, a host
    /// outside the set, a path outside the root, a host that is down.
    func call(
        _ name: String, arguments: JSONValue, info: RequestInfo?, span: any Span,
        notify: @escaping @Sendable (Data) async -> Void
    ) async throws -> [UInt8] {
        guard let tool = tools.first(where: { $0.name == name }) else {
            throw MCPError.invalidParams("there is no tool named \(name); tools/list lists the \(tools.count) tools")
        }
        if tracing.captureContent {
            span.setAttribute("gen_ai.tool.call.arguments", value: .string(arguments.jsonString))
        }
        if let host = arguments["host"]?.stringValue { span.setAttribute("hostscope.host", value: .string(host)) }
        let outcome: MCPToolResult
        let problems = JSONSchemaValidator.validate(arguments, against: tool.inputSchema)
        if !problems.isEmpty {
            outcome = .failure(
                "the arguments do not fit \(tool.name)'s input schema: \(problems.prefix(3).joined(separator: "; "))")
        } else if let wait = budget.take() {
            outcome = .failure(
                "this session made \(budget.perMinute) tool calls in the last minute, the most it may; wait "
                    + "\(Int(wait.rounded(.up))) s and call again")
        } else {
            let id = info?.id ?? ""
            outcome = try await Progress.reporting(to: notify, token: info?.progressToken, tool: tool.name) {
                do {
                    return try await tool.handler(arguments, MCPToolCall(id: id))
                } catch let failure as MCPToolFailure {
                    return .failure(failure.message)
                }
            }
        }
        let (result, text) = Self.result(outcome, maxBytes: environment.configuration.maxResultBytes)
        if case .failure(let message) = outcome {
            span.setAttribute("error.type", value: "tool_error")
            span.setStatus(SpanStatus(code: .error, message: String(message.prefix(200))))
        }
        if tracing.captureContent { span.setAttribute("gen_ai.tool.call.result", value: .string(text)) }
        return result
    }

    /// The protocol's result (`CallTool.Result`) as JSON: structured content and the same JSON as text, or an
    /// error text; and that text. The structured content is written once and spliced in as the text's bytes, and
    /// the whole result is written into one buffer (no string concatenation of the answer's copies).
    static func result(_ outcome: MCPToolResult, maxBytes: Int) -> (result: [UInt8], text: String) {
        var result: [UInt8] = []
        let json: [UInt8]
        switch outcome {
        case .structured(let object):
            var written: [UInt8] = []
            JSONWriter().write(.object(object), into: &written)
            json = written
        case .json(let written):
            json = written
        case .failure(let message):
            let text = BoundedText.cut(ProcessSecrets.scrub(message), maxBytes: maxBytes).text
            JSONWriter().write(
                .object(["content": .array([.object(["type": "text", "text": .string(text)])]), "isError": true]),
                into: &result)
            return (result, text)
        }
        let text = String(decoding: json, as: UTF8.self)
        // The text copy escapes at least every quote: twice the JSON is room for both copies, most times.
        result.reserveCapacity(2 * json.count + 96)
        result.append(contentsOf: "{\"content\":[{\"type\":\"text\",\"text\":".utf8)
        JSONWriter.appendString(text, into: &result)
        result.append(contentsOf: "}],\"structuredContent\":".utf8)
        result.append(contentsOf: json)
        result.append(contentsOf: ",\"isError\":false}".utf8)
        return (result, text)
    }
}

/// The per-session bound on tool calls: a bucket of `perMinute` calls refilled evenly over a minute.
final class CallBudget: Sendable {
    let perMinute: Int
    private let state: Lock<(tokens: Double, at: ContinuousClock.Instant)>

    init(perMinute: Int) {
        self.perMinute = perMinute
        state = Lock((Double(perMinute), ContinuousClock.now))
    }

    /// Takes one call; `nil` when allowed, else the seconds until one is.
    func take() -> Double? {
        let rate = Double(perMinute) / 60
        return state.withLock { state in
            let now = ContinuousClock.now
            let elapsed = (now - state.at).inSeconds
            state = (min(Double(perMinute), state.tokens + elapsed * rate), now)
            guard state.tokens >= 1 else { return (1 - state.tokens) / rate }
            state.tokens -= 1
            return nil
        }
    }
}

/// `notifications/progress` while a tool runs, when the client gave a `progressToken`: one at the start and one a
/// second with the time spent, until the call ends.
enum Progress {
    static func reporting<T: Sendable>(
        to notify: @escaping @Sendable (Data) async -> Void, token: JSONValue?, tool: String,
        _ body: @Sendable () async throws -> T
    ) async throws -> T {
        guard let token else { return try await body() }
        let ticker = Task {
            var seconds = 0
            while !Task.isCancelled {
                let message = seconds == 0 ? "\(tool) started" : "\(tool) running for \(seconds) s"
                let notification = JSONValue.object([
                    "jsonrpc": "2.0", "method": .string(ProgressNotification.name),
                    "params": .object([
                        "progressToken": token, "progress": .number(seconds), "message": .string(message),
                    ]),
                ])
                await notify(Data(notification.jsonString.utf8))
                try? await Task.sleep(for: .seconds(1))
                seconds += 1
            }
        }
        defer { ticker.cancel() }
        return try await body()
    }
}
