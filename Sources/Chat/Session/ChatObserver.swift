/// What a turn is, for observers.
public struct TurnInfo: Sendable, Hashable {
    /// The turn's number in the session, from 1.
    public var number: Int
    /// The provider.
    public var provider: ProviderKind
    /// The model asked.
    public var model: String
    /// The conversation the turn belongs to (hostscope's id for it), when the session has one.
    public var conversationID: String?

    /// Creates turn information.
    public init(number: Int, provider: ProviderKind, model: String, conversationID: String? = nil) {
        self.number = number
        self.provider = provider
        self.model = model
        self.conversationID = conversationID
    }
}

/// One model call of a turn, for observers.
public struct ModelCallInfo: Sendable, Equatable {
    /// The turn it belongs to.
    public var turn: TurnInfo
    /// The call's number within the turn, from 1 (each round of the tool loop is one).
    public var iteration: Int
    /// The provider's endpoint, without credentials.
    public var url: String
    /// What was sent: the system prompt and the conversation so far.
    public var request: ChatRequest?

    /// Creates model call information.
    public init(turn: TurnInfo, iteration: Int, url: String, request: ChatRequest? = nil) {
        self.turn = turn
        self.iteration = iteration
        self.url = url
        self.request = request
    }
}

/// How a model call ended, for observers.
public struct ModelCallOutcome: Sendable, Equatable {
    /// Why the model stopped.
    public var finishReason: FinishReason
    /// The call's token usage, when the provider reported it.
    public var usage: ChatUsage?
    /// The error that ended it, if one did.
    public var error: ChatError?
    /// The gateway session, when there is one.
    public var sessionID: String?
    /// The provider's id for the response, when the stream named one.
    public var responseID: String?
    /// The model that answered, when the stream named it.
    public var responseModel: String?
    /// The text the model answered in this call.
    public var text: String
    /// The tool calls the model asked for in this call.
    public var toolCalls: [ToolCall]

    /// Creates an outcome.
    public init(
        finishReason: FinishReason, usage: ChatUsage?, error: ChatError?, sessionID: String?,
        responseID: String? = nil, responseModel: String? = nil, text: String = "", toolCalls: [ToolCall] = []
    ) {
        self.finishReason = finishReason
        self.usage = usage
        self.error = error
        self.sessionID = sessionID
        self.responseID = responseID
        self.responseModel = responseModel
        self.text = text
        self.toolCalls = toolCalls
    }
}

/// The seam for tracing a chat: called at turn, model call and tool boundaries, each start returning the ids
/// of the span it opened so that events carry them and children can point at them.
///
/// Every method has a default that does nothing, so an observer implements only what it needs. Calls come
/// from the session's actor in the order things happen; they should return quickly.
public protocol ChatObserver: Sendable {
    /// A user turn starts; returns its span, the parent of the turn's model calls and tools.
    func turnStarted(_ turn: TurnInfo) -> ChatSpanIDs?
    /// A user turn ended.
    func turnEnded(_ turn: TurnInfo, span: ChatSpanIDs?, summary: TurnSummary)
    /// A model call starts; returns its span, whose ids go to the provider in a `traceparent` header.
    func modelCallStarted(_ call: ModelCallInfo, parent: ChatSpanIDs?) -> ChatSpanIDs?
    /// A model call ended.
    func modelCallEnded(_ call: ModelCallInfo, span: ChatSpanIDs?, outcome: ModelCallOutcome)
    /// A tool call starts (locally, or on the gateway when its `tool_use` frame arrives); returns its span.
    func toolStarted(_ call: ToolCall, turn: TurnInfo, parent: ChatSpanIDs?) -> ChatSpanIDs?
    /// A tool call ended; `result.span` is the span `toolStarted` returned.
    func toolEnded(_ call: ToolCall, result: ToolResult)
    /// Runs a local tool's execution with `span` as the current trace context, so that the spans the tool
    /// produces (SSH commands, SFTP calls) become its children.
    func withSpan<Value: Sendable>(_ span: ChatSpanIDs?, _ body: @Sendable () async -> Value) async -> Value
}

extension ChatObserver {
    /// Opens no span.
    public func turnStarted(_ turn: TurnInfo) -> ChatSpanIDs? { nil }
    /// Does nothing.
    public func turnEnded(_ turn: TurnInfo, span: ChatSpanIDs?, summary: TurnSummary) {}
    /// Opens no span.
    public func modelCallStarted(_ call: ModelCallInfo, parent: ChatSpanIDs?) -> ChatSpanIDs? { nil }
    /// Does nothing.
    public func modelCallEnded(_ call: ModelCallInfo, span: ChatSpanIDs?, outcome: ModelCallOutcome) {}
    /// Opens no span.
    public func toolStarted(_ call: ToolCall, turn: TurnInfo, parent: ChatSpanIDs?) -> ChatSpanIDs? { nil }
    /// Does nothing.
    public func toolEnded(_ call: ToolCall, result: ToolResult) {}
    /// Runs `body` as it is.
    public func withSpan<Value: Sendable>(_ span: ChatSpanIDs?, _ body: @Sendable () async -> Value) async -> Value {
        await body()
    }
}
