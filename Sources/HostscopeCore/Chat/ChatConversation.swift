public import AgentTracing
public import Chat
import CurlHTTP
import Foundation
public import Storage

/// One chat's live parts: the session, its tracing, its host tools, and where the conversation is stored.
/// A face sends the questions (``session``) and renders the events; everything else happens here.
public actor ChatConversation {
    /// The session questions go to; replaced by ``startNewConversation()``.
    public private(set) var session: ChatSession
    /// What the stored conversation says about itself.
    public private(set) var header: ChatHeader
    /// The tools the model may call.
    public nonisolated let tools: HostTools
    /// Whether the provider runs the tools itself (the gateway), so the session has its own totals.
    public nonisolated let runsToolsServerSide: Bool
    /// Whether the conversation is stored (history on and the database open).
    public nonisolated let isStored: Bool

    private let setup: ChatSetup
    private let client: HTTPClient
    private let store: StorageDatabase?
    private let trace: TraceRuntime
    private let observer: TurnRecordingObserver
    private let diagnostics: Diagnostics
    private let newID: @Sendable () -> String
    private let now: @Sendable () -> Date
    private var turns: [StoredChatTurn]

    private init(
        setup: ChatSetup, client: HTTPClient, store: StorageDatabase?, trace: TraceRuntime,
        observer: TurnRecordingObserver, session: ChatSession, turns: [StoredChatTurn], diagnostics: Diagnostics,
        newID: @escaping @Sendable () -> String, now: @escaping @Sendable () -> Date
    ) {
        self.setup = setup
        self.client = client
        self.store = store
        self.trace = trace
        self.observer = observer
        self.session = session
        self.header = setup.header
        self.turns = turns
        self.diagnostics = diagnostics
        self.newID = newID
        self.now = now
        tools = setup.tools
        runsToolsServerSide = setup.provider.runsToolsServerSide
        isStored = store != nil
    }

    /// A conversation ready for its first turn; a resumed conversation is restored into it.
    static func start(
        setup: ChatSetup, client: HTTPClient, store: StorageDatabase?, trace: TraceRuntime,
        resumed: StoredConversation?, diagnostics: Diagnostics, newID: @escaping @Sendable () -> String,
        now: @escaping @Sendable () -> Date
    ) async -> ChatConversation {
        let observer = TurnRecordingObserver(
            TracingChatObserver(tracer: trace.tracer, captureContent: setup.captureContent))
        let session = makeSession(
            setup: setup, client: client, observer: observer, model: setup.model, conversationID: setup.header.id)
        if let resumed {
            // A fresh session is idle, so restoring cannot be refused.
            try? await session.restore(ChatHistory.transcript(resumed))
        }
        return ChatConversation(
            setup: setup, client: client, store: store, trace: trace, observer: observer, session: session,
            turns: resumed?.turns ?? [], diagnostics: diagnostics, newID: newID, now: now)
    }

    private static func makeSession(
        setup: ChatSetup, client: HTTPClient, observer: TurnRecordingObserver, model: String, conversationID: String
    ) -> ChatSession {
        ChatSession(
            provider: setup.provider, client: client, model: model, systemPrompt: setup.systemPrompt,
            tools: setup.tools, observer: observer, configuration: setup.configuration,
            secrets: ProcessSecrets.scrubber, conversationID: conversationID)
    }

    /// The conversation as it would be stored now.
    public func conversation() async -> StoredConversation {
        collectFinishedTurns()
        return ChatHistory.stored(
            header, model: await session.model, systemPrompt: await session.systemPrompt,
            transcript: await session.transcript, turns: turns, updatedAt: now())
    }

    private func collectFinishedTurns() {
        for finished in observer.takeFinishedTurns() {
            turns.removeAll { $0.turn == finished.summary.turn }
            turns.append(
                ChatHistory.turn(finished.summary, model: finished.info.model, span: finished.span, finishedAt: now()))
        }
    }

    /// Stores the conversation (when it is stored); a failure is a warning, the chat goes on.
    public func save() async {
        guard let store else { return }
        let conversation = await conversation()
        do {
            try await store.chats.save(conversation)
        } catch {
            diagnostics.warning("the conversation was not stored: \(error.message)")
        }
    }

    /// Stores the current conversation and starts a new one with a new id, same model and system prompt.
    public func startNewConversation() async {
        await save()
        let model = await session.model
        let system = await session.systemPrompt
        header = ChatHeader(
            id: newID(), host: header.host, provider: header.provider, baseURL: header.baseURL, root: header.root,
            createdAt: now())
        session = Self.makeSession(
            setup: setup, client: client, observer: observer, model: model, conversationID: header.id)
        await session.setSystemPrompt(system)
        turns = []
    }

    /// The timeline row (1-based) of a tool call.
    public func row(_ callID: String) async -> (number: Int, record: ToolCallRecord)? {
        let timeline = await session.timeline
        guard let index = timeline.lastIndex(where: { $0.call.id == callID }) else { return nil }
        return (index + 1, timeline[index])
    }

    /// The span tree around the span whose id starts with `spanPrefix`, with the number of spans of its
    /// trace: from this process's spans, else from the database; `nil` when neither has it.
    public func trace(spanPrefix: String) async -> (tree: TraceTree, traceSize: Int)? {
        let prefix = spanPrefix.lowercased()
        let spans = trace.tracer.finishedSpans()
        let matches = spans.filter { $0.spanID.hex.hasPrefix(prefix) }
        if matches.count == 1, let focus = matches.first {
            let trace = spans.filter { $0.traceID == focus.traceID }
            if let tree = TraceTree.build(around: focus.spanID, in: trace) { return (tree, trace.count) }
        }
        guard let store, let stored = try? await store.spans.span(id: prefix),
            let rows = try? await store.spans.trace(stored.traceID), let focus = try? stored.finishedSpan()
        else { return nil }
        let finished = rows.compactMap { try? $0.finishedSpan() }
        return TraceTree.build(around: focus.spanID, in: finished).map { ($0, rows.count) }
    }

    /// Writes the conversation to `path` (by default `hostscope-chat-ID.md` or `.json` in the current
    /// directory) and returns the path written.
    ///
    /// - Throws: ``CoreError`` (`failed`) naming the file when it cannot be written.
    public func export(_ format: ChatExport.Format, to path: String?) async throws(CoreError) -> String {
        let conversation = await conversation()
        let file = path ?? "hostscope-chat-\(conversation.session.id).\(format.fileExtension)"
        do {
            try ChatExport.text(conversation, format: format).write(toFile: file, atomically: true, encoding: .utf8)
        } catch {
            throw CoreError(.failed, "could not write \(file): \(error.localizedDescription)")
        }
        return file
    }

    /// Stored conversations, most recent first (the current one stored first); `nil` when conversations
    /// are not stored.
    public func storedSessions(limit: Int) async throws(CoreError) -> [StoredChatSession]? {
        guard let store else { return nil }
        await save()
        do {
            return try await store.chats.sessions(limit: limit)
        } catch {
            throw CoreError(.failed, error.message)
        }
    }
}
