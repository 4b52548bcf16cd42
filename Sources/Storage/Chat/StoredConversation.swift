public import Foundation

/// One stored chat conversation's header: where it talks, to which model, and its totals.
public struct StoredChatSession: Sendable, Equatable {
    /// The conversation's id (`--resume ID`).
    public var id: String
    /// The host the tools reach, as the user named it.
    public var host: String
    /// The provider kind (`openai`, `anthropic`, `openrouter`, `gateway`).
    public var provider: String
    /// The model of the latest turn.
    public var model: String
    /// The provider's base URL, without credentials.
    public var baseURL: String?
    /// The system prompt in force.
    public var systemPrompt: String?
    /// The directory the file tools were confined to.
    public var root: String?
    /// The gateway's own session id, which later turns continue.
    public var gatewaySessionID: String?
    /// The first question, shortened, to recognise the conversation by.
    public var title: String?
    /// When the conversation started.
    public var createdAt: Date
    /// When it last changed.
    public var updatedAt: Date
    /// Turns run.
    public var turns: Int
    /// Input tokens over all turns.
    public var inputTokens: Int
    /// Output tokens over all turns.
    public var outputTokens: Int
    /// Cost in US dollars over all turns, when known.
    public var costUSD: Double?
    /// How many tool calls the conversation made (filled in when listing).
    public var toolCalls: Int

    /// Creates a session header.
    public init(
        id: String, host: String, provider: String, model: String, baseURL: String? = nil,
        systemPrompt: String? = nil, root: String? = nil, gatewaySessionID: String? = nil, title: String? = nil,
        createdAt: Date, updatedAt: Date, turns: Int = 0, inputTokens: Int = 0, outputTokens: Int = 0,
        costUSD: Double? = nil, toolCalls: Int = 0
    ) {
        self.id = id
        self.host = host
        self.provider = provider
        self.model = model
        self.baseURL = baseURL
        self.systemPrompt = systemPrompt
        self.root = root
        self.gatewaySessionID = gatewaySessionID
        self.title = title
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.turns = turns
        self.inputTokens = inputTokens
        self.outputTokens = outputTokens
        self.costUSD = costUSD
        self.toolCalls = toolCalls
    }
}

/// One message of a stored conversation.
public struct StoredChatMessage: Sendable, Equatable {
    /// `system`, `user`, `assistant` or `tool`.
    public var role: String
    /// The text (for a tool message, the result as the model saw it).
    public var content: String
    /// An assistant message's tool calls as a JSON array of `{"id", "name", "input"}`.
    public var toolCallsJSON: String?
    /// The call a tool message answers.
    public var toolCallID: String?
    /// The tool a tool message comes from.
    public var toolName: String?
    /// Whether a tool message reports a failure.
    public var isError: Bool

    /// Creates a message.
    public init(
        role: String, content: String, toolCallsJSON: String? = nil, toolCallID: String? = nil,
        toolName: String? = nil, isError: Bool = false
    ) {
        self.role = role
        self.content = content
        self.toolCallsJSON = toolCallsJSON
        self.toolCallID = toolCallID
        self.toolName = toolName
        self.isError = isError
    }
}

/// One row of a stored conversation's tool timeline, with the span that produced its result.
public struct StoredToolCall: Sendable, Equatable {
    /// The turn it belongs to.
    public var turn: Int
    /// The provider's id of the call.
    public var callID: String
    /// The tool.
    public var name: String
    /// The arguments as JSON text.
    public var inputJSON: String
    /// `requested`, `running`, `ok`, `error` or `not_run`.
    public var status: String
    /// Whether the provider ran it (the gateway).
    public var runsRemotely: Bool
    /// How long it ran.
    public var durationMs: Double?
    /// The exit code of the command behind it.
    public var exitCode: Int?
    /// The output as the model saw it (capped).
    public var output: String?
    /// The output's size before the cap.
    public var outputBytes: Int?
    /// Whether the output was cut.
    public var wasCut: Bool
    /// The trace of its `execute_tool` span.
    public var traceID: String?
    /// Its `execute_tool` span.
    public var spanID: String?

    /// Creates a row.
    public init(
        turn: Int, callID: String, name: String, inputJSON: String, status: String, runsRemotely: Bool = false,
        durationMs: Double? = nil, exitCode: Int? = nil, output: String? = nil, outputBytes: Int? = nil,
        wasCut: Bool = false, traceID: String? = nil, spanID: String? = nil
    ) {
        self.turn = turn
        self.callID = callID
        self.name = name
        self.inputJSON = inputJSON
        self.status = status
        self.runsRemotely = runsRemotely
        self.durationMs = durationMs
        self.exitCode = exitCode
        self.output = output
        self.outputBytes = outputBytes
        self.wasCut = wasCut
        self.traceID = traceID
        self.spanID = spanID
    }
}

/// How one turn of a stored conversation ended, with its usage.
public struct StoredChatTurn: Sendable, Equatable {
    /// The turn's number, from 1.
    public var turn: Int
    /// The model asked.
    public var model: String
    /// Why it ended (`stop`, `error`, `stopped` …).
    public var finishReason: String
    /// How many model calls it took.
    public var modelCalls: Int
    /// How many tool calls it made.
    public var toolCalls: Int
    /// Its input tokens, when reported.
    public var inputTokens: Int?
    /// Its output tokens, when reported.
    public var outputTokens: Int?
    /// Its cost in US dollars, when known.
    public var costUSD: Double?
    /// The kind of the error that ended it.
    public var errorKind: String?
    /// The error's message (already free of secrets).
    public var errorMessage: String?
    /// The trace of its `invoke_agent` span.
    public var traceID: String?
    /// Its `invoke_agent` span.
    public var spanID: String?
    /// When it ended.
    public var finishedAt: Date

    /// Creates a turn record.
    public init(
        turn: Int, model: String, finishReason: String, modelCalls: Int, toolCalls: Int, inputTokens: Int? = nil,
        outputTokens: Int? = nil, costUSD: Double? = nil, errorKind: String? = nil, errorMessage: String? = nil,
        traceID: String? = nil, spanID: String? = nil, finishedAt: Date
    ) {
        self.turn = turn
        self.model = model
        self.finishReason = finishReason
        self.modelCalls = modelCalls
        self.toolCalls = toolCalls
        self.inputTokens = inputTokens
        self.outputTokens = outputTokens
        self.costUSD = costUSD
        self.errorKind = errorKind
        self.errorMessage = errorMessage
        self.traceID = traceID
        self.spanID = spanID
        self.finishedAt = finishedAt
    }
}

/// A whole stored conversation.
public struct StoredConversation: Sendable, Equatable {
    /// Its header and totals.
    public var session: StoredChatSession
    /// Its messages, oldest first.
    public var messages: [StoredChatMessage]
    /// Its tool timeline, oldest first (row N is element N − 1).
    public var toolCalls: [StoredToolCall]
    /// Its turns, oldest first.
    public var turns: [StoredChatTurn]

    /// Creates a conversation.
    public init(
        session: StoredChatSession, messages: [StoredChatMessage], toolCalls: [StoredToolCall],
        turns: [StoredChatTurn]
    ) {
        self.session = session
        self.messages = messages
        self.toolCalls = toolCalls
        self.turns = turns
    }
}
