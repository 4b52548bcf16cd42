public import AgentTracing
public import Chat
import CurlHTTP
import Foundation
import Synchronization
public import Tracing
import ValueFormats

/// Spans of a chat, following OpenTelemetry's GenAI conventions, through the chat session's
/// ``ChatObserver`` seam (the `Chat` module records nothing itself).
///
/// - A user turn: `invoke_agent hostscope` (`gen_ai.operation.name=invoke_agent`, `gen_ai.agent.name`,
///   `gen_ai.provider.name`, `gen_ai.request.model`, `hostscope.chat.turn`, summed usage, finish reason).
/// - Each model call of the turn: `chat {model}` (client; `gen_ai.operation.name=chat`, provider, model,
///   `gen_ai.response.id`, `gen_ai.response.model`, `gen_ai.usage.input_tokens`/`output_tokens`,
///   `gen_ai.response.finish_reasons`, `server.address`, `url.full`). The session sends its ids to the provider
///   as `traceparent`.
/// - Each tool call: `execute_tool {name}` (`gen_ai.tool.name`, `gen_ai.tool.call.id`, `gen_ai.tool.type`,
///   `gen_ai.tool.call.arguments`, `gen_ai.tool.call.result`, `openinference.span.kind=TOOL` for Phoenix, exit
///   code, error status when the tool failed). A local tool runs inside its span's context, so the SSH commands
///   and SFTP calls it makes are its children. The turn links to every tool span.
/// - Every one of them carries the conversation's id as `gen_ai.conversation.id`, which backends group into
///   sessions (Phoenix reads it as its `session.id`).
/// - With ``captureContent`` (the user's opt-in, ``GenAIContentCapture``), model calls also carry what was sent
///   and answered: `gen_ai.system_instructions`, `gen_ai.input.messages`, `gen_ai.output.messages`
///   (``GenAIMessages``). Like every attribute, they pass the tracer's secret scrubber.
public final class TracingChatObserver: ChatObserver {
    private let tracer: any Tracer
    private let live = Lock<[String: any Span]>([:])
    /// Whether model calls record message content.
    public let captureContent: Bool

    /// An observer recording into `tracer`, by default the current one; `captureContent` adds the messages.
    public init(tracer: any Tracer = InstrumentationSystem.tracer, captureContent: Bool = false) {
        self.tracer = tracer
        self.captureContent = captureContent
    }

    public func turnStarted(_ turn: TurnInfo) -> ChatSpanIDs? {
        start("invoke_agent hostscope", kind: .internal, parent: nil, turn: turn) { span in
            span.setAttribute("gen_ai.operation.name", value: "invoke_agent")
            span.setAttribute("gen_ai.agent.name", value: "hostscope")
            span.setAttribute("gen_ai.provider.name", value: .string(turn.provider.rawValue))
            span.setAttribute("gen_ai.request.model", value: .string(turn.model))
            span.setAttribute("hostscope.chat.turn", value: .int(Int64(turn.number)))
        }
    }

    public func turnEnded(_ turn: TurnInfo, span ids: ChatSpanIDs?, summary: TurnSummary) {
        guard let span = take(ids) else { return }
        span.setAttribute("gen_ai.response.finish_reasons", value: .stringArray([summary.finishReason.rawValue]))
        span.setAttribute("hostscope.chat.model_calls", value: .int(Int64(summary.modelCalls)))
        span.setAttribute("hostscope.chat.tool_calls", value: .int(Int64(summary.toolCalls)))
        if let usage = summary.usage { record(usage, in: span) }
        if let session = summary.sessionID {
            span.setAttribute("hostscope.chat.gateway_session_id", value: .string(session))
        }
        if let error = summary.error { record(error, in: span) }
        span.end()
    }

    public func modelCallStarted(_ call: ModelCallInfo, parent: ChatSpanIDs?) -> ChatSpanIDs? {
        start("chat \(call.turn.model)", kind: .client, parent: parent, turn: call.turn) { span in
            span.setAttribute("gen_ai.operation.name", value: "chat")
            span.setAttribute("gen_ai.provider.name", value: .string(call.turn.provider.rawValue))
            span.setAttribute("gen_ai.request.model", value: .string(call.turn.model))
            span.setAttribute("url.full", value: .string(call.url))
            let request = HTTPRequest(method: .post, url: call.url)
            if let address = request.serverAddress { span.setAttribute("server.address", value: .string(address)) }
            if let port = request.serverPort { span.setAttribute("server.port", value: .int(Int64(port))) }
            span.setAttribute("hostscope.chat.iteration", value: .int(Int64(call.iteration)))
            if captureContent, let request = call.request {
                if let prompt = request.systemPrompt, !prompt.isEmpty {
                    span.setAttribute(
                        "gen_ai.system_instructions", value: .string(GenAIMessages.systemInstructions(prompt)))
                }
                span.setAttribute("gen_ai.input.messages", value: .string(GenAIMessages.input(request.messages)))
            }
        }
    }

    public func modelCallEnded(_ call: ModelCallInfo, span ids: ChatSpanIDs?, outcome: ModelCallOutcome) {
        guard let span = take(ids) else { return }
        span.setAttribute("gen_ai.response.finish_reasons", value: .stringArray([outcome.finishReason.rawValue]))
        if let id = outcome.responseID { span.setAttribute("gen_ai.response.id", value: .string(id)) }
        if let model = outcome.responseModel { span.setAttribute("gen_ai.response.model", value: .string(model)) }
        if let usage = outcome.usage { record(usage, in: span) }
        if captureContent, !outcome.text.isEmpty || !outcome.toolCalls.isEmpty {
            span.setAttribute(
                "gen_ai.output.messages",
                value: .string(
                    GenAIMessages.output(
                        text: outcome.text, toolCalls: outcome.toolCalls, finishReason: outcome.finishReason)))
        }
        if let error = outcome.error { record(error, in: span) }
        span.end()
    }

    public func toolStarted(_ call: ToolCall, turn: TurnInfo, parent: ChatSpanIDs?) -> ChatSpanIDs? {
        let ids = start("execute_tool \(call.name)", kind: .internal, parent: parent, turn: turn) { span in
            span.setAttribute("gen_ai.operation.name", value: "execute_tool")
            span.setAttribute("gen_ai.tool.name", value: .string(call.name))
            span.setAttribute("gen_ai.tool.call.id", value: .string(call.id))
            span.setAttribute("gen_ai.tool.type", value: "function")
            span.setAttribute("gen_ai.tool.call.arguments", value: .string(GenAIMessages.arguments(call)))
            span.setAttribute("openinference.span.kind", value: "TOOL")
        }
        // The turn points at each of its tools, so a trace viewer can jump from the turn to them.
        if let ids, let parent, let turnSpan = live.withLock({ $0[parent.spanID] }),
            let target = live.withLock({ $0[ids.spanID] })?.context.spanContext
        {
            (turnSpan as? RecordingSpan)?.addLink(
                to: target, attributes: [Attribute("gen_ai.tool.call.id", .string(call.id))])
        }
        return ids
    }

    public func toolEnded(_ call: ToolCall, result: ToolResult) {
        guard let span = take(result.span) else { return }
        if let exitCode = result.exitCode { span.setAttribute("process.exit.code", value: .int(Int64(exitCode))) }
        if let duration = result.durationMs {
            span.setAttribute("hostscope.tool.duration_ms", value: .double(duration))
        }
        span.setAttribute("hostscope.tool.output.bytes", value: .int(Int64(result.output.utf8.count)))
        span.setAttribute("gen_ai.tool.call.result", value: .string(result.output))
        if result.isError {
            span.setAttribute("error.type", value: "tool_error")
            span.setStatus(SpanStatus(code: .error, message: String(result.output.prefix(200))))
        }
        span.end()
    }

    public func withSpan<Value: Sendable>(_ ids: ChatSpanIDs?, _ body: @Sendable () async -> Value) async -> Value {
        guard let ids, let span = live.withLock({ $0[ids.spanID] }) else { return await body() }
        return await ServiceContext.$current.withValue(span.context) { await body() }
    }

    private func start(
        _ name: String, kind: SpanKind, parent: ChatSpanIDs?, turn: TurnInfo, _ describe: (any Span) -> Void
    ) -> ChatSpanIDs? {
        let parentSpan = parent.flatMap { ids in live.withLock { $0[ids.spanID] } }
        let context = parentSpan?.context ?? ServiceContext.current ?? .topLevel
        let span: any Span = tracer.startSpan(name, context: context, ofKind: kind)
        describe(span)
        if let conversation = turn.conversationID {
            span.setAttribute("gen_ai.conversation.id", value: .string(conversation))
        }
        guard let ids = span.context.spanContext else {
            // Not hostscope's tracer: nothing to hand out ids for, so nothing to find the span by later.
            span.end()
            return nil
        }
        let chatIDs = ChatSpanIDs(traceID: ids.traceID.hex, spanID: ids.spanID.hex)
        live.withLock { $0[chatIDs.spanID] = span }
        return chatIDs
    }

    private func take(_ ids: ChatSpanIDs?) -> (any Span)? {
        guard let ids else { return nil }
        return live.withLock { $0.removeValue(forKey: ids.spanID) }
    }

    private func record(_ usage: ChatUsage, in span: any Span) {
        span.setAttribute("gen_ai.usage.input_tokens", value: .int(Int64(usage.inputTokens)))
        span.setAttribute("gen_ai.usage.output_tokens", value: .int(Int64(usage.outputTokens)))
        if let cost = usage.costUSD { span.setAttribute("hostscope.chat.cost_usd", value: .double(cost)) }
    }

    private func record(_ error: ChatError, in span: any Span) {
        span.setAttribute("error.type", value: .string(error.kind.rawValue))
        if let status = error.httpStatus { span.setAttribute("http.response.status_code", value: .int(Int64(status))) }
        span.setStatus(SpanStatus(code: .error, message: error.message))
    }
}

/// Whether chat spans record message content: OpenTelemetry's
/// `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT` switch, or an option, which wins.
///
/// Accepted values: `true`/`1`/`yes`, `span_only` and `span_and_event` record content on spans; `false`/`0`/`no`,
/// `no_content` and `event_only` (hostscope records no GenAI events) record none. Anything else is refused with
/// one sentence, rather than guessed at, since it decides whether conversations leave the machine.
public enum GenAIContentCapture {
    /// The environment variable.
    public static let variable = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"

    /// The choice: the option when given, else the variable, else off.
    public static func enabled(option: Bool?, environment: [String: String]) throws(TracingError) -> Bool {
        if let option { return option }
        guard let raw = environment[variable]?.trimmingCharacters(in: .whitespaces), !raw.isEmpty else {
            return false
        }
        switch raw.lowercased() {
        case "true", "1", "yes", "on", "span_only", "span_and_event": return true
        case "false", "0", "no", "off", "no_content", "event_only": return false
        default:
            throw TracingError(
                code: .invalidSetting,
                message: "\(variable) is '\(raw)'; set it to true (record messages on chat spans) or false")
        }
    }
}
