/// A conversation to continue later: what the session needs to pick up where it stopped.
///
/// It holds no secret (keys stay in the provider configuration), so it can be stored as it is.
public struct ChatTranscript: Sendable, Equatable {
    /// The conversation, oldest first.
    public var messages: [ChatMessage]
    /// Every tool call so far, oldest first.
    public var timeline: [ToolCallRecord]
    /// Token usage (and cost, when known) so far.
    public var totalUsage: ChatUsage
    /// How many turns were started.
    public var turnCount: Int
    /// The gateway's session, which later calls continue.
    public var sessionID: String?

    /// Creates a transcript.
    public init(
        messages: [ChatMessage], timeline: [ToolCallRecord] = [],
        totalUsage: ChatUsage = ChatUsage(inputTokens: 0, outputTokens: 0), turnCount: Int = 0,
        sessionID: String? = nil
    ) {
        self.messages = messages
        self.timeline = timeline
        self.totalUsage = totalUsage
        self.turnCount = turnCount
        self.sessionID = sessionID
    }
}
