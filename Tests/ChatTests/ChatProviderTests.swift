import Chat
import CurlHTTP
import Foundation
import OrderedJSON
import TestSupport
import Testing

@Suite("ChatProvider against the mock LLM server", .timeLimit(.minutes(2)))
struct ChatProviderTests {
    private let diskTool = TestTools().tools[0]

    // MARK: Text, tools and usage per provider

    @Test("OpenAI: text deltas, usage and the request's headers and body")
    func openAIText() async throws {
        try await MockLLM.run { mock in
            let events = await mock.events(.openAI, model: "mock-text", tools: [diskTool])
            #expect(events.text == "The disk on web1 is 93 % full — mostly /var/log (café-logs 🚀).")
            #expect(events.usages == [ChatUsage(inputTokens: 31, outputTokens: 19)])
            #expect(events.last == .done(finishReason: .stop, sessionID: nil))

            let request = try #require(try await mock.requests().first)
            #expect(request["path"] == "/v1/chat/completions")
            #expect(request["auth"]?["authorization"] == "Bearer")
            #expect(header(request, "Authorization") == "REDACTED")
            #expect(header(request, "Accept") == "text/event-stream")
            #expect(header(request, "Content-Type") == "application/json")
            let body = try #require(request["body"])
            #expect(body["model"] == "mock-text")
            #expect(body["stream"] == true)
            #expect(body["stream_options"]?["include_usage"] == true)
            #expect(body["messages"] == [.object(["role": "user", "content": "Why is the disk filling up?"])])
            #expect(body["tools"]?[0]?["type"] == "function")
            #expect(body["tools"]?[0]?["function"]?["name"] == "disk_usage")
            #expect(body["tools"]?[0]?["function"]?["parameters"] == diskTool.inputSchema)
        }
    }

    @Test("Anthropic: text, ping, usage, and the x-api-key, anthropic-version and max_tokens it requires")
    func anthropicText() async throws {
        try await MockLLM.run { mock in
            let events = await mock.events(
                .anthropic, model: "mock-text",
                messages: [.system("Be brief."), .user("Why is the disk filling up?")], tools: [diskTool])
            #expect(events.text == "The disk on web1 is 93 % full — mostly /var/log (café-logs 🚀).")
            #expect(events.usages == [ChatUsage(inputTokens: 25, outputTokens: 19)])
            #expect(events.finishReason == .stop)

            let request = try #require(try await mock.requests().first)
            #expect(request["path"] == "/v1/messages")
            #expect(request["auth"]?["x-api-key"] == "present")
            #expect(request["auth"]?["authorization"] == nil)
            #expect(header(request, "anthropic-version") == "2023-06-01")
            let body = try #require(request["body"])
            #expect(body["max_tokens"] == 4096)
            #expect(body["system"] == "Be brief.")
            #expect(body["messages"]?[0]?["content"]?[0]?["text"] == "Why is the disk filling up?")
            #expect(body["tools"]?[0]?["input_schema"] == diskTool.inputSchema)
        }
    }

    @Test("OpenRouter: its base URL, attribution headers, CRLF stream with comments, and reported cost")
    func openRouter() async throws {
        try await MockLLM.run { mock in
            let events = await mock.events(
                .openRouter, model: "mock-text", headers: ["HTTP-Referer": "https://hostscope.example"])
            #expect(events.text == "Memory is fine: 3.1 GiB of 8 GiB used.")
            #expect(events.usages.first?.costUSD == 0.0000651)
            let request = try #require(try await mock.requests().first)
            #expect(request["path"] == "/api/v1/chat/completions")
            #expect(header(request, "HTTP-Referer") == "https://hostscope.example")
            #expect(header(request, "X-Title") == "hostscope")
            #expect(request["body"]?["usage"]?["include"] == true)
        }
    }

    @Test("OpenAI tool calls split across chunks and parallel calls arrive whole, over HTTP")
    func openAIToolCalls() async throws {
        try await MockLLM.run { mock in
            let single = await mock.events(.openAI, model: "mock-tool-call")
            #expect(single.toolCalls.map(\.input) == [.object(["path": "/var"])])
            #expect(single.finishReason == .toolCalls)
            let parallel = await mock.events(.openAI, model: "mock-parallel-tools")
            #expect(parallel.toolCalls.map(\.name) == ["disk_usage", "tail_log"])
            #expect(parallel.toolCalls.map(\.id) == ["call_aaa111", "call_bbb222"])
            #expect(parallel.usages == [ChatUsage(inputTokens: 150, outputTokens: 48)])
        }
    }

    @Test("Anthropic tool_use blocks, single and parallel, over HTTP")
    func anthropicToolCalls() async throws {
        try await MockLLM.run { mock in
            let single = await mock.events(.anthropic, model: "mock-tool-call")
            #expect(single.text == "Let me check the disk usage.")
            #expect(
                single.toolCalls == [
                    ToolCall(id: "toolu_01A09q90qw90lq917835lq9", name: "disk_usage", input: .object(["path": "/var"]))
                ])
            let parallel = await mock.events(.anthropic, model: "mock-parallel-tools")
            #expect(parallel.toolCalls.map(\.id) == ["toolu_par_aaa", "toolu_par_bbb"])
        }
    }

    @Test("Streams cut into chunks of every size from 1 to 9 bytes decode the same over HTTP")
    func tinyChunks() async throws {
        try await MockLLM.run { mock in
            for kind in [ProviderKind.openAI, .anthropic, .openRouter] {
                let reference = await mock.events(kind, model: "mock-text")
                for size in 1...9 {
                    let events = await mock.events(kind, model: "mock-text", headers: ["X-Mock-Chunk-Bytes": "\(size)"])
                    #expect(events == reference, "\(kind) in \(size)-byte chunks")
                }
            }
        }
    }

    @Test("The gateway: server-side tool frames, usage with cost, the session id, and its status endpoint")
    func gateway() async throws {
        try await MockLLM.run { mock in
            let provider = mock.provider(.gateway, key: nil)
            var events: [ChatEvent] = []
            for await event in provider.stream(
                ChatRequest(model: "mock-tools", messages: [.user("disk?")]), using: mock.client)
            {
                events.append(event)
            }
            #expect(events.toolCalls.map(\.id) == ["tu_01HZX4", "tu_01HZX5"])
            #expect(events.toolResults.map(\.isError) == [false, true])
            #expect(events.toolResults.map(\.exitCode) == [0, 1])
            #expect(events.toolResults.map(\.durationMs) == [212, 3])
            #expect(events.usages == [ChatUsage(inputTokens: 830, outputTokens: 61, costUSD: 0.00412)])
            let session = try #require(events.sessionID)
            #expect(session.hasPrefix("sess_"))

            let status = try await provider.gatewayStatus(sessionID: session, using: mock.client)
            #expect(status.state == "completed")
            #expect(status.inputTokens == 830)
            #expect(status.totalCost == 0.00412)

            await #expect(throws: ChatError.self) {
                try await provider.gatewayStatus(sessionID: "sess_none", using: mock.client)
            }
            let requests = try await mock.requests()
            #expect(requests.first?["path"] == "/gateway/v1/chat/completions")
            #expect(requests.first?["body"]?["tools"] == nil)
            #expect(requests[1]["method"] == "GET")
            #expect(requests[1]["path"]?.stringValue == "/gateway/v1/chat/completions/\(session)/status")
        }
    }

    // MARK: Errors

    @Test("401 and 403 say to check the key's source and never show the key, even when the server echoes it")
    func authErrors() async throws {
        try await MockLLM.run { mock in
            for kind in [ProviderKind.openAI, .anthropic] {
                let events = await mock.events(kind, model: "mock-error-401")
                let error = try #require(events.errors.first)
                #expect(error.kind == .auth)
                #expect(error.httpStatus == 401)
                #expect(error.message.contains("check \(kind.apiKeyVariable!)"))
                #expect(error.message.contains("Incorrect API key provided: REDACTED"))
                #expect(events.finishReason == .error)
                for event in events {
                    #expect(!event.jsonLine.contains(MockLLM.apiKey))
                    #expect(!"\(event)".contains(MockLLM.apiKey))
                }
            }
            let forbidden = await mock.events(.openAI, model: "mock-error-403")
            #expect(forbidden.errors.first?.kind == .auth)
            #expect(forbidden.errors.first?.message.contains("denied access") == true)

            let anonymous = await mock.events(.openAI, model: "mock-text", key: nil)
            #expect(anonymous.errors.first?.kind == .auth)
            #expect(anonymous.errors.first?.message.contains("no API key was sent: set OPENAI_API_KEY") == true)
            let log = try await mock.requestLogText()
            #expect(!log.contains(MockLLM.apiKey))
        }
    }

    @Test("A header the user passed is scrubbed from the error of a server that echoes it, whatever its name")
    func echoedCustomHeader() async throws {
        try await MockLLM.run { mock in
            var headers = HTTPHeaders()
            headers.add(name: "X-Custom-Team", value: "Bearer team-s3cret-42", secret: true)
            headers.add(name: "X-Custom-Plain", value: "not-a-secret")
            let events = await mock.events(.openAI, model: "mock-error-401", headers: headers)
            let error = try #require(events.errors.first)
            #expect(error.message.contains("(X-Custom-Team: REDACTED)"), "\(error.message)")
            #expect(error.message.contains("(X-Custom-Plain: not-a-secret)"), "\(error.message)")
            for event in events {
                #expect(!event.jsonLine.contains("team-s3cret-42"))
            }
            // The header itself went to the server: the value was there to be echoed.
            let sent = try await mock.requests().first?["headers"]?.arrayValue ?? []
            #expect(sent.contains { $0 == ["X-Custom-Team", "Bearer team-s3cret-42"] })
        }
    }

    @Test("404 names the model and the base URL convention")
    func modelNotFound() async throws {
        try await MockLLM.run { mock in
            let events = await mock.events(.openAI, model: "gpt-nonexistent")
            let error = try #require(events.errors.first)
            #expect(error.kind == .modelNotFound)
            #expect(error.message.contains("\"gpt-nonexistent\""))
            #expect(error.message.contains("/v1"))
            #expect(events.doneCount == 1)
        }
    }

    @Test("429 exposes Retry-After in seconds; 5xx says the provider failed")
    func rateLimitAndServerErrors() async throws {
        try await MockLLM.run { mock in
            for kind in [ProviderKind.openAI, .anthropic, .gateway] {
                let limited = await mock.events(kind, model: "mock-error-429")
                let error = try #require(limited.errors.first)
                #expect(error.kind == .rateLimited)
                #expect(error.retryAfterSeconds == 7)
                #expect(error.message.contains("retry in 7 s"))
                #expect(ChatEvent.error(error).json["retry_after_s"] == 7)
            }
            let failed = await mock.events(.openAI, model: "mock-error-500")
            #expect(failed.errors.first?.kind == .server)
            #expect(failed.errors.first?.httpStatus == 500)
            let overloaded = await mock.events(.anthropic, model: "mock-error-503")
            #expect(overloaded.errors.first?.kind == .server)
            #expect(overloaded.errors.first?.retryAfterSeconds == 7)
        }
    }

    @Test("A mid-stream disconnect and a stream without [DONE] are truncated with the text kept")
    func truncation() async throws {
        try await MockLLM.run { mock in
            let dropped = await mock.events(.openAI, model: "mock-disconnect")
            #expect(dropped.text == "The disk on web1 is 93 % full — ")
            #expect(dropped.errors.map(\.kind) == [.truncated])
            #expect(dropped.finishReason == .error)
            let noDone = await mock.events(.openAI, model: "mock-no-done")
            #expect(noDone.text.hasSuffix("(café-logs 🚀)."))
            #expect(noDone.errors.map(\.kind) == [.truncated])
            let anthropic = await mock.events(.anthropic, model: "mock-disconnect")
            #expect(anthropic.text == "The disk on web1 is 93 % full — ")
            #expect(anthropic.errors.map(\.kind) == [.truncated])
        }
    }

    @Test("Malformed frames are skipped and counted over HTTP; in-stream error frames end the stream")
    func malformedAndErrorFrames() async throws {
        try await MockLLM.run { mock in
            let malformed = await mock.events(.openAI, model: "mock-malformed")
            #expect(malformed.text == "Load low: 0.12.")
            #expect(malformed.errors.map(\.kind) == [.malformedFrame, .malformedFrame])
            #expect(malformed.errors.last?.message.contains("#2") == true)
            #expect(malformed.finishReason == .stop)

            let openRouterError = await mock.events(.openRouter, model: "mock-midstream-error")
            #expect(openRouterError.text == "Checking ")
            #expect(openRouterError.errors.map(\.kind) == [.server])
            let gatewayError = await mock.events(.gateway, model: "mock-midstream-error")
            #expect(gatewayError.errors.first?.message.contains("the tool runner is unavailable") == true)
            #expect(gatewayError.finishReason == .error)
        }
    }

    @Test("Connect failures, connect timeouts and read timeouts are told apart, the partial text kept")
    func timeouts() async throws {
        try await MockLLM.run { mock in
            let blackhole = try #require(mock.server.announcement["blackhole_port"])
            let unreachable = ChatProvider(
                ProviderConfiguration(
                    kind: .openAI, baseURL: "http://127.0.0.1:\(blackhole)/v1", apiKey: APIKey("k", origin: "K"),
                    timeouts: HTTPTimeouts(connect: .milliseconds(300), idle: .seconds(5))))
            var events: [ChatEvent] = []
            for await event in unreachable.stream(ChatRequest(model: "m", messages: [.user("x")]), using: mock.client) {
                events.append(event)
            }
            #expect(events.errors.map(\.kind) == [.timeout])

            let refused = ChatProvider(ProviderConfiguration(kind: .openAI, baseURL: "http://127.0.0.1:9/v1"))
            events = []
            for await event in refused.stream(ChatRequest(model: "m", messages: [.user("x")]), using: mock.client) {
                events.append(event)
            }
            #expect(events.errors.map(\.kind) == [.connect])
            #expect(events.errors.first?.message.contains("--base-url") == true)

            let short = HTTPTimeouts(connect: .seconds(5), idle: .milliseconds(500))
            let silentHead = await mock.events(.openAI, model: "mock-stall-head", timeouts: short)
            #expect(silentHead.errors.map(\.kind) == [.timeout])
            let silentBody = await mock.events(.openAI, model: "mock-stall-body", timeouts: short)
            #expect(silentBody.text == "The disk on web1 is 93 % full — ")
            #expect(silentBody.errors.map(\.kind) == [.timeout])
            #expect(silentBody.errors.first?.message.contains("the text so far is kept") == true)
        }
    }

    @Test("Cancelling the reading task aborts the stream mid-way, and the server sees the client leave")
    func cancellation() async throws {
        try await MockLLM.run { mock in
            let provider = mock.provider(.openAI)
            // Cancelled once text has arrived, however long the server took to send it.
            let (textArrived, textSignal) = AsyncStream<Void>.makeStream()
            let task = Task {
                var events: [ChatEvent] = []
                for await event in provider.stream(
                    ChatRequest(model: "mock-slow", messages: [.user("x")]), using: mock.client)
                {
                    events.append(event)
                    if case .text = event { textSignal.yield() }
                }
                textSignal.finish()
                return events
            }
            for await _ in textArrived { break }
            task.cancel()
            let events = await task.value
            #expect(!events.text.isEmpty)
            #expect(events.last == .done(finishReason: .stopped, sessionID: nil))
            #expect(events.errors.isEmpty)
            var record: JSONValue?
            for _ in 0..<50 {
                record = try await mock.requests().first?["stream"]
                if record?["disconnected"] == true {
                    break
                }
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(record?["disconnected"] == true)
            #expect(record?["completed"] == false)
            #expect((record?["frames_sent"]?.intValue ?? 99) < 20)
        }
    }

    @Test("A configuration without a usable base URL fails before any request")
    func badBaseURL() async {
        await withHTTPClient { client in
            let provider = ChatProvider(ProviderConfiguration(kind: .gateway))
            var events: [ChatEvent] = []
            for await event in provider.stream(ChatRequest(model: "m", messages: [.user("x")]), using: client) {
                events.append(event)
            }
            #expect(events.errors.map(\.kind) == [.configuration])
            #expect(events.errors.first?.message.contains("--base-url") == true)
        }
    }
}
