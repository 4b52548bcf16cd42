public import Chat
public import Foundation
import OrderedJSON
public import Storage
import Synchronization
import ValueFormats

/// What a stored conversation says about itself besides its transcript.
public struct ChatHeader: Sendable, Equatable {
    /// The conversation's id.
    public var id: String
    /// The host its tools reach.
    public var host: String
    /// The provider.
    public var provider: ProviderKind
    /// The base URL, without credentials.
    public var baseURL: String?
    /// The directory the file tools are confined to.
    public var root: String?
    /// When it started.
    public var createdAt: Date

    /// Creates a header.
    public init(
        id: String, host: String, provider: ProviderKind, baseURL: String?, root: String?, createdAt: Date
    ) {
        self.id = id
        self.host = host
        self.provider = provider
        self.baseURL = baseURL
        self.root = root
        self.createdAt = createdAt
    }

    /// A new conversation id: 12 random hex digits, short enough to type, unlikely to repeat.
    public static func newID() -> String {
        var generator = SystemRandomNumberGenerator()
        return Hex.string((0..<6).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }
}

/// Converts between a chat session's transcript and its stored form.
public enum ChatHistory {
    /// The stored form of a conversation.
    ///
    /// - Parameters:
    ///   - turns: how each turn ended, oldest first.
    public static func stored(
        _ header: ChatHeader, model: String, systemPrompt: String?, transcript: ChatTranscript,
        turns: [StoredChatTurn], updatedAt: Date
    ) -> StoredConversation {
        let title = transcript.messages.lazy.compactMap { message -> String? in
            if case .user(let text) = message { return text } else { return nil }
        }.first.map(shortTitle)
        let session = StoredChatSession(
            id: header.id, host: header.host, provider: header.provider.rawValue, model: model,
            baseURL: header.baseURL, systemPrompt: systemPrompt, root: header.root,
            gatewaySessionID: transcript.sessionID, title: title, createdAt: header.createdAt, updatedAt: updatedAt,
            turns: transcript.turnCount, inputTokens: transcript.totalUsage.inputTokens,
            outputTokens: transcript.totalUsage.outputTokens, costUSD: transcript.totalUsage.costUSD,
            toolCalls: transcript.timeline.count)
        return StoredConversation(
            session: session, messages: transcript.messages.map(stored), toolCalls: transcript.timeline.map(stored),
            turns: turns)
    }

    /// The transcript of a stored conversation, to continue it.
    public static func transcript(_ conversation: StoredConversation) -> ChatTranscript {
        let session = conversation.session
        return ChatTranscript(
            messages: conversation.messages.compactMap(message), timeline: conversation.toolCalls.map(record),
            totalUsage: ChatUsage(
                inputTokens: session.inputTokens, outputTokens: session.outputTokens, costUSD: session.costUSD),
            turnCount: max(session.turns, conversation.turns.last?.turn ?? 0),
            sessionID: session.gatewaySessionID)
    }

    /// The stored record of a finished turn.
    public static func turn(
        _ summary: TurnSummary, model: String, span: ChatSpanIDs?, finishedAt: Date
    ) -> StoredChatTurn {
        StoredChatTurn(
            turn: summary.turn, model: model, finishReason: summary.finishReason.rawValue,
            modelCalls: summary.modelCalls, toolCalls: summary.toolCalls, inputTokens: summary.usage?.inputTokens,
            outputTokens: summary.usage?.outputTokens, costUSD: summary.usage?.costUSD,
            errorKind: summary.error?.kind.rawValue, errorMessage: summary.error?.message, traceID: span?.traceID,
            spanID: span?.spanID, finishedAt: finishedAt)
    }

    static func shortTitle(_ text: String) -> String {
        let line = text.split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        return line.count > 80 ? String(line.prefix(79)) + "…" : line
    }

    // MARK: - Messages

    static func stored(_ message: ChatMessage) -> StoredChatMessage {
        switch message {
        case .system(let text):
            return StoredChatMessage(role: "system", content: text)
        case .user(let text):
            return StoredChatMessage(role: "user", content: text)
        case .assistant(let text, let calls):
            let json: String? =
                calls.isEmpty
                ? nil
                : JSONValue.array(
                    calls.map { call in
                        .object(["id": .string(call.id), "name": .string(call.name), "input": call.input])
                    }
                ).jsonString
            return StoredChatMessage(role: "assistant", content: text, toolCallsJSON: json)
        case .toolResult(let result):
            return StoredChatMessage(
                role: "tool", content: result.content, toolCallID: result.toolCallID, toolName: result.name,
                isError: result.isError)
        }
    }

    static func message(_ stored: StoredChatMessage) -> ChatMessage? {
        switch stored.role {
        case "system":
            return .system(stored.content)
        case "user":
            return .user(stored.content)
        case "assistant":
            let calls =
                stored.toolCallsJSON.flatMap { try? JSONParser.parse($0) }?.arrayValue?.compactMap { call in
                    call["id"]?.stringValue.map { id in
                        ToolCall(id: id, name: call["name"]?.stringValue ?? "", input: call["input"] ?? .object([:]))
                    }
                } ?? []
            return .assistant(text: stored.content, toolCalls: calls)
        case "tool":
            return .toolResult(
                ToolResultMessage(
                    toolCallID: stored.toolCallID ?? "", name: stored.toolName ?? "", content: stored.content,
                    isError: stored.isError))
        default:
            return nil
        }
    }

    // MARK: - Timeline

    static func stored(_ record: ToolCallRecord) -> StoredToolCall {
        StoredToolCall(
            turn: record.turn, callID: record.call.id, name: record.call.name, inputJSON: record.call.input.jsonString,
            status: record.status.rawValue, runsRemotely: record.runsRemotely, durationMs: record.durationMs,
            exitCode: record.exitCode, output: record.output, outputBytes: record.outputBytes, wasCut: record.wasCut,
            traceID: record.call.span?.traceID, spanID: record.call.span?.spanID)
    }

    static func record(_ stored: StoredToolCall) -> ToolCallRecord {
        let span = stored.spanID.map { ChatSpanIDs(traceID: stored.traceID ?? "", spanID: $0) }
        let input = (try? JSONParser.parse(stored.inputJSON)) ?? .string(stored.inputJSON)
        var record = ToolCallRecord(
            call: ToolCall(id: stored.callID, name: stored.name, input: input, span: span),
            status: ToolCallRecord.Status(rawValue: stored.status) ?? .error, turn: stored.turn,
            runsRemotely: stored.runsRemotely)
        record.durationMs = stored.durationMs
        record.exitCode = stored.exitCode
        record.output = stored.output
        record.outputBytes = stored.outputBytes
        record.wasCut = stored.wasCut
        return record
    }
}

/// Forwards every callback to another observer (the tracing one) and keeps each finished turn's span and
/// summary, so that the turn can be stored with the span that stands for it.
public final class TurnRecordingObserver: ChatObserver {
    /// A turn that ended.
    public struct FinishedTurn: Sendable {
        /// The turn.
        public var info: TurnInfo
        /// Its `invoke_agent` span.
        public var span: ChatSpanIDs?
        /// How it ended.
        public var summary: TurnSummary
    }

    private let base: (any ChatObserver)?
    private let finished = Lock<[FinishedTurn]>([])

    /// Wraps `base`, or records alone when it is `nil`.
    public init(_ base: (any ChatObserver)?) {
        self.base = base
    }

    /// The turns that ended since the last call, oldest first.
    public func takeFinishedTurns() -> [FinishedTurn] {
        finished.withLock { turns in
            defer { turns.removeAll() }
            return turns
        }
    }

    public func turnStarted(_ turn: TurnInfo) -> ChatSpanIDs? {
        base?.turnStarted(turn)
    }

    public func turnEnded(_ turn: TurnInfo, span: ChatSpanIDs?, summary: TurnSummary) {
        base?.turnEnded(turn, span: span, summary: summary)
        finished.withLock { $0.append(FinishedTurn(info: turn, span: span, summary: summary)) }
    }

    public func modelCallStarted(_ call: ModelCallInfo, parent: ChatSpanIDs?) -> ChatSpanIDs? {
        base?.modelCallStarted(call, parent: parent)
    }

    public func modelCallEnded(_ call: ModelCallInfo, span: ChatSpanIDs?, outcome: ModelCallOutcome) {
        base?.modelCallEnded(call, span: span, outcome: outcome)
    }

    public func toolStarted(_ call: ToolCall, turn: TurnInfo, parent: ChatSpanIDs?) -> ChatSpanIDs? {
        base?.toolStarted(call, turn: turn, parent: parent)
    }

    public func toolEnded(_ call: ToolCall, result: ToolResult) {
        base?.toolEnded(call, result: result)
    }

    public func withSpan<Value: Sendable>(_ span: ChatSpanIDs?, _ body: @Sendable () async -> Value) async -> Value {
        guard let base else { return await body() }
        return await base.withSpan(span, body)
    }
}
