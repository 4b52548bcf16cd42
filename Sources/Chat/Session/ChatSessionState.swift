import OrderedJSON

/// What the session asks its driver to do.
public enum ChatSessionAction: Sendable, Equatable {
    /// Hand this event to whoever is listening.
    case emit(ChatEvent)
    /// Stream a model call and feed each of its events to ``ChatSessionState/receive(_:)``.
    case callModel(ChatRequest)
    /// Open the call's span, report it with ``ChatSessionState/toolStarted(id:span:)``, then run it (unless
    /// it was rejected or runs remotely) and report the output with
    /// ``ChatSessionState/toolFinished(id:output:durationMs:)``.
    case startTool(ToolInvocation)
    /// Close the call's span.
    case endTool(ToolCall, ToolResult)
    /// The turn is over.
    case finishTurn(TurnSummary)
}

/// A chat session's conversation and tool loop as a value-type state machine: events in, actions out.
///
/// It holds the conversation (system prompt, user and assistant messages, tool calls and results), the tool
/// timeline and usage totals, and decides what happens next: after a model call whose answer asks for tools,
/// each call is checked (known tool, arguments valid against its schema) and started; when every result is
/// in, they go back to the model, until the model answers without tools or the iteration limit is reached.
/// It does no I/O and reads no clock, so every path is testable by feeding it events.
public struct ChatSessionState: Sendable {
    /// Limits of the tool loop.
    public struct Configuration: Sendable, Hashable {
        /// The most model calls one turn may make; the tool loop stops there with a `tool_loop_limit` error.
        public var maxIterations: Int
        /// The most bytes of one tool's output sent to the model (and kept in the timeline).
        public var maxToolOutputBytes: Int
        /// The answer length limit passed to the provider.
        public var maxTokens: Int?
        /// The sampling temperature passed to the provider.
        public var temperature: Double?
        /// How long one tool call may run; past it the call is cancelled and its result is an error saying so.
        public var toolTimeout: Duration

        /// Creates a configuration.
        public init(
            maxIterations: Int = 10, maxToolOutputBytes: Int = 16 * 1024, maxTokens: Int? = nil,
            temperature: Double? = nil, toolTimeout: Duration = .seconds(60)
        ) {
            self.maxIterations = maxIterations
            self.maxToolOutputBytes = maxToolOutputBytes
            self.maxTokens = maxTokens
            self.temperature = temperature
            self.toolTimeout = toolTimeout
        }
    }

    /// What the session is doing.
    public enum Phase: Sendable, Hashable {
        /// Waiting for the user.
        case idle
        /// A model call is streaming.
        case streaming
        /// The model's tool calls are running.
        case runningTools
    }

    private struct Turn: Sendable {
        var number: Int
        var modelCalls = 1
        var text = ""
        var requested: [ToolCall] = []
        var pending: [String] = []
        var usage: ChatUsage?
        var toolCalls = 0
        var malformedFrames = 0
        var error: ChatError?
    }

    /// The model asked.
    public private(set) var model: String
    /// The system prompt sent with every call.
    public private(set) var systemPrompt: String?
    /// The conversation, oldest first.
    public private(set) var messages: [ChatMessage] = []
    /// Every tool call of the session, oldest first.
    public private(set) var timeline: [ToolCallRecord] = []
    /// Token usage over the whole session.
    public private(set) var totalUsage = ChatUsage(inputTokens: 0, outputTokens: 0, costUSD: nil)
    /// What the session is doing.
    public private(set) var phase = Phase.idle
    /// The gateway session, once the gateway named one; later calls continue it.
    public private(set) var sessionID: String?
    /// hostscope's id for the conversation, when it has one: what `done` names as its session when the provider
    /// keeps no session of its own, and what tracing records as `gen_ai.conversation.id`.
    public let conversationID: String?
    /// The number of turns started.
    public private(set) var turnCount = 0
    /// The limits.
    public let configuration: Configuration

    private let tools: [ToolDefinition]
    private let providerRunsTools: Bool
    private var turn: Turn?
    private var anyCost = false

    /// Creates a session.
    ///
    /// - Parameters:
    ///   - tools: the tools offered to the model; calls to others are refused.
    ///   - providerRunsTools: whether the provider runs tools itself (the gateway), so calls are only tracked.
    ///   - conversationID: hostscope's id for the conversation.
    public init(
        model: String, systemPrompt: String? = nil, tools: [ToolDefinition] = [], providerRunsTools: Bool = false,
        configuration: Configuration = Configuration(), conversationID: String? = nil
    ) {
        self.conversationID = conversationID
        self.model = model
        self.systemPrompt = systemPrompt
        self.tools = tools
        self.providerRunsTools = providerRunsTools
        self.configuration = configuration
    }

    /// The conversation, timeline and totals, to store and continue later.
    public var transcript: ChatTranscript {
        ChatTranscript(
            messages: messages, timeline: timeline, totalUsage: totalUsage, turnCount: turnCount, sessionID: sessionID)
    }

    /// Continues a stored conversation: its messages, timeline, totals and turn numbers replace the current
    /// ones. Calls that were still requested or running when it was stored are marked as never finished.
    public mutating func restore(_ transcript: ChatTranscript) throws(ChatError) {
        try requireIdle("continue another conversation")
        messages = transcript.messages
        timeline = transcript.timeline.map { record in
            var record = record
            switch record.status {
            case .requested: record.status = .notRun
            case .running: record.status = .error
            default: break
            }
            return record
        }
        totalUsage = transcript.totalUsage
        anyCost = transcript.totalUsage.costUSD != nil
        turnCount = transcript.turnCount
        sessionID = transcript.sessionID
    }

    /// The number of the running turn, if one is running.
    public var currentTurn: Int? { turn?.number }

    /// Starts a turn with the user's message.
    public mutating func startTurn(_ text: String) throws(ChatError) -> [ChatSessionAction] {
        try requireIdle("start a turn")
        messages.append(.user(text))
        return beginTurn()
    }

    /// Runs the last turn again: drops everything after the last user message (a partial answer, tool calls
    /// and results) and asks the model anew.
    public mutating func retryLastTurn() throws(ChatError) -> [ChatSessionAction] {
        try requireIdle("retry")
        guard let last = messages.lastIndex(where: { if case .user = $0 { true } else { false } }) else {
            throw ChatError(kind: .invalidState, message: "there is no earlier message to retry")
        }
        messages.removeSubrange((last + 1)...)
        return beginTurn()
    }

    /// Uses another model from the next call on.
    public mutating func switchModel(_ model: String) {
        self.model = model
    }

    /// Sets (or, with `nil`, removes) the system prompt from the next call on.
    public mutating func setSystemPrompt(_ text: String?) {
        systemPrompt = text.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Forgets the conversation, keeping model, system prompt and totals.
    public mutating func clearConversation() throws(ChatError) {
        try requireIdle("start a new conversation")
        messages.removeAll()
        sessionID = nil
    }

    /// The request for the next model call.
    public func makeRequest() -> ChatRequest {
        ChatRequest(
            model: model, systemPrompt: systemPrompt, messages: messages, tools: providerRunsTools ? [] : tools,
            maxTokens: configuration.maxTokens, temperature: configuration.temperature, sessionID: sessionID)
    }

    /// Takes one event of the running model call.
    public mutating func receive(_ event: ChatEvent) -> [ChatSessionAction] {
        guard phase == .streaming, var turn else {
            return []
        }
        let actions = receive(event, turn: &turn)
        self.turn = phase == .idle ? nil : turn
        return actions
    }

    private mutating func receive(_ event: ChatEvent, turn: inout Turn) -> [ChatSessionAction] {
        switch event {
        case .text(let delta):
            turn.text += delta
            return [.emit(event)]
        case .toolCall(let call):
            turn.toolCalls += 1
            if providerRunsTools {
                timeline.append(ToolCallRecord(call: call, status: .requested, turn: turn.number, runsRemotely: true))
                return [.startTool(ToolInvocation(call: call, rejection: nil, runsRemotely: true))]
            }
            turn.requested.append(call)
            timeline.append(ToolCallRecord(call: call, status: .requested, turn: turn.number, runsRemotely: false))
            return []
        case .toolResult(var result):
            guard providerRunsTools, let index = timeline.lastIndex(where: { $0.call.id == result.id }) else {
                return []
            }
            let (capped, cut) = ToolOutputCap.apply(result.output, maxBytes: configuration.maxToolOutputBytes)
            result.span = timeline[index].call.span
            if result.name.isEmpty {
                result.name = timeline[index].call.name
            }
            timeline[index].status = result.isError ? .error : .ok
            timeline[index].durationMs = result.durationMs
            timeline[index].exitCode = result.exitCode
            timeline[index].outputBytes = result.output.utf8.count
            timeline[index].output = capped
            timeline[index].wasCut = cut
            result.output = capped
            return [.emit(.toolResult(result)), .endTool(timeline[index].call, result)]
        case .usage(let usage):
            turn.usage = turn.usage.map { $0 + usage } ?? usage
            if usage.costUSD != nil {
                anyCost = true
            }
            let cost: Double? =
                anyCost ? (totalUsage.costUSD ?? 0) + (usage.costUSD ?? 0) : nil
            totalUsage = ChatUsage(
                inputTokens: totalUsage.inputTokens + usage.inputTokens,
                outputTokens: totalUsage.outputTokens + usage.outputTokens, costUSD: cost)
            return [.emit(event)]
        case .error(let error):
            if error.kind == .malformedFrame {
                turn.malformedFrames += 1
            } else {
                turn.error = error
            }
            return [.emit(event)]
        case .done(let reason, let session):
            if let session {
                sessionID = session
            }
            if reason == .stopped {
                return stopTurn(&turn)
            }
            if reason == .error || turn.requested.isEmpty {
                if !turn.text.isEmpty {
                    messages.append(.assistant(text: turn.text, toolCalls: []))
                }
                markNotRun(turn.requested, turn: turn.number)
                return finish(&turn, reason: reason)
            }
            return startTools(&turn)
        }
    }

    /// Records that a tool call started, with the span opened for it, and returns its `tool_call` event.
    public mutating func toolStarted(id: String, span: ChatSpanIDs?) -> [ChatSessionAction] {
        guard let index = timeline.lastIndex(where: { $0.call.id == id && $0.status == .requested }) else {
            return []
        }
        timeline[index].call.span = span
        timeline[index].status = .running
        return [.emit(.toolCall(timeline[index].call))]
    }

    /// Records a local tool's output and, once every call of the round is in, sends the results to the model.
    public mutating func toolFinished(id: String, output: ToolOutput, durationMs: Double?) -> [ChatSessionAction] {
        guard phase == .runningTools, var turn, let position = turn.pending.firstIndex(of: id),
            let index = timeline.lastIndex(where: { $0.call.id == id && $0.turn == turn.number })
        else {
            return []
        }
        let actions = finishTool(at: index, position: position, output: output, durationMs: durationMs, turn: &turn)
        self.turn = phase == .idle ? nil : turn
        return actions
    }

    private mutating func finishTool(
        at index: Int, position: Int, output: ToolOutput, durationMs: Double?, turn: inout Turn
    ) -> [ChatSessionAction] {
        let id = timeline[index].call.id
        turn.pending.remove(at: position)
        let (capped, cut) = ToolOutputCap.apply(output.text, maxBytes: configuration.maxToolOutputBytes)
        timeline[index].status = output.isError ? .error : .ok
        timeline[index].durationMs = durationMs
        timeline[index].exitCode = output.exitCode
        timeline[index].output = capped
        timeline[index].outputBytes = output.text.utf8.count
        timeline[index].wasCut = cut
        let call = timeline[index].call
        messages.append(
            .toolResult(ToolResultMessage(toolCallID: id, name: call.name, content: capped, isError: output.isError)))
        let result = ToolResult(
            id: id, name: call.name, isError: output.isError, durationMs: durationMs, exitCode: output.exitCode,
            output: capped, span: call.span)
        var actions: [ChatSessionAction] = [.emit(.toolResult(result)), .endTool(call, result)]
        guard turn.pending.isEmpty else {
            return actions
        }
        guard turn.modelCalls < configuration.maxIterations else {
            let error = ChatError(
                kind: .toolLoopLimit,
                message: "stopped after \(turn.modelCalls) model calls in one turn, the limit; the tool results are "
                    + "kept, ask a follow-up question to go on")
            turn.error = error
            actions.append(.emit(.error(error)))
            actions += finish(&turn, reason: .maxIterations)
            return actions
        }
        turn.modelCalls += 1
        turn.text = ""
        turn.requested = []
        phase = .streaming
        actions.append(.callModel(makeRequest()))
        return actions
    }

    /// Stops the running turn: the text so far is kept as the answer, calls not yet run are marked so, and
    /// calls that were asked for get an error result so the conversation stays valid for the next turn.
    public mutating func stop() -> [ChatSessionAction] {
        guard var turn, phase != .idle else {
            return []
        }
        let actions = stopTurn(&turn)
        self.turn = nil
        return actions
    }

    private mutating func stopTurn(_ turn: inout Turn) -> [ChatSessionAction] {
        switch phase {
        case .streaming:
            if !turn.text.isEmpty {
                messages.append(.assistant(text: turn.text, toolCalls: []))
            }
            markNotRun(turn.requested, turn: turn.number)
            for index in timeline.indices where timeline[index].turn == turn.number && timeline[index].runsRemotely {
                switch timeline[index].status {
                case .running:
                    timeline[index].status = .error
                    timeline[index].output = "stopped by the user"
                case .requested:
                    timeline[index].status = .notRun
                default:
                    break
                }
            }
        case .runningTools:
            var actions: [ChatSessionAction] = []
            for id in turn.pending {
                guard let index = timeline.lastIndex(where: { $0.call.id == id && $0.turn == turn.number }) else {
                    continue
                }
                let started = timeline[index].status == .running
                timeline[index].status = started ? .error : .notRun
                if started {
                    timeline[index].output = "stopped by the user"
                    let call = timeline[index].call
                    let result = ToolResult(
                        id: id, name: call.name, isError: true, durationMs: nil, exitCode: nil,
                        output: "stopped by the user", span: call.span)
                    actions += [.emit(.toolResult(result)), .endTool(call, result)]
                }
                messages.append(
                    .toolResult(
                        ToolResultMessage(
                            toolCallID: id, name: timeline[index].call.name,
                            content: "The user stopped this tool call before it finished.", isError: true)))
            }
            turn.pending = []
            return actions + finish(&turn, reason: .stopped)
        case .idle:
            break
        }
        return finish(&turn, reason: .stopped)
    }

    private mutating func requireIdle(_ what: String) throws(ChatError) {
        guard phase == .idle else {
            throw ChatError(kind: .invalidState, message: "cannot \(what) while a turn is running; stop it first")
        }
    }

    private mutating func beginTurn() -> [ChatSessionAction] {
        turnCount += 1
        turn = Turn(number: turnCount)
        phase = .streaming
        return [.callModel(makeRequest())]
    }

    private mutating func startTools(_ turn: inout Turn) -> [ChatSessionAction] {
        messages.append(.assistant(text: turn.text, toolCalls: turn.requested))
        phase = .runningTools
        turn.pending = turn.requested.map(\.id)
        return turn.requested.map { call in
            .startTool(ToolInvocation(call: call, rejection: rejection(for: call), runsRemotely: false))
        }
    }

    /// Why a call must not run, or nil when it may.
    private func rejection(for call: ToolCall) -> String? {
        guard let tool = tools.first(where: { $0.name == call.name }) else {
            let names = tools.map(\.name).joined(separator: ", ")
            return "There is no tool named \"\(call.name)\". Available tools: \(names.isEmpty ? "none" : names)."
        }
        if case .string = call.input {
            return "The arguments for \(call.name) are not valid JSON; nothing was run. Send a JSON object."
        }
        let problems = JSONSchemaValidator.validate(call.input, against: tool.inputSchema)
        guard problems.isEmpty else {
            return "Invalid arguments for \(call.name); nothing was run: " + problems.joined(separator: "; ") + "."
        }
        return nil
    }

    private mutating func markNotRun(_ calls: [ToolCall], turn number: Int) {
        for call in calls {
            if let index = timeline.lastIndex(where: { $0.call.id == call.id && $0.turn == number }),
                timeline[index].status == .requested
            {
                timeline[index].status = .notRun
            }
        }
    }

    private mutating func finish(_ turn: inout Turn, reason: FinishReason) -> [ChatSessionAction] {
        phase = .idle
        let summary = TurnSummary(
            turn: turn.number, finishReason: reason, modelCalls: turn.modelCalls, usage: turn.usage,
            toolCalls: turn.toolCalls, malformedFrames: turn.malformedFrames, error: turn.error, sessionID: sessionID)
        self.turn = nil
        turn.pending = []
        // The gateway's session when it named one (its status and stop calls take that id), else the conversation's.
        return [.emit(.done(finishReason: reason, sessionID: sessionID ?? conversationID)), .finishTurn(summary)]
    }
}
