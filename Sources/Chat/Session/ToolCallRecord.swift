/// One row of the tool timeline: a tool call and where it is in its lifecycle.
public struct ToolCallRecord: Sendable, Equatable {
    /// Where a call is: requested by the model → running → ok or error; or never run.
    public enum Status: String, Sendable, Hashable {
        /// The model asked for it; it runs once the model's answer is complete.
        case requested
        /// It is running (locally, or on the gateway).
        case running
        /// It finished without error.
        case ok
        /// It failed, was refused (invalid arguments, unknown tool) or was stopped.
        case error
        /// It was never run: the model's stream failed or the user stopped the turn first.
        case notRun = "not_run"
    }

    /// The call as the model made it, with its span once it started.
    public var call: ToolCall
    /// Where it is.
    public var status: Status
    /// The turn it belongs to.
    public var turn: Int
    /// Whether the provider ran it (the gateway) rather than this process.
    public var runsRemotely: Bool
    /// How long it ran.
    public var durationMs: Double?
    /// The exit code of the command behind it.
    public var exitCode: Int?
    /// The output as sent to the model (capped).
    public var output: String?
    /// The size of the output before the cap, in bytes.
    public var outputBytes: Int?
    /// Whether the output was cut to the cap.
    public var wasCut: Bool

    /// Creates a record.
    public init(call: ToolCall, status: Status, turn: Int, runsRemotely: Bool) {
        self.call = call
        self.status = status
        self.turn = turn
        self.runsRemotely = runsRemotely
        self.durationMs = nil
        self.exitCode = nil
        self.output = nil
        self.outputBytes = nil
        self.wasCut = false
    }
}

/// A tool call the session wants started.
public struct ToolInvocation: Sendable, Equatable {
    /// The call.
    public var call: ToolCall
    /// Why the call must not run (unknown tool, arguments that fail the schema); its error result is this text.
    public var rejection: String?
    /// Whether the provider runs it (the gateway): the driver only opens and closes its span.
    public var runsRemotely: Bool

    /// Creates an invocation.
    public init(call: ToolCall, rejection: String?, runsRemotely: Bool) {
        self.call = call
        self.rejection = rejection
        self.runsRemotely = runsRemotely
    }
}

/// How a turn ended.
public struct TurnSummary: Sendable, Equatable {
    /// The turn's number in the session.
    public var turn: Int
    /// Why it ended.
    public var finishReason: FinishReason
    /// How many model calls it took.
    public var modelCalls: Int
    /// Its token usage summed over its model calls, when any was reported.
    public var usage: ChatUsage?
    /// How many tool calls it made.
    public var toolCalls: Int
    /// How many malformed frames were skipped.
    public var malformedFrames: Int
    /// The error that ended it, if one did.
    public var error: ChatError?
    /// The gateway session, when there is one.
    public var sessionID: String?

    /// Creates a summary.
    public init(
        turn: Int, finishReason: FinishReason, modelCalls: Int, usage: ChatUsage?, toolCalls: Int,
        malformedFrames: Int, error: ChatError?, sessionID: String?
    ) {
        self.turn = turn
        self.finishReason = finishReason
        self.modelCalls = modelCalls
        self.usage = usage
        self.toolCalls = toolCalls
        self.malformedFrames = malformedFrames
        self.error = error
        self.sessionID = sessionID
    }
}
