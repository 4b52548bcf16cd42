import Chat
import OrderedJSON
import Testing

@Suite("ChatSessionState")
struct ChatSessionStateTests {
    private let tools = TestTools().tools

    private func session(maxIterations: Int = 10, outputCap: Int = 16 * 1024, remote: Bool = false) -> ChatSessionState
    {
        ChatSessionState(
            model: "m1", systemPrompt: "Be brief.", tools: tools, providerRunsTools: remote,
            configuration: .init(maxIterations: maxIterations, maxToolOutputBytes: outputCap))
    }

    private func feed(_ state: inout ChatSessionState, _ events: [ChatEvent]) -> [ChatSessionAction] {
        events.flatMap { state.receive($0) }
    }

    private let diskCall = ToolCall(id: "c1", name: "disk_usage", input: .object(["path": "/var"]))
    private let logCall = ToolCall(
        id: "c2", name: "tail_log", input: .object(["path": "/var/log/syslog", "lines": 20]))

    @Test("A turn without tools asks the model once and ends with its reason")
    func plainTurn() throws {
        var state = session()
        let start = try state.startTurn("hello")
        guard case .callModel(let request) = start.first else {
            Issue.record("expected a model call, got \(start)")
            return
        }
        #expect(request.messages == [.user("hello")])
        #expect(request.systemPrompt == "Be brief.")
        #expect(request.tools.map(\.name) == ["disk_usage", "tail_log"])
        let actions = feed(&state, [.text("Hi "), .text("there"), .usage(ChatUsage(inputTokens: 5, outputTokens: 2))])
        #expect(actions.count == 3)
        let end = state.receive(.done(finishReason: .stop, sessionID: nil))
        #expect(end.first == .emit(.done(finishReason: .stop, sessionID: nil)))
        guard case .finishTurn(let summary) = end.last else {
            Issue.record("expected the turn to finish")
            return
        }
        #expect(summary.modelCalls == 1)
        #expect(summary.usage == ChatUsage(inputTokens: 5, outputTokens: 2))
        #expect(state.messages == [.user("hello"), .assistant(text: "Hi there", toolCalls: [])])
        #expect(state.phase == .idle)
    }

    @Test("Tool calls run after the model's answer, each emitted when it starts, and results go back to the model")
    func toolLoop() throws {
        var state = session()
        _ = try state.startTurn("disk?")
        #expect(feed(&state, [.text("Checking."), .toolCall(diskCall), .toolCall(logCall)]).count == 1)
        #expect(state.timeline.map(\.status) == [.requested, .requested])
        let starts = state.receive(.done(finishReason: .toolCalls, sessionID: nil))
        #expect(
            starts == [
                .startTool(ToolInvocation(call: diskCall, rejection: nil, runsRemotely: false)),
                .startTool(ToolInvocation(call: logCall, rejection: nil, runsRemotely: false)),
            ])
        #expect(state.phase == .runningTools)

        let span = ChatSpanIDs(traceID: String(repeating: "a", count: 32), spanID: String(repeating: "b", count: 16))
        var spanned = diskCall
        spanned.span = span
        #expect(state.toolStarted(id: "c1", span: span) == [.emit(.toolCall(spanned))])
        #expect(state.timeline[0].status == .running)
        let first = state.toolFinished(id: "c1", output: ToolOutput(text: "41G", exitCode: 0), durationMs: 12.5)
        let result = ToolResult(
            id: "c1", name: "disk_usage", isError: false, durationMs: 12.5, exitCode: 0, output: "41G", span: span)
        #expect(first == [.emit(.toolResult(result)), .endTool(spanned, result)])

        _ = state.toolStarted(id: "c2", span: nil)
        let second = state.toolFinished(id: "c2", output: ToolOutput(text: "no space", isError: true), durationMs: 3)
        guard case .callModel(let next) = second.last else {
            Issue.record("expected the results to go back to the model, got \(second)")
            return
        }
        #expect(
            next.messages == [
                .user("disk?"), .assistant(text: "Checking.", toolCalls: [diskCall, logCall]),
                .toolResult(ToolResultMessage(toolCallID: "c1", name: "disk_usage", content: "41G", isError: false)),
                .toolResult(ToolResultMessage(toolCallID: "c2", name: "tail_log", content: "no space", isError: true)),
            ])
        #expect(state.timeline.map(\.status) == [.ok, .error])
        #expect(state.phase == .streaming)
        let end = feed(&state, [.text("Done."), .done(finishReason: .stop, sessionID: nil)])
        guard case .finishTurn(let summary) = end.last else {
            Issue.record("expected the turn to finish")
            return
        }
        #expect(summary.modelCalls == 2)
        #expect(summary.toolCalls == 2)
    }

    @Test("Arguments that fail the schema, unknown tools and non-JSON arguments are refused, never run")
    func rejections() throws {
        var state = session()
        _ = try state.startTurn("x")
        let calls = [
            ToolCall(id: "a", name: "tail_log", input: .object(["path": "/x", "lines": 100_000, "follow": true])),
            ToolCall(id: "b", name: "rm_rf", input: .object([:])),
            ToolCall(id: "c", name: "disk_usage", input: .string("{\"pa")),
            ToolCall(id: "d", name: "disk_usage", input: .object([:])),
        ]
        let actions = feed(&state, calls.map { .toolCall($0) } + [.done(finishReason: .toolCalls, sessionID: nil)])
        let rejections = actions.compactMap { action -> String? in
            if case .startTool(let invocation) = action { invocation.rejection } else { nil }
        }
        #expect(rejections.count == 4)
        #expect(rejections[0].contains("$.lines: 100000 is more than the maximum 1000"))
        #expect(rejections[0].contains("$.follow: unknown property"))
        #expect(rejections[1].contains("no tool named \"rm_rf\""))
        #expect(rejections[2].contains("not valid JSON"))
        #expect(rejections[3].contains("required property \"path\" is missing"))
    }

    @Test("The tool loop stops at the iteration limit with an error and keeps the results")
    func iterationLimit() throws {
        var state = session(maxIterations: 2)
        _ = try state.startTurn("x")
        for round in 1...2 {
            let call = ToolCall(id: "c\(round)", name: "disk_usage", input: .object(["path": "/"]))
            _ = feed(&state, [.toolCall(call), .done(finishReason: .toolCalls, sessionID: nil)])
            _ = state.toolStarted(id: call.id, span: nil)
            let actions = state.toolFinished(id: call.id, output: ToolOutput(text: "1G"), durationMs: 1)
            if round == 2 {
                #expect(
                    actions.contains { if case .emit(.error(let e)) = $0 { e.kind == .toolLoopLimit } else { false } })
                #expect(actions.contains(.emit(.done(finishReason: .maxIterations, sessionID: nil))))
            } else {
                #expect(actions.contains { if case .callModel = $0 { true } else { false } })
            }
        }
        #expect(state.phase == .idle)
        if case .toolResult = state.messages.last {} else { Issue.record("the last result should be kept") }
    }

    @Test("Long tool output is cut at a character boundary with a note, for the model and the timeline")
    func outputCap() throws {
        var state = session(outputCap: 11)
        _ = try state.startTurn("x")
        _ = feed(&state, [.toolCall(diskCall), .done(finishReason: .toolCalls, sessionID: nil)])
        _ = state.toolStarted(id: "c1", span: nil)
        let output = String(repeating: "é", count: 10)
        _ = state.toolFinished(id: "c1", output: ToolOutput(text: output), durationMs: 1)
        #expect(state.timeline[0].output == "ééééé\n[output cut: showing 10 of 20 bytes]")
        #expect(state.timeline[0].wasCut)
        #expect(state.timeline[0].outputBytes == 20)
    }

    @Test("Stopping mid-stream keeps the partial answer and marks requested calls as not run")
    func stopWhileStreaming() throws {
        var state = session()
        _ = try state.startTurn("x")
        _ = feed(&state, [.text("Part"), .toolCall(diskCall)])
        let actions = state.stop()
        #expect(actions.first == .emit(.done(finishReason: .stopped, sessionID: nil)))
        #expect(state.messages.last == .assistant(text: "Part", toolCalls: []))
        #expect(state.timeline.map(\.status) == [.notRun])
        #expect(state.stop().isEmpty)
    }

    @Test("Stopping while tools run answers every call so the conversation stays valid")
    func stopWhileRunningTools() throws {
        var state = session()
        _ = try state.startTurn("x")
        _ = feed(&state, [.toolCall(diskCall), .toolCall(logCall), .done(finishReason: .toolCalls, sessionID: nil)])
        _ = state.toolStarted(id: "c1", span: nil)
        let actions = state.stop()
        #expect(
            actions.contains { if case .emit(.toolResult(let r)) = $0 { r.id == "c1" && r.isError } else { false } })
        #expect(state.timeline.map(\.status) == [.error, .notRun])
        let answered = state.messages.compactMap { if case .toolResult(let r) = $0 { r.toolCallID } else { nil } }
        #expect(answered == ["c1", "c2"])
    }

    @Test("Retry drops the last answer and asks again; a busy session refuses to start or retry")
    func retry() throws {
        var state = session()
        _ = try state.startTurn("first")
        #expect(throws: ChatError.self) { try state.startTurn("second") }
        _ = feed(
            &state,
            [
                .text("partial"), .error(ChatError(kind: .truncated, message: "cut")),
                .done(finishReason: .error, sessionID: nil),
            ])
        #expect(state.messages.count == 2)
        let actions = try state.retryLastTurn()
        guard case .callModel(let request) = actions.first else {
            Issue.record("expected a model call")
            return
        }
        #expect(request.messages == [.user("first")])
    }

    @Test("A model switch and a new system prompt apply to the next call")
    func switchModelAndSystem() throws {
        var state = session()
        state.switchModel("m2")
        state.setSystemPrompt("Answer in French.")
        let actions = try state.startTurn("x")
        guard case .callModel(let request) = actions.first else {
            Issue.record("expected a model call")
            return
        }
        #expect(request.model == "m2")
        #expect(request.systemPrompt == "Answer in French.")
    }

    @Test("With a provider that runs tools, calls are tracked and results passed on, never run locally")
    func remoteTools() throws {
        var state = session(remote: true)
        let start = try state.startTurn("x")
        if case .callModel(let request) = start.first {
            #expect(request.tools.isEmpty)
        }
        let call = ToolCall(id: "tu_1", name: "grep.search", input: .object(["pattern": "x"]))
        #expect(
            state.receive(.toolCall(call)) == [
                .startTool(ToolInvocation(call: call, rejection: nil, runsRemotely: true))
            ])
        let span = ChatSpanIDs(traceID: String(repeating: "1", count: 32), spanID: String(repeating: "2", count: 16))
        _ = state.toolStarted(id: "tu_1", span: span)
        let result = ToolResult(
            id: "tu_1", name: "grep.search", isError: false, durationMs: 212, exitCode: 0, output: "hit")
        let actions = state.receive(.toolResult(result))
        var stamped = result
        stamped.span = span
        #expect(actions.first == .emit(.toolResult(stamped)))
        let end = state.receive(.done(finishReason: .stop, sessionID: "sess_9"))
        #expect(end.first == .emit(.done(finishReason: .stop, sessionID: "sess_9")))
        #expect(state.sessionID == "sess_9")
        if case .callModel(let next) = try state.startTurn("y").first {
            #expect(next.sessionID == "sess_9")
        }
    }

    @Test("A restored transcript continues: its messages go out, turn numbers go on, unfinished calls are closed")
    func restore() throws {
        var first = ChatSessionState(model: "m")
        _ = try first.startTurn("one")
        _ = first.receive(.text("answer"))
        _ = first.receive(.usage(ChatUsage(inputTokens: 10, outputTokens: 2, costUSD: 0.5)))
        _ = first.receive(.done(finishReason: .stop, sessionID: nil))
        var transcript = first.transcript
        transcript.timeline = [
            ToolCallRecord(
                call: ToolCall(id: "c1", name: "t", input: .object([:])), status: .running, turn: 1, runsRemotely: false
            )
        ]
        var second = ChatSessionState(model: "m")
        try second.restore(transcript)
        #expect(second.timeline.map(\.status) == [.error])
        #expect(second.totalUsage == ChatUsage(inputTokens: 10, outputTokens: 2, costUSD: 0.5))
        let actions = try second.startTurn("two")
        #expect(second.turnCount == 2)
        guard case .callModel(let request) = actions.first else {
            Issue.record("no model call: \(actions)")
            return
        }
        #expect(request.messages == [.user("one"), .assistant(text: "answer", toolCalls: []), .user("two")])
        #expect(throws: ChatError.self) { try second.restore(transcript) }
    }
}
