public import Chat
import OrderedJSON

/// A chat's messages in the JSON forms of OpenTelemetry's GenAI conventions, for the content attributes
/// `gen_ai.input.messages`, `gen_ai.output.messages` and `gen_ai.system_instructions` (recorded only when the
/// user opts in) and the tool attributes `gen_ai.tool.call.arguments` / `gen_ai.tool.call.result`.
///
/// The shapes follow the conventions' JSON schemas: a message is `{"role", "parts": [...]}`, a part is
/// `{"type": "text", "content"}`, `{"type": "tool_call", "id", "name", "arguments"}` or
/// `{"type": "tool_call_response", "id", "response"}`; an output message also has `finish_reason`. Spans carry
/// them as JSON strings, which the conventions allow where an attribute cannot hold structured values.
public enum GenAIMessages {
    /// `gen_ai.input.messages`: the conversation as sent, system prompt excluded (it has its own attribute).
    public static func input(_ messages: [ChatMessage]) -> String {
        JSONValue.array(messages.compactMap(message)).jsonString
    }

    /// `gen_ai.system_instructions`: the system prompt as one text part.
    public static func systemInstructions(_ prompt: String) -> String {
        JSONValue.array([text(prompt)]).jsonString
    }

    /// `gen_ai.output.messages`: what one model call answered, as one assistant message.
    public static func output(text: String, toolCalls: [ToolCall], finishReason: FinishReason) -> String {
        var parts: [JSONValue] = []
        if !text.isEmpty { parts.append(Self.text(text)) }
        parts += toolCalls.map(toolCall)
        let message: JSONObject = [
            "role": "assistant", "parts": .array(parts), "finish_reason": .string(outputFinishReason(finishReason)),
        ]
        return JSONValue.array([.object(message)]).jsonString
    }

    /// `gen_ai.tool.call.arguments`: the arguments as JSON text.
    public static func arguments(_ call: ToolCall) -> String {
        // Arguments that were not JSON are kept as the model's own text.
        if case .string(let raw) = call.input { return raw }
        return call.input.jsonString
    }

    /// The conventions' finish reasons for an output message: `stop`, `length`, `content_filter`, `tool_call`,
    /// `error`; others pass through.
    static func outputFinishReason(_ reason: FinishReason) -> String {
        reason == .toolCalls ? "tool_call" : reason.rawValue
    }

    private static func message(_ message: ChatMessage) -> JSONValue? {
        switch message {
        case .system:
            return nil
        case .user(let content):
            return .object(["role": "user", "parts": [text(content)]])
        case .assistant(let content, let calls):
            var parts: [JSONValue] = content.isEmpty ? [] : [text(content)]
            parts += calls.map(toolCall)
            return .object(["role": "assistant", "parts": .array(parts)])
        case .toolResult(let result):
            return .object([
                "role": "tool",
                "parts": [
                    .object([
                        "type": "tool_call_response", "id": .string(result.toolCallID),
                        "response": .string(result.content),
                    ])
                ],
            ])
        }
    }

    private static func text(_ content: String) -> JSONValue {
        .object(["type": "text", "content": .string(content)])
    }

    private static func toolCall(_ call: ToolCall) -> JSONValue {
        .object(["type": "tool_call", "id": .string(call.id), "name": .string(call.name), "arguments": call.input])
    }
}
