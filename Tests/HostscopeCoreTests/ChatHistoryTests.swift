import Chat
import Foundation
import HostscopeCore
import OrderedJSON
import Storage
import Testing

@Suite struct ChatHistoryTests {
    static let span = ChatSpanIDs(traceID: "4bf92f3577b34da6a3ce929d0e0e4736", spanID: "00f067aa0ba902b7")

    static var transcript: ChatTranscript {
        let call = ToolCall(id: "call_1", name: "read_file", input: .object(["path": "notes.txt"]), span: span)
        var record = ToolCallRecord(call: call, status: .ok, turn: 1, runsRemotely: false)
        record.durationMs = 12.5
        record.output = "The disk filled at 19:20."
        record.outputBytes = 25
        var remote = ToolCallRecord(
            call: ToolCall(id: "tu_1", name: "grep.search", input: .object(["pattern": "x"])), status: .error, turn: 2,
            runsRemotely: true)
        remote.exitCode = 1
        return ChatTranscript(
            messages: [
                .user("What happened?"),
                .assistant(
                    text: "Reading.",
                    toolCalls: [ToolCall(id: "call_1", name: "read_file", input: .object(["path": "notes.txt"]))]),
                .toolResult(
                    ToolResultMessage(
                        toolCallID: "call_1", name: "read_file", content: "The disk filled at 19:20.", isError: false)),
                .assistant(text: "It filled at **19:20**.", toolCalls: []),
            ],
            timeline: [record, remote], totalUsage: ChatUsage(inputTokens: 500, outputTokens: 40, costUSD: 0.002),
            turnCount: 2, sessionID: "sess_0001")
    }

    static let header = ChatHeader(
        id: "7f3a9c2e5b1d", host: "web1", provider: .gateway, baseURL: "http://127.0.0.1:9/gateway", root: "/srv",
        createdAt: Date(timeIntervalSince1970: 1_000))

    @Test func aTranscriptSurvivesItsStoredForm() {
        let stored = ChatHistory.stored(
            Self.header, model: "m", systemPrompt: "Be brief.", transcript: Self.transcript, turns: [],
            updatedAt: Date(timeIntervalSince1970: 2_000))
        #expect(stored.session.title == "What happened?")
        #expect(stored.session.gatewaySessionID == "sess_0001")
        #expect(stored.toolCalls.first?.spanID == Self.span.spanID)
        #expect(ChatHistory.transcript(stored) == Self.transcript)
    }

    @Test func exportsCarrySpanIdsAndNothingElseOfTheProcess() throws {
        let turn = ChatHistory.turn(
            TurnSummary(
                turn: 1, finishReason: .stop, modelCalls: 2, usage: ChatUsage(inputTokens: 500, outputTokens: 40),
                toolCalls: 1, malformedFrames: 0, error: nil, sessionID: nil),
            model: "m", span: Self.span, finishedAt: Date(timeIntervalSince1970: 2_000))
        let stored = ChatHistory.stored(
            Self.header, model: "m", systemPrompt: nil, transcript: Self.transcript, turns: [turn],
            updatedAt: Date(timeIntervalSince1970: 2_000))
        let json = ChatExport.json(stored)
        #expect(json["schema"] == "hostscope.chat/1")
        #expect(json["tool_calls"]?[0]?["span_id"]?.stringValue == Self.span.spanID)
        #expect(json["tool_calls"]?[0]?["input"]?["path"] == "notes.txt")
        #expect(json["turns"]?[0]?["trace_id"]?.stringValue == Self.span.traceID)
        #expect(json["messages"]?.arrayValue?.count == 4)
        let markdown = ChatExport.markdown(stored)
        #expect(markdown.contains("## You\n\nWhat happened?"))
        #expect(
            markdown.contains("- tool 1: `read_file` `{\"path\":\"notes.txt\"}` → ok, 13 ms, span `00f067aa0ba902b7`"))
        #expect(markdown.contains("## Tools run by the gateway"))
        #expect(markdown.contains("- tool 2: `grep.search`"))
    }
}
