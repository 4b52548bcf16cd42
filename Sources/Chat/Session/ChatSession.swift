public import AgentTracing
public import CurlHTTP
import OrderedJSON
import Synchronization
import ValueFormats

/// A chat with one provider: runs turns (model calls and the tool loop) and streams their events.
///
/// The conversation logic lives in ``ChatSessionState``; this actor does its I/O: it streams model calls
/// through the provider, runs tools through the ``ToolExecutor``, reports boundaries to the ``ChatObserver``
/// and hands every event to the caller.
///
/// ```swift
/// let session = ChatSession(provider: provider, client: client, model: "gpt-4o-mini", tools: hostTools)
/// for await event in await session.send("why is the disk filling up?") {
///     print(event.jsonLine)
/// }
/// ```
public actor ChatSession {
    /// Limits of the tool loop.
    public typealias Configuration = ChatSessionState.Configuration

    private var state: ChatSessionState
    private let provider: ChatProvider
    private let client: HTTPClient
    private let executor: (any ToolExecutor)?
    private let observer: (any ChatObserver)?
    private let secrets: SecretScrubber?
    private let now: @Sendable () -> ContinuousClock.Instant
    private var running: Task<Void, Never>?
    /// Which turn `running` belongs to, so a finishing turn never clears the handle of a newer one.
    private var runningTurn = 0
    private var liveSessionID: String?
    private var lastSummary: TurnSummary?

    /// Creates a session.
    ///
    /// - Parameters:
    ///   - tools: runs the tools offered to the model; `nil` offers none. Ignored for a provider that runs
    ///     tools itself (the gateway).
    ///   - observer: told about turns, model calls and tools, e.g. to make spans.
    ///   - secrets: the process's known secrets; every tool result (local or from the gateway) and error
    ///     message is scrubbed of them before the model, the events or the transcript see it.
    ///   - now: the clock for tool durations.
    ///   - conversationID: hostscope's id for the conversation (the stored conversation's): every turn's
    ///     ``TurnInfo`` carries it, and `done` names it as the session when the provider keeps none of its own.
    public init(
        provider: ChatProvider, client: HTTPClient, model: String, systemPrompt: String? = nil,
        tools: (any ToolExecutor)? = nil, observer: (any ChatObserver)? = nil,
        configuration: Configuration = Configuration(), secrets: SecretScrubber? = nil,
        now: @escaping @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }, conversationID: String? = nil
    ) {
        self.provider = provider
        self.client = client
        self.executor = tools
        self.observer = observer
        self.secrets = secrets
        self.now = now
        self.state = ChatSessionState(
            model: model, systemPrompt: systemPrompt, tools: tools?.tools ?? [],
            providerRunsTools: provider.runsToolsServerSide, configuration: configuration,
            conversationID: conversationID)
    }

    /// The conversation so far.
    public var messages: [ChatMessage] { state.messages }
    /// The conversation, timeline and totals, to store and continue later.
    public var transcript: ChatTranscript {
        var transcript = state.transcript
        transcript.sessionID = sessionID
        return transcript
    }
    /// Every tool call of the session.
    public var timeline: [ToolCallRecord] { state.timeline }
    /// Token usage (and cost, when known) over the session.
    public var totalUsage: ChatUsage { state.totalUsage }
    /// The model asked.
    public var model: String { state.model }
    /// The system prompt.
    public var systemPrompt: String? { state.systemPrompt }
    /// The gateway session, once named.
    public var sessionID: String? { liveSessionID ?? state.sessionID }
    /// hostscope's id for the conversation.
    public var conversationID: String? { state.conversationID }
    /// What the session is doing.
    public var phase: ChatSessionState.Phase { state.phase }
    /// How the last finished turn ended.
    public var lastTurn: TurnSummary? { lastSummary }

    /// Starts a turn with the user's message and returns its events, ending with `done`. Dropping or
    /// cancelling the consumer of the stream stops the turn.
    public func send(_ text: String) -> AsyncStream<ChatEvent> {
        begin { state throws(ChatError) in try state.startTurn(text) }
    }

    /// Runs the last turn again (after an error, a stop, or an answer one wants redone).
    public func retry() -> AsyncStream<ChatEvent> {
        begin { state throws(ChatError) in try state.retryLastTurn() }
    }

    /// Stops the running turn, keeping the text so far, and waits until it has wound down. On the gateway it
    /// also asks the gateway to stop the session's run.
    ///
    /// - Returns: whether a turn was running; if so, its events end with `done` reason `stopped`.
    @discardableResult
    public func stop() async -> Bool {
        guard let task = running else {
            return false
        }
        task.cancel()
        if provider.runsToolsServerSide, let session = liveSessionID ?? state.sessionID {
            // In a task of its own so that the caller's cancellation (a watcher that is torn down once the turn
            // ends) cannot abort the request that tells the gateway to stop.
            let provider = provider
            let client = client
            await Task { try? await provider.stopGatewaySession(sessionID: session, using: client) }.value
        }
        await task.value
        return true
    }

    /// Uses another model from the next call on.
    public func switchModel(_ model: String) {
        state.switchModel(model)
    }

    /// Sets or removes the system prompt.
    public func setSystemPrompt(_ text: String?) {
        state.setSystemPrompt(text)
    }

    /// Continues a stored conversation (see ``ChatSessionState/restore(_:)``).
    public func restore(_ transcript: ChatTranscript) throws(ChatError) {
        try state.restore(transcript)
        liveSessionID = transcript.sessionID
    }

    /// Forgets the conversation (not the totals or the timeline).
    public func newConversation() throws(ChatError) {
        try state.clearConversation()
        liveSessionID = nil
    }

    /// The gateway's totals for this session.
    public func gatewayStatus() async throws(ChatError) -> GatewaySessionStatus {
        guard let session = sessionID else {
            throw ChatError(kind: .invalidState, message: "the gateway has not named a session yet")
        }
        return try await provider.gatewayStatus(sessionID: session, using: client)
    }

    // MARK: - Driving a turn

    private struct TurnContext {
        let info: TurnInfo
        let span: ChatSpanIDs?
        let continuation: AsyncStream<ChatEvent>.Continuation
        var modelCalls = 0
    }

    private func begin(
        _ start: (inout ChatSessionState) throws(ChatError) -> [ChatSessionAction]
    ) -> AsyncStream<ChatEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: ChatEvent.self)
        let actions: [ChatSessionAction]
        do {
            actions = try start(&state)
        } catch {
            continuation.yield(.error(error))
            continuation.yield(.done(finishReason: .error, sessionID: sessionID ?? conversationID))
            continuation.finish()
            return stream
        }
        let info = TurnInfo(
            number: state.turnCount, provider: provider.kind, model: state.model, conversationID: conversationID)
        let task = Task {
            await self.run(actions, info: info, continuation: continuation)
        }
        running = task
        runningTurn = info.number
        continuation.onTermination = { termination in
            if case .cancelled = termination {
                task.cancel()
            }
        }
        return stream
    }

    private func run(
        _ actions: [ChatSessionAction], info: TurnInfo, continuation: AsyncStream<ChatEvent>.Continuation
    ) async {
        var context = TurnContext(info: info, span: observer?.turnStarted(info), continuation: continuation)
        await perform(actions, &context)
        if state.phase != .idle {
            // Cancelled between steps: wind the turn down so the conversation stays consistent.
            await perform(state.stop(), &context)
        }
        continuation.finish()
        if runningTurn == info.number {
            running = nil
        }
    }

    /// Carries out actions in order. Work that has not started yet (a model call, a tool) is skipped once the
    /// turn is stopped, and `run` winds the turn down afterwards; actions that report what already happened
    /// (events, span ends) are always carried out, so nothing is emitted after the turn's `done`.
    private func perform(_ actions: [ChatSessionAction], _ context: inout TurnContext) async {
        for action in actions {
            switch action {
            case .emit(let event):
                context.continuation.yield(event)
            case .endTool(let call, let result):
                observer?.toolEnded(call, result: result)
            case .finishTurn(let summary):
                lastSummary = summary
                observer?.turnEnded(context.info, span: context.span, summary: summary)
            case .callModel(let request):
                guard !Task.isCancelled else {
                    continue
                }
                await callModel(request, &context)
            case .startTool(let invocation):
                guard !Task.isCancelled else {
                    continue
                }
                await startTool(invocation, &context)
            }
        }
    }

    private func callModel(_ request: ChatRequest, _ context: inout TurnContext) async {
        context.modelCalls += 1
        let call = ModelCallInfo(
            turn: context.info, iteration: context.modelCalls,
            url: HTTPRequest(url: provider.configuration.endpointURL).redactedURL, request: request)
        let span = observer?.modelCallStarted(call, parent: context.span)
        var headers = HTTPHeaders()
        if let span {
            headers.add(name: "traceparent", value: "00-\(span.traceID)-\(span.spanID)-01")
        }
        var iterator = provider.stream(request, using: client, headers: headers).makeAsyncIterator()
        var usage: ChatUsage?
        var error: ChatError?
        var text = ""
        var toolCalls: [ToolCall] = []
        func outcome(_ reason: FinishReason, session: String?) -> ModelCallOutcome {
            ModelCallOutcome(
                finishReason: reason, usage: usage, error: error, sessionID: session, responseID: iterator.responseID,
                responseModel: iterator.responseModel, text: text, toolCalls: toolCalls)
        }
        while let event = await iterator.next(isolation: self) {
            if Task.isCancelled {
                // `stop()` ran while this event was on its way (a chunk delivered just before the cancellation
                // reached the transfer). The turn is over: the event is dropped, so the answer kept is exactly
                // the text already handed out, and `run` ends the turn with `done` reason `stopped`.
                observer?.modelCallEnded(call, span: span, outcome: outcome(.stopped, session: liveSessionID))
                return
            }
            if let session = iterator.sessionID {
                liveSessionID = session
            }
            switch event {
            case .text(let piece):
                text += piece
            case .toolCall(let requested):
                toolCalls.append(requested)
            case .usage(let reported):
                usage = usage.map { $0 + reported } ?? reported
            case .error(let reported) where reported.endsTurn:
                error = reported
            case .done(let reason, let session):
                observer?.modelCallEnded(call, span: span, outcome: outcome(reason, session: session))
            default:
                break
            }
            await perform(state.receive(scrubbed(event)), &context)
            if case .done = event {
                return
            }
        }
    }

    private func startTool(_ invocation: ToolInvocation, _ context: inout TurnContext) async {
        let call = invocation.call
        let span = observer?.toolStarted(call, turn: context.info, parent: context.span)
        let started = state.toolStarted(id: call.id, span: span)
        guard !started.isEmpty else {
            return
        }
        await perform(started, &context)
        if invocation.runsRemotely {
            // The gateway runs it; its result arrives as a frame of the stream.
            return
        }
        let start = now()
        let output: ToolOutput
        if let rejection = invocation.rejection {
            output = ToolOutput(text: rejection, isError: true)
        } else if let executor {
            let name = call.name
            let input = call.input
            let toolContext = ToolContext(callID: call.id, span: span)
            let timeout = state.configuration.toolTimeout
            let body: @Sendable () async -> ToolOutput = {
                await Self.withDeadline(name: name, timeout: timeout) {
                    do {
                        return try await executor.execute(name: name, input: input, context: toolContext)
                    } catch is CancellationError {
                        return ToolOutput(text: "stopped by the user", isError: true)
                    } catch {
                        return ToolOutput(text: "\(name) failed: \(error)", isError: true)
                    }
                }
            }
            var result: ToolOutput
            if let observer {
                result = await observer.withSpan(span, body)
            } else {
                result = await body()
            }
            result.text = secrets?.scrub(result.text) ?? result.text
            output = result
        } else {
            output = ToolOutput(text: "No tools are available in this session.", isError: true)
        }
        let elapsed = now() - start
        let milliseconds = invocation.rejection == nil ? Self.milliseconds(elapsed) : 0
        if Task.isCancelled {
            // The turn was stopped while the tool ran; `stop` reports it as stopped.
            return
        }
        await perform(state.toolFinished(id: call.id, output: output, durationMs: milliseconds), &context)
    }

    /// The event with the process's secrets scrubbed from what a server sent: a tool result the gateway ran
    /// and an error message.
    private func scrubbed(_ event: ChatEvent) -> ChatEvent {
        guard let secrets, !secrets.isEmpty else { return event }
        switch event {
        case .toolResult(var result):
            result.output = secrets.scrub(result.output)
            return .toolResult(result)
        case .error(var error):
            error.message = secrets.scrub(error.message)
            return .error(error)
        default:
            return event
        }
    }

    /// Runs a tool call, giving up on it after `timeout`: the call is cancelled and its result is an error
    /// that says so. The result comes back at the deadline even when the tool is slow to notice the
    /// cancellation (a read blocked on the host); it winds down on its own afterwards.
    static func withDeadline(
        name: String, timeout: Duration, _ body: @escaping @Sendable () async -> ToolOutput
    ) async -> ToolOutput {
        let first = FirstResult()
        let outcome: ToolOutput? = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<ToolOutput?, Never>) in
                first.start(continuation)
                first.track(work: Task { first.finish(await body()) })
                first.track(
                    timer: Task {
                        try? await Task.sleep(for: timeout)
                        if !Task.isCancelled { first.finish(nil) }
                    })
            }
        } onCancel: {
            // The user stopped the turn: the tool is cancelled and reports it.
            first.cancelWork()
        }
        first.cancelAll()
        guard let outcome else {
            return ToolOutput(
                text: "\(name) did not finish within \(Self.durationText(timeout)) and was stopped; ask for less "
                    + "(a narrower path or pattern, fewer lines or entries) or try again later",
                isError: true)
        }
        return outcome
    }

    /// `60 s`, `1.5 s`, `250 ms`.
    static func durationText(_ duration: Duration) -> String {
        let milliseconds = Int((Self.milliseconds(duration)).rounded())
        if milliseconds < 1000 { return "\(milliseconds) ms" }
        if milliseconds % 1000 == 0 { return "\(milliseconds / 1000) s" }
        return "\(Double(milliseconds) / 1000) s"
    }

    private static func milliseconds(_ duration: Duration) -> Double {
        (duration.inMilliseconds * 1000).rounded() / 1000
    }
}

/// The first of a tool's result and its deadline, handed to a continuation once; the tasks of both are
/// cancelled when it is known.
private final class FirstResult: Sendable {
    private struct State {
        var continuation: CheckedContinuation<ToolOutput?, Never>?
        var finished = false
        var work: Task<Void, Never>?
        var timer: Task<Void, Never>?
        var workCancelled = false
        var allCancelled = false
    }
    private let state = Lock(State())

    func start(_ continuation: CheckedContinuation<ToolOutput?, Never>) {
        state.withLock { $0.continuation = continuation }
    }

    /// Keeps the tool's task, cancelling it at once when a cancellation came first.
    func track(work task: Task<Void, Never>) {
        let cancelNow = state.withLock { state in
            state.work = task
            return state.workCancelled || state.allCancelled
        }
        if cancelNow { task.cancel() }
    }

    /// Keeps the deadline's task, cancelling it at once when everything was cancelled already.
    func track(timer task: Task<Void, Never>) {
        let cancelNow = state.withLock { state in
            state.timer = task
            return state.allCancelled
        }
        if cancelNow { task.cancel() }
    }

    func finish(_ output: ToolOutput?) {
        let continuation = state.withLock { state -> CheckedContinuation<ToolOutput?, Never>? in
            guard !state.finished else { return nil }
            state.finished = true
            defer { state.continuation = nil }
            return state.continuation
        }
        continuation?.resume(returning: output)
    }

    /// Cancels the tool's work, which then finishes with its own "stopped" result.
    func cancelWork() {
        state.withLock { state in
            state.workCancelled = true
            return state.work
        }?.cancel()
    }

    func cancelAll() {
        let (work, timer) = state.withLock { state in
            state.allCancelled = true
            return (state.work, state.timer)
        }
        work?.cancel()
        timer?.cancel()
    }
}
