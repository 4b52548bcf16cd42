import AgentTracing
public import Chat
import Foundation
import OrderedJSON
public import Storage
import Synchronization
import ValueFormats

/// Chat turns for a long-running face (`serve`): each turn opens its conversation (new, or a stored one resumed),
/// streams its events, stores the conversation and closes what it opened, as `hostscope chat --message` does.
/// One turn runs per conversation at a time, at most ``Limits/concurrentTurns`` in all, each for at most
/// ``Limits/turnTimeLimit``; a running turn can be stopped, and a stored tool call run again.
///
/// Provider, model, base URL and key sources are the face's configuration (``base``): the person asking names
/// only the host, the conversation and the message, so no key ever comes from or goes to them.
public final class ChatTurns: Sendable {
    /// How much chatting a face allows.
    public struct Limits: Sendable, Hashable {
        /// Turns running at once, over every conversation.
        public var concurrentTurns: Int
        /// How long one turn may run before it is stopped.
        public var turnTimeLimit: Duration
        /// The longest message taken, in bytes.
        public var maximumMessageBytes: Int

        /// Limits; by default 4 turns at once, 5 minutes each, messages up to 32 KiB.
        public init(concurrentTurns: Int = 4, turnTimeLimit: Duration = .seconds(300), maximumMessageBytes: Int = 32768)
        {
            self.concurrentTurns = concurrentTurns
            self.turnTimeLimit = turnTimeLimit
            self.maximumMessageBytes = maximumMessageBytes
        }
    }

    /// Why a turn was not started though the request was right: the conversation is busy, or too many turns
    /// run. The face answers it as "try later" (409, 503).
    public struct Refusal: Error, Sendable, Equatable {
        /// Whether the server as a whole is at its limit (else: this conversation has a turn running).
        public var serverBusy: Bool
        /// The sentence to show.
        public var message: String
    }

    /// A started turn: its conversation and the events, ending with `done`. Dropping the stream stops the turn.
    public struct Turn: Sendable {
        /// The conversation's id (new, or the one resumed).
        public var conversationID: String
        /// The host its tools reach.
        public var host: String
        /// The events of the turn, as `hostscope chat --jsonl` prints them.
        public var events: AsyncStream<ChatEvent>
    }

    /// The provider, model, base URL and key sources of every conversation.
    public let base: ChatRequest
    /// The limits in force.
    public let limits: Limits
    private let settings: CoreSettings
    private let running = Lock<[String: RunningTurn]>([:])

    /// Turns for `settings` (the face's database, connection and tracing) with `base`'s provider; the provider's
    /// configuration is checked here, so a missing key is one sentence at start rather than at the first turn.
    ///
    /// - Throws: ``CoreError`` (`invalidRequest`) when the provider cannot be used as configured.
    public init(settings: CoreSettings, base: ChatRequest, limits: Limits = Limits()) throws(CoreError) {
        var connection = settings.connection
        connection.prompter = nil
        var checked = settings
        checked.connection = connection
        self.settings = checked
        self.base = base
        self.limits = limits
        _ = try ChatService(settings: checked).makeSetup(base, resumed: nil)
    }

    /// Whether the conversation `id` has a turn running.
    public func isRunning(_ id: String) -> Bool {
        running.withLock { $0[id] != nil }
    }

    /// Starts a turn of `message` on `host` in a new conversation, or in the stored conversation `conversation`
    /// (its own host when `host` is `nil`); returns once the conversation is open.
    ///
    /// - Throws: ``Refusal`` when the conversation has a turn running or too many turns run; ``CoreError``
    ///   (`invalidRequest`) for an empty or oversized message, a host that does not resolve, an unknown
    ///   conversation or one about another host.
    public func start(message: String, host: String?, conversation: String?) async throws -> Turn {
        guard !message.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            throw CoreError(.invalidRequest, "the message is empty; write a question about the host")
        }
        guard message.utf8.count <= limits.maximumMessageBytes else {
            throw CoreError(
                .invalidRequest,
                "the message is \(message.utf8.count) bytes; at most \(limits.maximumMessageBytes) are taken")
        }
        let id = conversation ?? ChatHeader.newID()
        let slot = try reserve(id)
        var request = base
        request.host = host
        request.resume = conversation
        let service = ChatService(settings: settings, newID: { id })
        let (events, continuation) = AsyncStream.makeStream(of: ChatEvent.self)
        let limit = limits.turnTimeLimit
        let opening = OpeningSignal()
        let task = Task {
            do {
                try await service.withConversation(request) { conversation in
                    let session = await conversation.session
                    opening.open(.success(conversation.tools.host))
                    await Self.run(message, session: session, slot: slot, limit: limit, into: continuation)
                }
            } catch {
                opening.open(.failure(error))
            }
            continuation.finish()
            self.release(id)
        }
        continuation.onTermination = { termination in
            // The client left: the turn stops (the text so far is kept and stored).
            if case .cancelled = termination { Task { await slot.stop() } }
        }
        switch await opening.wait() {
        case .success(let hostName):
            return Turn(conversationID: id, host: hostName, events: events)
        case .failure(let error):
            await task.value
            throw error
        }
    }

    /// Streams one turn's events into `continuation`, stopping it at `limit` with an error event saying so.
    private static func run(
        _ message: String, session: ChatSession, slot: RunningTurn, limit: Duration,
        into continuation: AsyncStream<ChatEvent>.Continuation
    ) async {
        let stream = await session.send(message)
        slot.attach(session)
        let timedOut = Lock(false)
        let timer = Task {
            try? await Task.sleep(for: limit)
            guard !Task.isCancelled else { return }
            timedOut.withLock { $0 = true }
            await session.stop()
        }
        for await event in stream {
            if case .done = event, timedOut.withLock({ $0 }) {
                continuation.yield(
                    .error(
                        ChatError(
                            kind: .timeout,
                            message: "the turn ran for \(DurationText.format(limit)), the longest serve allows, and "
                                + "was stopped; the answer so far is kept")))
            }
            continuation.yield(event)
        }
        timer.cancel()
    }

    /// Stops the running turn of conversation `id` (its model call and tool calls: remote commands stopped, SFTP
    /// handles closed); the turn's events end with `done` reason `stopped`.
    ///
    /// - Returns: whether a turn was running.
    public func stop(_ id: String) async -> Bool {
        guard let slot = running.withLock({ $0[id] }) else { return false }
        await slot.stop()
        return true
    }

    private func reserve(_ id: String) throws(Refusal) -> RunningTurn {
        try running.withLock { (turns: inout [String: RunningTurn]) throws(Refusal) -> RunningTurn in
            if turns[id] != nil {
                throw Refusal(
                    serverBusy: false,
                    message: "conversation \(id) has a turn running; wait for it to end or stop it first")
            }
            guard turns.count < limits.concurrentTurns else {
                throw Refusal(
                    serverBusy: true,
                    message: "\(limits.concurrentTurns) chat turns are running, the most this serve runs at once; "
                        + "try again when one has ended")
            }
            let slot = RunningTurn()
            turns[id] = slot
            return slot
        }
    }

    private func release(_ id: String) {
        running.withLock { _ = $0.removeValue(forKey: id) }
    }

    // MARK: - Stored conversations

    /// Stored conversations, most recent first; empty when none was stored yet.
    public func conversations(limit: Int) async throws(CoreError) -> [StoredChatSession] {
        try await ChatService(settings: settings).sessions(limit: limit) ?? []
    }

    /// The stored conversation `id` (or a unique prefix).
    ///
    /// - Throws: ``CoreError``: `notFound` when there is none, `failed` when the database cannot be read.
    public func conversation(_ id: String) async throws(CoreError) -> StoredConversation {
        let database = try await openStore()
        let found: StoredConversation?
        do {
            found = try await database.chats.conversation(id: id)
        } catch {
            try? await database.close()
            throw CoreError(.notFound, error.message)
        }
        try? await database.close()
        guard let found else {
            throw CoreError(.notFound, "no stored conversation \(id); GET /api/v1/chat/conversations lists them")
        }
        return found
    }

    private func openStore() async throws(CoreError) -> StorageDatabase {
        do {
            return try await StorageDatabase.open(at: settings.databasePath, mode: .existingOnly)
        } catch  where error.code == .notFound {
            throw CoreError(.notFound, "no conversation is stored yet")
        } catch {
            throw CoreError(.failed, error.message)
        }
    }

    /// Runs a stored tool call of conversation `id` again on the conversation's host, with the same input and
    /// the same read-only tool, as an `execute_tool` span of its own (its SSH and SFTP work its children). The
    /// conversation itself is not changed.
    ///
    /// - Throws: ``CoreError``: `notFound` for an unknown conversation or call; `invalidRequest` for a call the
    ///   provider ran (the gateway) or whose input no longer passes the tool's schema.
    public func rerun(conversation id: String, call callID: String) async throws(CoreError) -> ToolResult {
        let stored = try await conversation(id)
        guard let record = stored.toolCalls.last(where: { $0.callID == callID }) else {
            throw CoreError(.notFound, "conversation \(stored.session.id) has no tool call \(callID)")
        }
        guard !record.runsRemotely else {
            throw CoreError(.invalidRequest, "\(record.name) ran on the gateway; hostscope cannot run it again")
        }
        let tools = try HostTools.resolve(
            host: stored.session.host, root: stored.session.root, connection: settings.connection,
            environment: settings.environment)
        guard let definition = tools.tools.first(where: { $0.name == record.name }) else {
            throw CoreError(.invalidRequest, "\(record.name) is not a tool of this hostscope; nothing was run")
        }
        let input = (try? JSONParser.parse(record.inputJSON)) ?? .string(record.inputJSON)
        let problems = JSONSchemaValidator.validate(input, against: definition.inputSchema)
        guard problems.isEmpty else {
            await tools.close()
            throw CoreError(
                .invalidRequest,
                "the input of \(record.name) does not pass its schema (\(problems.joined(separator: "; "))); "
                    + "nothing was run")
        }
        let call = ToolCall(id: record.callID, name: record.name, input: input)
        let turn = TurnInfo(
            number: record.turn, provider: ProviderKind(rawValue: stored.session.provider) ?? .openAI,
            model: stored.session.model, conversationID: stored.session.id)
        let settings = settings
        return await TraceRuntime.with(settings.traceSetup(), diagnostics: settings.diagnostics) { trace in
            let observer = TracingChatObserver(tracer: trace.tracer)
            let span = observer.toolStarted(call, turn: turn, parent: nil)
            let started = ContinuousClock.now
            let output = await observer.withSpan(span) {
                do {
                    return try await tools.execute(
                        name: call.name, input: call.input, context: ToolContext(callID: call.id, span: span))
                } catch {
                    return ToolOutput(text: "\(call.name) failed: \(error)", isError: true)
                }
            }
            let result = ToolResult(
                id: call.id, name: call.name, isError: output.isError,
                durationMs: started.duration(to: .now).inMilliseconds, exitCode: output.exitCode, output: output.text,
                span: span)
            observer.toolEnded(call, result: result)
            await tools.close()
            return result
        }
    }
}

/// A running turn's session, known once its conversation is open; a stop that comes first is kept for it.
final class RunningTurn: Sendable {
    private struct State {
        var session: ChatSession?
        var stopRequested = false
    }

    private let state = Lock(State())

    /// The session of the turn; stops it at once when a stop came first.
    func attach(_ session: ChatSession) {
        let stopNow = state.withLock { state in
            state.session = session
            return state.stopRequested
        }
        if stopNow { Task { await session.stop() } }
    }

    func stop() async {
        let session = state.withLock { state in
            state.stopRequested = true
            return state.session
        }
        await session?.stop()
    }
}

/// The one-time answer of a turn's opening: the conversation's host, or why it could not open.
private final class OpeningSignal: Sendable {
    private struct State {
        var result: Result<String, any Error>?
        var waiter: CheckedContinuation<Result<String, any Error>, Never>?
    }

    private let state = Lock(State())

    func open(_ result: Result<String, any Error>) {
        let waiter = state.withLock { state -> CheckedContinuation<Result<String, any Error>, Never>? in
            guard state.result == nil else { return nil }
            state.result = result
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: result)
    }

    func wait() async -> Result<String, any Error> {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Result<String, any Error>? in
                if let result = state.result { return result }
                state.waiter = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}
