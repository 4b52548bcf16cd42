import Foundation
import GRDB
import Testing

@testable import Storage

@Suite struct ChatStoreTests {
    static func conversation(_ id: String, updated: Double = 100, turns: Int = 1) -> StoredConversation {
        StoredConversation(
            session: StoredChatSession(
                id: id, host: "web1", provider: "anthropic", model: "claude-sonnet-4-5",
                baseURL: "https://api.anthropic.com", systemPrompt: "Be brief.", root: "/srv",
                title: "Why is /var full?",
                createdAt: Date(timeIntervalSince1970: 50), updatedAt: Date(timeIntervalSince1970: updated),
                turns: turns, inputTokens: 1200, outputTokens: 80, costUSD: 0.0042),
            messages: [
                StoredChatMessage(role: "system", content: "Be brief."),
                StoredChatMessage(role: "user", content: "Why is /var full?"),
                StoredChatMessage(
                    role: "assistant", content: "Looking.",
                    toolCallsJSON: #"[{"id":"toolu_1","name":"disk_usage","input":{"path":"/var"}}]"#),
                StoredChatMessage(
                    role: "tool", content: "/dev/vda1 91%", toolCallID: "toolu_1", toolName: "disk_usage"),
                StoredChatMessage(role: "assistant", content: "It is 91% full."),
            ],
            toolCalls: [
                StoredToolCall(
                    turn: 1, callID: "toolu_1", name: "disk_usage", inputJSON: #"{"path":"/var"}"#, status: "ok",
                    durationMs: 212.5, exitCode: 0, output: "/dev/vda1 91%", outputBytes: 13,
                    traceID: "4bf92f3577b34da6a3ce929d0e0e4736", spanID: "00f067aa0ba902b7")
            ],
            turns: [
                StoredChatTurn(
                    turn: 1, model: "claude-sonnet-4-5", finishReason: "stop", modelCalls: 2, toolCalls: 1,
                    inputTokens: 1200, outputTokens: 80, costUSD: 0.0042, traceID: "4bf92f3577b34da6a3ce929d0e0e4736",
                    spanID: "a3ce929d0e0e4736", finishedAt: Date(timeIntervalSince1970: updated))
            ])
    }

    @Test func aConversationReadsBackAsItWasSaved() async throws {
        let directory = try TemporaryDirectory()
        let chats = try await StorageDatabase.fresh(in: directory).chats
        var stored = Self.conversation("7f3a9c2e5b1d")
        try await chats.save(stored)
        stored.session.toolCalls = 1
        #expect(try await chats.conversation(id: "7f3a9c2e5b1d") == stored)
    }

    @Test func savingAgainRewritesMessagesAndTimelineAndKeepsTheTitleAndTurns() async throws {
        let directory = try TemporaryDirectory()
        let chats = try await StorageDatabase.fresh(in: directory).chats
        try await chats.save(Self.conversation("abc123"))
        var retried = Self.conversation("abc123", updated: 200, turns: 2)
        retried.session.title = "another title"
        retried.messages.removeLast()
        retried.toolCalls = []
        retried.turns = [
            StoredChatTurn(
                turn: 2, model: "claude-sonnet-4-5", finishReason: "error", modelCalls: 1, toolCalls: 0,
                errorKind: "rate_limited", errorMessage: "retry in 7 s", finishedAt: Date(timeIntervalSince1970: 200))
        ]
        try await chats.save(retried)
        let read = try #require(try await chats.conversation(id: "abc123"))
        #expect(read.session.title == "Why is /var full?")
        #expect(read.session.turns == 2)
        #expect(read.messages.count == 4)
        #expect(read.toolCalls.isEmpty)
        #expect(read.turns.map(\.turn) == [1, 2])
        #expect(read.turns.last?.errorKind == "rate_limited")
    }

    @Test func aUniquePrefixFindsAConversationAndAnAmbiguousOneIsAnError() async throws {
        let directory = try TemporaryDirectory()
        let chats = try await StorageDatabase.fresh(in: directory).chats
        try await chats.save(Self.conversation("aa11"))
        try await chats.save(Self.conversation("aa22"))
        #expect(try await chats.conversation(id: "aa2")?.session.id == "aa22")
        #expect(try await chats.conversation(id: "bb") == nil)
        await #expect(throws: StorageError.self) { try await chats.conversation(id: "aa") }
        do {
            _ = try await chats.conversation(id: "aa")
        } catch {
            #expect(error.code == .ambiguousPrefix)
            #expect(error.message.contains("aa11, aa22"))
        }
    }

    @Test func sessionsAreListedMostRecentFirstWithTheirToolCallCounts() async throws {
        let directory = try TemporaryDirectory()
        let chats = try await StorageDatabase.fresh(in: directory).chats
        try await chats.save(Self.conversation("old", updated: 100))
        try await chats.save(Self.conversation("new", updated: 300))
        var empty = Self.conversation("mid", updated: 200)
        empty.toolCalls = []
        try await chats.save(empty)
        let sessions = try await chats.sessions()
        #expect(sessions.map(\.id) == ["new", "mid", "old"])
        #expect(sessions.map(\.toolCalls) == [1, 0, 1])
        #expect(try await chats.sessions(limit: 1).map(\.id) == ["new"])
    }
}
