import Agent
import AgentTracing
import Chat
import CurlHTTP
import Dispatch
import Foundation
import Storage
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// One chat's live parts: the session, its tracing, and where the conversation is stored.
actor ChatRun {
    let setup: ChatSetup
    let client: HTTPClient
    let store: StorageDatabase?
    let trace: TraceRuntime
    let observer: TurnRecordingObserver
    private(set) var session: ChatSession
    private(set) var header: ChatHeader
    private var turns: [StoredChatTurn]

    private init(
        setup: ChatSetup, client: HTTPClient, store: StorageDatabase?, trace: TraceRuntime,
        observer: TurnRecordingObserver, session: ChatSession, turns: [StoredChatTurn]
    ) {
        self.setup = setup
        self.client = client
        self.store = store
        self.trace = trace
        self.observer = observer
        self.session = session
        self.header = setup.header
        self.turns = turns
    }

    /// A chat ready for its first turn; a resumed conversation is restored into it.
    static func start(
        setup: ChatSetup, client: HTTPClient, store: StorageDatabase?, trace: TraceRuntime,
        resumed: StoredConversation?
    ) async -> ChatRun {
        let observer = TurnRecordingObserver(
            TracingChatObserver(tracer: trace.tracer, captureContent: setup.captureContent))
        let session = makeSession(
            setup: setup, client: client, observer: observer, model: setup.model, conversationID: setup.header.id)
        if let resumed {
            // A fresh session is idle, so restoring cannot be refused.
            try? await session.restore(ChatHistory.transcript(resumed))
        }
        return ChatRun(
            setup: setup, client: client, store: store, trace: trace, observer: observer, session: session,
            turns: resumed?.turns ?? [])
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
    func conversation() async -> StoredConversation {
        collectFinishedTurns()
        return ChatHistory.stored(
            header, model: await session.model, systemPrompt: await session.systemPrompt,
            transcript: await session.transcript, turns: turns, updatedAt: Date())
    }

    private func collectFinishedTurns() {
        for finished in observer.takeFinishedTurns() {
            turns.removeAll { $0.turn == finished.summary.turn }
            turns.append(
                ChatHistory.turn(finished.summary, model: finished.info.model, span: finished.span, finishedAt: Date()))
        }
    }

    /// Stores the conversation (when history is on); a failure is a warning, the chat goes on.
    func save() async {
        guard let store else { return }
        let conversation = await conversation()
        do {
            try await store.chats.save(conversation)
        } catch {
            Output.warning("the conversation was not stored: \(error.message)")
        }
    }

    /// Stores the current conversation and starts a new one with a new id.
    func startNewConversation() async {
        await save()
        let model = await session.model
        let system = await session.systemPrompt
        header = ChatHeader(
            id: ChatHeader.newID(), host: header.host, provider: header.provider, baseURL: header.baseURL,
            root: header.root, createdAt: Date())
        session = Self.makeSession(
            setup: setup, client: client, observer: observer, model: model, conversationID: header.id)
        await session.setSystemPrompt(system)
        turns = []
    }

    // MARK: - One turn from the command line

    /// Runs one turn, printing the answer (or, with `jsonl`, every event), and returns the exit status.
    func runOnce(_ message: String, jsonl: Bool) async -> Int32 {
        let session = session
        let stopped = Atomic<Bool>(false)
        let stopping = Mutex<Task<Void, Never>?>(nil)
        let signals = SignalWatcher { _ in
            stopped.store(true, ordering: .relaxed)
            let task = Task { _ = await session.stop() }
            stopping.withLock { $0 = task }
        }
        defer { signals.cancel() }
        let styled = Output.stdoutIsTerminal && !jsonl
        var renderer = MarkdownStreamRenderer(styled: styled)
        var wroteText = false
        for await event in await session.send(message) {
            if jsonl {
                Output.writeData(event.jsonLine + "\n")
                continue
            }
            switch event {
            case .text(let delta):
                Output.write(renderer.feed(delta))
                wroteText = true
            case .toolCall, .toolResult:
                if case .toolResult(let result) = event, let (number, record) = await row(result.id) {
                    Output.writeError(ChatTimelineText.row(number, record, width: Output.terminalWidth) + "\n")
                }
            case .error(let error):
                Output.error("\(error.kind): \(error.message)")
            case .usage, .done:
                break
            }
        }
        if !jsonl {
            let tail = renderer.finish()
            Output.write(tail + (wroteText ? "\n" : ""))
        }
        // The stream ends as soon as the stop cancels it; the gateway's DELETE may still be on its way.
        await stopping.withLock { $0 }?.value
        await save()
        if stopped.load(ordering: .relaxed) { return 130 }
        guard let summary = await session.lastTurn else { return ExitStatus.chat.rawValue }
        if summary.finishReason == .stopped { return 130 }
        return summary.error == nil && summary.finishReason != .error ? 0 : ExitStatus.chat.rawValue
    }

    /// The timeline row (1-based) of a tool call.
    func row(_ callID: String) async -> (Int, ToolCallRecord)? {
        let timeline = await session.timeline
        guard let index = timeline.lastIndex(where: { $0.call.id == callID }) else { return nil }
        return (index + 1, timeline[index])
    }

    // MARK: - Spans

    /// The `trace show` text of a span: from this process's spans, else from the database.
    func traceText(spanPrefix: String) async -> String? {
        let prefix = spanPrefix.lowercased()
        let spans = trace.tracer.finishedSpans()
        let matches = spans.filter { $0.spanID.hex.hasPrefix(prefix) }
        if matches.count == 1, let focus = matches.first {
            let trace = spans.filter { $0.traceID == focus.traceID }
            if let tree = TraceTree.build(around: focus.spanID, in: trace) {
                return TraceText.show(tree, traceSize: trace.count)
            }
        }
        guard let store, let stored = try? await store.spans.span(id: prefix),
            let rows = try? await store.spans.trace(stored.traceID), let focus = try? stored.finishedSpan()
        else { return nil }
        let finished = rows.compactMap { try? $0.finishedSpan() }
        return TraceTree.build(around: focus.spanID, in: finished).map { TraceText.show($0, traceSize: rows.count) }
    }
}

/// Calls a handler on SIGINT and SIGTERM (instead of ending the process) until cancelled.
// @unchecked Sendable: the sources are set up in init and only cancelled afterwards, which Dispatch allows from
// any thread.
final class SignalWatcher: @unchecked Sendable {
    private let sources: [any DispatchSourceSignal]

    init(_ handler: @escaping @Sendable (Int32) -> Void) {
        let queue = DispatchQueue(label: "hostscope.chat.signals")
        var made: [any DispatchSourceSignal] = []
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { handler(number) }
            source.resume()
            made.append(source)
        }
        sources = made
    }

    func cancel() {
        for source in sources { source.cancel() }
    }
}

