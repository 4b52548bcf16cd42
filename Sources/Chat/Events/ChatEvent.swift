public import OrderedJSON

/// The ids of the span that stands for a chat turn or a tool call, as lowercase hex, for the event stream.
public struct ChatSpanIDs: Sendable, Hashable {
    /// 32 hex digits.
    public var traceID: String
    /// 16 hex digits.
    public var spanID: String

    /// Creates span ids.
    public init(traceID: String, spanID: String) {
        self.traceID = traceID
        self.spanID = spanID
    }
}

/// A tool call the model asked for (or, for the gateway, that the gateway is running).
public struct ToolCall: Sendable, Equatable {
    /// The provider's id for the call (`call_…`, `toolu_…`, `tu_…`), echoed back with its result.
    public var id: String
    /// The tool's name.
    public var name: String
    /// The arguments. When the model's argument text is not JSON, this is that text as a JSON string, which
    /// no tool schema accepts, so the call is answered with an error instead of being run.
    public var input: JSONValue
    /// The span of the tool's execution, once one exists.
    public var span: ChatSpanIDs?

    /// Creates a tool call.
    public init(id: String, name: String, input: JSONValue, span: ChatSpanIDs? = nil) {
        self.id = id
        self.name = name
        self.input = input
        self.span = span
    }
}

/// The outcome of a tool call, as shown on the timeline and sent back to the model.
public struct ToolResult: Sendable, Hashable {
    /// The id of the call this answers.
    public var id: String
    /// The tool's name.
    public var name: String
    /// Whether the tool failed (or was refused); the model sees the output either way.
    public var isError: Bool
    /// How long the tool ran, in milliseconds.
    public var durationMs: Double?
    /// The exit code of the command behind the tool, when there was one.
    public var exitCode: Int?
    /// The output, capped; a cut output ends with a note saying so.
    public var output: String
    /// The span of the tool's execution.
    public var span: ChatSpanIDs?

    /// Creates a result.
    public init(
        id: String, name: String, isError: Bool, durationMs: Double?, exitCode: Int?, output: String,
        span: ChatSpanIDs? = nil
    ) {
        self.id = id
        self.name = name
        self.isError = isError
        self.durationMs = durationMs
        self.exitCode = exitCode
        self.output = output
        self.span = span
    }
}

/// Token counts of one model call, and its cost when the provider reports it or a price is configured.
public struct ChatUsage: Sendable, Hashable {
    /// Prompt tokens, cached ones included.
    public var inputTokens: Int
    /// Completion tokens.
    public var outputTokens: Int
    /// The cost in US dollars, when known.
    public var costUSD: Double?

    /// Creates usage figures.
    public init(inputTokens: Int, outputTokens: Int, costUSD: Double? = nil) {
        self.inputTokens = inputTokens
        self.outputTokens = outputTokens
        self.costUSD = costUSD
    }

    /// Adds another call's figures; the cost stays known only while both are.
    public static func + (lhs: ChatUsage, rhs: ChatUsage) -> ChatUsage {
        let cost: Double? = if let left = lhs.costUSD, let right = rhs.costUSD { left + right } else { nil }
        return ChatUsage(
            inputTokens: lhs.inputTokens + rhs.inputTokens, outputTokens: lhs.outputTokens + rhs.outputTokens,
            costUSD: cost)
    }
}

/// How a turn (or one model call inside it) ended, normalised across providers.
public struct FinishReason: Sendable, Hashable, RawRepresentable, CustomStringConvertible {
    /// The snake_case name written to the event stream.
    public var rawValue: String

    /// Creates a reason from its name.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// The model finished its answer (OpenAI `stop`, Anthropic `end_turn` and `stop_sequence`).
    public static let stop = FinishReason(rawValue: "stop")
    /// The answer hit the token limit (OpenAI `length`, Anthropic `max_tokens`).
    public static let length = FinishReason(rawValue: "length")
    /// The model asked for tools (OpenAI `tool_calls`, Anthropic `tool_use`).
    public static let toolCalls = FinishReason(rawValue: "tool_calls")
    /// The provider withheld content.
    public static let contentFilter = FinishReason(rawValue: "content_filter")
    /// The turn ended on an error event.
    public static let error = FinishReason(rawValue: "error")
    /// The user stopped the turn.
    public static let stopped = FinishReason(rawValue: "stopped")
    /// The tool loop reached its iteration limit.
    public static let maxIterations = FinishReason(rawValue: "max_iterations")

    /// The name.
    public var description: String { rawValue }

    /// Maps a provider's own stop reason onto the common names; unknown reasons pass through unchanged.
    public static func normalising(_ providerReason: String) -> FinishReason {
        switch providerReason {
        case "stop", "end_turn", "stop_sequence": .stop
        case "length", "max_tokens": .length
        case "tool_calls", "tool_use", "function_call": .toolCalls
        case "content_filter", "refusal": .contentFilter
        default: FinishReason(rawValue: providerReason)
        }
    }
}

/// One event of a chat turn, provider-neutral: what `hostscope chat --jsonl` prints, one per line.
///
/// A turn's events end with exactly one `done`. An `error` is followed by `done` with reason `error`, except
/// for a skipped malformed frame (kind `malformed_frame`), after which the stream goes on.
public enum ChatEvent: Sendable, Equatable {
    /// A piece of the assistant's answer.
    case text(String)
    /// A tool call, when it starts running.
    case toolCall(ToolCall)
    /// A tool call's outcome.
    case toolResult(ToolResult)
    /// Token usage of one model call.
    case usage(ChatUsage)
    /// Something went wrong; the text streamed so far stays valid.
    case error(ChatError)
    /// The end of the turn (or, from a provider stream, of one model call).
    case done(finishReason: FinishReason, sessionID: String?)

    /// The event as the JSON object of DESIGN.md's chat event contract, keys in the documented order and
    /// absent values as `null`.
    public var json: JSONValue {
        var object = JSONObject()
        switch self {
        case .text(let delta):
            object.append("type", "text")
            object.append("delta", .string(delta))
        case .toolCall(let call):
            object.append("type", "tool_call")
            object.append("id", .string(call.id))
            object.append("name", .string(call.name))
            object.append("input", call.input)
            object.append("trace_id", .from(call.span?.traceID, JSONValue.string))
            object.append("span_id", .from(call.span?.spanID, JSONValue.string))
        case .toolResult(let result):
            object.append("type", "tool_result")
            object.append("id", .string(result.id))
            object.append("name", .string(result.name))
            object.append("is_error", .bool(result.isError))
            object.append("duration_ms", .from(result.durationMs, JSONValue.double))
            object.append("exit_code", .from(result.exitCode, JSONValue.number))
            object.append("output", .string(result.output))
            object.append("trace_id", .from(result.span?.traceID, JSONValue.string))
            object.append("span_id", .from(result.span?.spanID, JSONValue.string))
        case .usage(let usage):
            object.append("type", "usage")
            object.append("input_tokens", .number(usage.inputTokens))
            object.append("output_tokens", .number(usage.outputTokens))
            object.append("cost_usd", .from(usage.costUSD, JSONValue.double))
        case .error(let error):
            object.append("type", "error")
            object.append("kind", .string(error.kind.rawValue))
            object.append("message", .string(error.message))
            object.append("retry_after_s", .from(error.retryAfterSeconds, JSONValue.number))
        case .done(let reason, let sessionID):
            object.append("type", "done")
            object.append("finish_reason", .string(reason.rawValue))
            object.append("session_id", .from(sessionID, JSONValue.string))
        }
        return .object(object)
    }

    /// The event as one line of JSON text, without the newline.
    public var jsonLine: String { json.jsonString }
}
