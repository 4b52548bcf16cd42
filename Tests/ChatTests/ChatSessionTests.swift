import Chat
import CurlHTTP
import Foundation
import OrderedJSON
import Synchronization
import TestSupport
import Testing
import ValueFormats

@Suite("ChatSession against the mock LLM server", .timeLimit(.minutes(2)))
struct ChatSessionTests {
    private func session(
        _ mock: MockLLM, _ kind: ProviderKind, model: String, tools: TestTools? = TestTools(),
        observer: (any ChatObserver)? = nil, headers: HTTPHeaders = [:],
        configuration: ChatSession.Configuration = ChatSession.Configuration()
    ) -> ChatSession {
        ChatSession(
            provider: mock.provider(kind, key: kind == .gateway ? nil : MockLLM.apiKey, headers: headers),
            client: mock.client, model: model, systemPrompt: "You look after Linux hosts.", tools: tools,
            observer: observer, configuration: configuration)
    }

    @Test("A multi-turn tool loop runs each tool once and sends its result back, for OpenAI and Anthropic")
    func toolLoop() async throws {
        for kind in [ProviderKind.openAI, .anthropic] {
            try await MockLLM.run { mock in
                let tools = TestTools()
                let observer = RecordingObserver()
                let chat = session(mock, kind, model: "mock-tool-loop", tools: tools, observer: observer)
                let events = await collect(await chat.send("Why is the disk filling up?"))

                #expect(events.text.hasSuffix("The disk fills with rotated syslog files; compress or remove them."))
                #expect(tools.recorded.map(\.name) == ["disk_usage", "tail_log"])
                #expect(
                    tools.recorded.map(\.input) == [
                        .object(["path": "/var"]), .object(["path": "/var/log/syslog", "lines": 50]),
                    ])
                #expect(events.toolCalls.map(\.name) == ["disk_usage", "tail_log"])
                #expect(
                    events.toolResults.map(\.output) == [
                        "41G\t/var\n38G\t/var/log", "kernel: No space left on device (/var/log/syslog)",
                    ])
                #expect(events.toolResults.allSatisfy { $0.exitCode == 0 && !$0.isError && $0.durationMs != nil })
                #expect(events.doneCount == 1)
                #expect(events.last == .done(finishReason: .stop, sessionID: nil))
                #expect(events.usages.count == 3)

                // Each tool event carries the span its observer opened, and the tool saw the same ids.
                let calls = events.toolCalls
                let results = events.toolResults
                #expect(calls.map(\.span) == results.map(\.span))
                #expect(calls.allSatisfy { $0.span?.traceID == observer.traceID })
                #expect(tools.recorded.map(\.span) == calls.map(\.span))

                let requests = try await mock.requests()
                #expect(requests.count == 3)
                #expect(requests.map { $0["stage"]?.intValue } == [0, 1, 2])
                #expect(requests.allSatisfy { $0["status"] == 200 })
                // Each model call carried a traceparent naming its own span.
                let traceparents = requests.compactMap { $0["traceparent"]?.stringValue }
                #expect(traceparents.count == 3)
                #expect(traceparents.allSatisfy { $0.hasPrefix("00-\(observer.traceID)-") && $0.hasSuffix("-01") })
                #expect(Set(traceparents).count == 3)

                let last = try #require(requests.last?["body"])
                let text = last.jsonString
                #expect(text.contains("41G\\t/var\\n38G\\t/var/log"))
                #expect(text.contains("kernel: No space left on device"))
                let timeline = await chat.timeline
                #expect(timeline.map(\.status) == [.ok, .ok])
                let log = observer.log.withLock { $0 }
                #expect(log.first?.hasPrefix("turn 1 mock-tool-loop") == true)
                #expect(log.last?.hasPrefix("turn-end 1 stop") == true)
                #expect(log.filter { $0.hasPrefix("model ") }.count == 3)
            }
        }
    }

    @Test("Parallel tool calls both run before the model is asked again")
    func parallelTools() async throws {
        try await MockLLM.run { mock in
            let tools = TestTools()
            let chat = session(mock, .anthropic, model: "mock-parallel-tools", tools: tools)
            let events = await collect(await chat.send("Check disk and logs"))
            #expect(tools.recorded.map(\.name) == ["disk_usage", "tail_log"])
            #expect(events.toolResults.map(\.id) == ["toolu_par_aaa", "toolu_par_bbb"])
            #expect(events.text.hasSuffix("syslog repeats a disk error."))
            let second = try #require(try await mock.requests().last?["body"]?["messages"]?.arrayValue)
            let results = second.last?["content"]?.arrayValue?.compactMap { $0["tool_use_id"]?.stringValue }
            #expect(results == ["toolu_par_aaa", "toolu_par_bbb"])
        }
    }

    @Test("Arguments that fail the schema are never run; the model gets an error result and carries on")
    func invalidArguments() async throws {
        try await MockLLM.run { mock in
            let tools = TestTools()
            let chat = session(mock, .openAI, model: "mock-invalid-args", tools: tools)
            let events = await collect(await chat.send("tail the syslog"))
            #expect(tools.recorded.isEmpty)
            let result = try #require(events.toolResults.first)
            #expect(result.isError)
            #expect(result.output.contains("$.lines: 100000 is more than the maximum 1000"))
            #expect(events.text == "I asked for too many lines; the tool said so.")
            let messages = try #require(try await mock.requests().last?["body"]?["messages"]?.arrayValue)
            let toolMessage = try #require(messages.last)
            #expect(toolMessage["role"] == "tool")
            #expect(toolMessage["tool_call_id"] == "call_bad_1")
            #expect(toolMessage["content"]?.stringValue?.contains("nothing was run") == true)
        }
    }

    @Test("A model that keeps asking for tools is stopped at the iteration limit")
    func iterationLimit() async throws {
        try await MockLLM.run { mock in
            let tools = TestTools()
            let chat = session(
                mock, .openAI, model: "mock-forever", tools: tools,
                configuration: ChatSession.Configuration(maxIterations: 3))
            let events = await collect(await chat.send("loop"))
            #expect(tools.recorded.count == 3)
            #expect(events.errors.map(\.kind) == [.toolLoopLimit])
            #expect(events.last == .done(finishReason: .maxIterations, sessionID: nil))
            let requests = try await mock.requests()
            #expect(requests.count == 3)
            let summary = await chat.lastTurn
            #expect(summary?.modelCalls == 3)
        }
    }

    @Test("Stop mid-stream keeps the partial answer, closes the stream, and the server sees the client leave")
    func stopMidStream() async throws {
        try await MockLLM.run { mock in
            let chat = session(mock, .openAI, model: "mock-slow")
            let stream = await chat.send("count")
            var events: [ChatEvent] = []
            for await event in stream {
                events.append(event)
                if events.count == 3 {
                    await chat.stop()
                }
            }
            #expect(events.last == .done(finishReason: .stopped, sessionID: nil))
            #expect(events.doneCount == 1)
            let messages = await chat.messages
            #expect(messages.last == .assistant(text: events.text, toolCalls: []))
            #expect(await chat.phase == .idle)
            var disconnected = false
            for _ in 0..<50 where !disconnected {
                disconnected = try await mock.requests().first?["stream"]?["disconnected"] == true
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(disconnected)
        }
    }

    @Test("Stop while a tool runs cancels it and answers the call, and the next turn is accepted by the server")
    func stopDuringTool() async throws {
        try await MockLLM.run { mock in
            let tools = TestTools(delay: .seconds(30))
            let chat = session(mock, .openAI, model: "mock-tool-call", tools: tools)
            let stream = await chat.send("disk?")
            var events: [ChatEvent] = []
            for await event in stream {
                events.append(event)
                if case .toolCall = event {
                    await chat.stop()
                }
            }
            #expect(events.toolResults.first?.output == "stopped by the user")
            #expect(events.last == .done(finishReason: .stopped, sessionID: nil))
            #expect(await chat.timeline.map(\.status) == [.error])
            // The conversation still answers every tool call, so the provider accepts the next turn.
            await chat.switchModel("mock-text")
            let next = await collect(await chat.send("and now?"))
            #expect(next.errors.isEmpty)
            let requests = try await mock.requests()
            #expect(requests.last?["status"] == 200)
        }
    }

    @Test("Retry resends the last turn after a failure; model switch and system prompt reach the request")
    func retryAndSwitch() async throws {
        try await MockLLM.run { mock in
            let chat = session(mock, .anthropic, model: "mock-error-500")
            let failed = await collect(await chat.send("status?"))
            #expect(failed.errors.first?.kind == .server)
            await chat.switchModel("mock-text")
            await chat.setSystemPrompt("Answer in one line.")
            let retried = await collect(await chat.retry())
            #expect(retried.text.hasPrefix("The disk"))
            let requests = try await mock.requests()
            #expect(requests.count == 2)
            #expect(requests[1]["body"]?["model"] == "mock-text")
            #expect(requests[1]["body"]?["system"] == "Answer in one line.")
            #expect(requests[1]["body"]?["messages"]?.arrayValue?.count == 1)
        }
    }

    @Test("A second send while a turn runs is refused with an error event, not run")
    func busy() async throws {
        try await MockLLM.run { mock in
            let chat = session(mock, .openAI, model: "mock-slow")
            var first = await chat.send("count").makeAsyncIterator()
            let opening = await first.next()
            #expect(opening == .text("word0 "))
            let second = await collect(await chat.send("again"))
            #expect(second.errors.first?.kind == .invalidState)
            #expect(second.finishReason == .error)
            await chat.stop()
            var last: ChatEvent?
            while let event = await first.next() {
                last = event
            }
            #expect(last == .done(finishReason: .stopped, sessionID: nil))
            let requests = try await mock.requests()
            #expect(requests.count == 1)
        }
    }

    @Test("Gateway tools run server-side get spans from the frames and are never run locally")
    func gatewayTools() async throws {
        try await MockLLM.run { mock in
            let tools = TestTools()
            let observer = RecordingObserver()
            let chat = session(mock, .gateway, model: "mock-tools", tools: tools, observer: observer)
            let events = await collect(await chat.send("disk?"))
            #expect(tools.recorded.isEmpty)
            #expect(events.toolCalls.map(\.id) == ["tu_01HZX4", "tu_01HZX5"])
            #expect(events.toolCalls.allSatisfy { $0.span != nil })
            #expect(events.toolCalls.map(\.span) == events.toolResults.map(\.span))
            #expect(events.toolResults.map(\.durationMs) == [212, 3])
            let session = try #require(events.sessionID)
            let ends = observer.log.withLock { $0.filter { $0.hasPrefix("tool-end") } }
            #expect(
                ends == [
                    "tool-end tu_01HZX4 ok \(events.toolResults[0].span!.spanID)",
                    "tool-end tu_01HZX5 error \(events.toolResults[1].span!.spanID)",
                ])
            let status = try await chat.gatewayStatus()
            #expect(status.sessionID == session)
            #expect(status.outputTokens == 61)
            let request = try #require(try await mock.requests().first)
            #expect(request["traceparent"]?.stringValue?.contains(observer.traceID) == true)

            // The next turn continues the gateway's session.
            await chat.switchModel("mock-text")
            _ = await collect(await chat.send("more"))
            let continued = try await mock.requests().last
            #expect(continued?["body"]?["session_id"]?.stringValue == session)
        }
    }

    @Test("Stopping a gateway run cancels the stream and sends DELETE for its session")
    func gatewayStop() async throws {
        try await MockLLM.run { mock in
            let chat = session(mock, .gateway, model: "mock-slow", tools: nil)
            var events: [ChatEvent] = []
            for await event in await chat.send("count") {
                events.append(event)
                if events.count == 3 {
                    await chat.stop()
                }
            }
            #expect(events.last?.jsonLine.contains("\"finish_reason\":\"stopped\"") == true)
            let requests = try await mock.requests()
            let delete = try #require(requests.first { $0["method"] == "DELETE" })
            let session = try #require(await chat.sessionID)
            #expect(delete["path"]?.stringValue == "/gateway/v1/chat/completions/\(session)")
            #expect(delete["status"] == 200)
        }
    }

    @Test("Stops under CPU load end the events with done(stopped), nothing after it; the kept answer is what was shown")
    func stopsUnderLoad() async throws {
        // The race this guards against: a chunk is handed to the turn's task just before `stop()` cancels it,
        // and the task, seeing itself cancelled, ended the turn and then still emitted that chunk's text after
        // `done`. Only a busy machine widens that window enough to hit it, so the test makes the load itself;
        // the frames come 1 ms apart so that a chunk is nearly always on its way when the stop lands.
        let load = CPULoad(threads: 3)
        defer { load.stop() }
        try await MockLLM.run { mock in
            for round in 0..<100 {
                let kind: ProviderKind = round.isMultiple(of: 2) ? .openAI : .anthropic
                let chat = session(mock, kind, model: "mock-slow", headers: ["X-Mock-Interval-Ms": "1"])
                var events: [ChatEvent] = []
                var stopped = false
                for await event in await chat.send("count") {
                    events.append(event)
                    if events.count == 1 + round % 4 {
                        stopped = await chat.stop()
                    }
                }
                // A loaded machine may let the whole answer arrive before the stop is read; then it ends as
                // usual. A stop that found the turn running always ends it as stopped.
                let expected: FinishReason = stopped ? .stopped : .stop
                #expect(events.last == .done(finishReason: expected, sessionID: nil), "round \(round): \(events)")
                #expect(events.doneCount == 1, "round \(round)")
                #expect(await chat.messages.last == .assistant(text: events.text, toolCalls: []), "round \(round)")
                #expect(await chat.phase == .idle)
            }
        }
    }

    @Test("No secret reaches events, errors, the timeline or the server's log in a whole session")
    func secretsStayOut() async throws {
        try await MockLLM.run { mock in
            let chat = session(mock, .openAI, model: "mock-tool-loop")
            var lines = await collect(await chat.send("x")).map(\.jsonLine)
            await chat.switchModel("mock-error-401")
            lines += await collect(await chat.send("y")).map(\.jsonLine)
            var dumped = ""
            dump(await chat.timeline, to: &dumped)
            dump(await chat.messages, to: &dumped)
            let everything = lines.joined() + dumped + (try await mock.requestLogText())
            #expect(!everything.contains(MockLLM.apiKey))
            #expect(lines.contains { $0.contains("\"kind\":\"auth\"") })
        }
    }
}

/// Threads that keep every core busy until stopped, to give a test the scheduling of a loaded machine.
final class CPULoad: Sendable {
    private let running = Atomic<Bool>(true)

    init(threads: Int) {
        for _ in 0..<threads {
            let thread = Thread { [self] in
                var spin: UInt64 = 0
                while running.load(ordering: .relaxed) {
                    spin &+= 1
                }
            }
            thread.start()
        }
    }

    func stop() {
        running.store(false, ordering: .relaxed)
    }
}
