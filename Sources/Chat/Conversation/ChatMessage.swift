public import OrderedJSON

/// One message of a conversation, in the provider-neutral form the session keeps.
public enum ChatMessage: Sendable, Equatable {
    /// Instructions for the model. Providers with a separate system field (Anthropic) get them there.
    case system(String)
    /// What the user asked.
    case user(String)
    /// What the model answered: text, tool calls, or both.
    case assistant(text: String, toolCalls: [ToolCall])
    /// The outcome of one tool call, sent back to the model.
    case toolResult(ToolResultMessage)
}

/// A tool result as the model sees it.
public struct ToolResultMessage: Sendable, Hashable {
    /// The id of the tool call this answers.
    public var toolCallID: String
    /// The tool's name; OpenAI-style providers do not need it, some compatible servers do.
    public var name: String
    /// The output (capped) or the reason the call failed.
    public var content: String
    /// Whether the call failed or was refused.
    public var isError: Bool

    /// Creates a tool result message.
    public init(toolCallID: String, name: String, content: String, isError: Bool) {
        self.toolCallID = toolCallID
        self.name = name
        self.content = content
        self.isError = isError
    }
}

/// A tool the model may call: its name, what it does, and the JSON schema of its arguments.
public struct ToolDefinition: Sendable, Equatable {
    /// The name the model calls it by (letters, digits, `_` and `-`).
    public var name: String
    /// What the tool does and when to use it, for the model.
    public var description: String
    /// A JSON schema (an object schema) for the arguments; calls are validated against it before running.
    public var inputSchema: JSONValue

    /// Creates a tool definition.
    public init(name: String, description: String, inputSchema: JSONValue) {
        self.name = name
        self.description = description
        self.inputSchema = inputSchema
    }
}

/// Everything one model call needs, whatever the provider.
public struct ChatRequest: Sendable, Equatable {
    /// The model name, as the provider spells it.
    public var model: String
    /// The system prompt, if any.
    public var systemPrompt: String?
    /// The conversation so far, oldest first, ending with the user's message or tool results.
    public var messages: [ChatMessage]
    /// The tools the model may call.
    public var tools: [ToolDefinition]
    /// The longest answer in tokens; Anthropic requires one, so it defaults to 4096 there.
    public var maxTokens: Int?
    /// The sampling temperature, when set.
    public var temperature: Double?
    /// The gateway session to continue, if any.
    public var sessionID: String?

    /// Creates a request.
    public init(
        model: String, systemPrompt: String? = nil, messages: [ChatMessage], tools: [ToolDefinition] = [],
        maxTokens: Int? = nil, temperature: Double? = nil, sessionID: String? = nil
    ) {
        self.model = model
        self.systemPrompt = systemPrompt
        self.messages = messages
        self.tools = tools
        self.maxTokens = maxTokens
        self.temperature = temperature
        self.sessionID = sessionID
    }
}
