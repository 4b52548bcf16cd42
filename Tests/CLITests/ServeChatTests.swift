import Foundation
import OrderedJSON
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Chat over HTTP on a real `serve` with the mock provider of `Scripts/llm_mock_server.py` and the harness sshd as
/// the watched host: turns stream the chat events as SSE with tool rows whose spans hold the SSH work, stop ends a
/// running turn, a provider's 401 or 429 is an event in the stream with the conversation kept, the POSTs need JSON,
/// the token in a header and serve's own origin, and the API key reaches no answer and no log line.
@Suite(.serialized, .timeLimit(.minutes(5))) struct ServeChatTests {
    static let apiKey = "sk-serve-chat-\(UUID().uuidString.replacingOccurrences(of: "-", with: ""))"

    let directory: String
    let config: String

    init() throws {
        let server = try SSHTestServer.shared()
        directory = NSTemporaryDirectory() + "hostscope-serve-chat-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        config = directory + "/ssh_config"
        try server.configBlock("h1").write(toFile: config, atomically: true, encoding: .utf8)
    }

    /// A serve watching h1 with the chat on the mock (model `mock-tool-loop` unless a question names a scenario).
    func withServe(
        token: String? = nil, extra: [String] = [], _ body: (RunningServe, PythonServer) async throws -> Void
    ) async throws {
        try await withPythonServer("llm_mock_server.py") { mock in
            var arguments = [
                "h1", "--ssh-config", config, "--every", "2s", "--listen", "127.0.0.1:0", "--chat-provider", "openai",
                "--chat-base-url", mock.baseURL + "/v1", "--chat-model", "mock-tool-loop",
            ]
            if let token {
                let path = directory + "/token"
                try token.write(toFile: path, atomically: true, encoding: .utf8)
                chmod(path, 0o600)
                arguments += ["--token-file", path]
            }
            let serve = try RunningServe(
                arguments + extra, directory: directory, environment: ["OPENAI_API_KEY": Self.apiKey])
            defer { _ = serve.stop() }
            try serve.waitUntilListening()
            let auth = token.map { ["Authorization: Bearer \($0)"] } ?? []
            _ = try serve.waitFor("/api/v1/hosts/h1", headers: auth) { $0.status == 200 }
            try await body(serve, mock)
            #expect(!serve.log.contains(Self.apiKey), "the API key is in serve's log")
        }
    }

    /// POSTs `body` as JSON (or with `headers` as given) and returns the answer.
    static func post(
        _ serve: RunningServe, _ path: String, _ body: String = "{}", headers: [String]? = nil, timeout: Double = 60
    ) throws -> CurlCommand.Response {
        try CurlCommand.get(
            serve.url(path), headers: headers ?? ["Content-Type: application/json"], timeout: timeout,
            extra: ["-X", "POST", "--data-binary", body])
    }

    static func turnBody(_ message: String, host: String? = "h1", conversation: String? = nil) -> String {
        var object = JSONObject()
        object.append("message", .string(message))
        if let host { object.append("host", .string(host)) }
        if let conversation { object.append("conversation", .string(conversation)) }
        return JSONValue.object(object).jsonString
    }

    /// The JSON events of an SSE body.
    static func events(_ body: String) -> [JSONValue] {
        body.components(separatedBy: "\n\n").compactMap { frame in
            frame.hasPrefix("data: ") ? try? JSONParser.parse(String(frame.dropFirst(6))) : nil
        }
    }

    static func type(_ event: JSONValue) -> String { event["type"]?.stringValue ?? "" }

    @Test func aTurnStreamsTheChatEventsWithToolRowsWhoseSpansHoldTheSSHWork() async throws {
        try await withServe { serve, _ in
            let answer = try Self.post(serve, "/api/v1/chat/turns", Self.turnBody("Why is the disk filling up?"))
            #expect(answer.status == 200 && answer.headers["content-type"] == "text/event-stream", "\(answer.body)")
            let events = Self.events(answer.body)
            #expect(events.map(Self.type).first == "conversation")
            #expect(events.map(Self.type).last == "done")
            #expect(events.last?["finish_reason"]?.stringValue == "stop")
            let id = try #require(events.first?["id"]?.stringValue)
            let results = events.filter { Self.type($0) == "tool_result" }
            #expect(results.map { $0["name"]?.stringValue } == ["disk_usage", "tail_log"])
            #expect(results.first?["is_error"] == .bool(false) && results.first?["exit_code"] == .number(0))
            #expect(events.contains { Self.type($0) == "text" } && events.contains { Self.type($0) == "usage" })
            let first = try #require(results.first)
            let trace = try #require(first["trace_id"]?.stringValue)
            let span = try #require(first["span_id"]?.stringValue)

            // The tool's span has the SSH commands it ran as children, in the stored trace Tracing reads.
            let stored = try serve.waitFor("/api/v1/traces/\(trace)") { response in
                Self.spans(response).contains { $0["parent_span_id"]?.stringValue == span && Self.isSSH($0) }
            }
            #expect(Self.spans(stored).contains { $0["name"]?.stringValue == "execute_tool disk_usage" })

            // Stored and listed; read back whole; a tool call run again with the same input, as a span of its own.
            let list = try serve.get("/api/v1/chat/conversations")
            let listed = try JSONParser.parse(list.body)["conversations"]?.arrayValue ?? []
            #expect(listed.first?["id"]?.stringValue == id && listed.first?["tool_calls"] == .number(2))
            let conversation = try JSONParser.parse(try serve.get("/api/v1/chat/conversations/\(id)").body)
            #expect(conversation["tool_calls"]?[0]?["span_id"]?.stringValue == span)
            let rerun = try Self.post(serve, "/api/v1/chat/conversations/\(id)/calls/call_loop_1/rerun")
            let result = try JSONParser.parse(rerun.body)
            #expect(rerun.status == 200 && result["type"]?.stringValue == "tool_result", "\(rerun.body)")
            #expect(result["output"]?.stringValue?.contains("FILESYSTEM") == true)
            #expect(result["span_id"]?.stringValue != nil && result["span_id"]?.stringValue != span)
            let unknown = try Self.post(serve, "/api/v1/chat/conversations/\(id)/calls/call_nope/rerun")
            #expect(unknown.status == 404)
            for text in [answer.body, list.body, rerun.body] { #expect(!text.contains(Self.apiKey)) }
        }
    }

    static func spans(_ response: CurlCommand.Response) -> [JSONValue] {
        (try? JSONParser.parse(response.body))?["spans"]?.arrayValue ?? []
    }

    static func isSSH(_ span: JSONValue) -> Bool {
        span["name"]?.stringValue?.hasPrefix("ssh ") == true
    }

    /// A slow turn (40 words, 100 ms apart) streamed by a curl process into `output`, and a reader of what came.
    func slowTurn(_ serve: RunningServe, output: String) throws -> (Process, () -> String) {
        let curl = Process()
        curl.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        curl.arguments = [
            "-s", "-N", "-o", output, "-X", "POST", "-H", "Content-Type: application/json", "--data-binary",
            Self.turnBody("mock:slow count to forty"), serve.url("/api/v1/chat/turns"),
        ]
        try curl.run()
        return (curl, { (try? String(contentsOfFile: output, encoding: .utf8)) ?? "" })
    }

    @Test func stopEndsARunningTurnKeepingItsTextAndASecondTurnWaitsForIt() async throws {
        try await withServe { serve, _ in
            let (curl, read) = try slowTurn(serve, output: directory + "/slow.sse")
            defer { if curl.isRunning { curl.terminate() } }
            try await waitUntil(timeout: .seconds(20), "the slow answer streams") { read().contains("word2 ") }
            let id = try #require(Self.events(read()).first?["id"]?.stringValue)

            let second = try Self.post(serve, "/api/v1/chat/turns", Self.turnBody("again", host: nil, conversation: id))
            #expect(second.status == 409 && second.body.contains("has a turn running"), "\(second.body)")

            let stop = try Self.post(serve, "/api/v1/chat/conversations/\(id)/stop")
            #expect(stop.status == 200 && stop.body.contains("\"stopped\":true"), "\(stop.body)")
            try await waitUntil(timeout: .seconds(20), "the stopped turn ends its stream") { !curl.isRunning }
            let events = Self.events(read())
            #expect(events.last?["finish_reason"]?.stringValue == "stopped")
            #expect(!read().contains("word39"))
            // Nothing runs any more; the stop of an idle conversation says so.
            let again = try Self.post(serve, "/api/v1/chat/conversations/\(id)/stop")
            #expect(again.body.contains("\"stopped\":false"))
            let stored = try JSONParser.parse(try serve.get("/api/v1/chat/conversations/\(id)").body)
            #expect(stored["turns"]?[0]?["finish_reason"]?.stringValue == "stopped")
        }
    }

    @Test func aClientThatLeavesTheStreamStopsItsTurnAndTheTextSoFarIsStored() async throws {
        try await withServe { serve, _ in
            let (curl, read) = try slowTurn(serve, output: directory + "/left.sse")
            try await waitUntil(timeout: .seconds(20), "the slow answer streams") { read().contains("word2 ") }
            let id = try #require(Self.events(read()).first?["id"]?.stringValue)
            // SIGKILL: the test process's children may inherit a mask that holds SIGTERM back.
            kill(curl.processIdentifier, SIGKILL)
            curl.waitUntilExit()
            let stored = try serve.waitFor("/api/v1/chat/conversations/\(id)", timeout: 20) { $0.status == 200 }
            let conversation = try JSONParser.parse(stored.body)
            #expect(conversation["turns"]?[0]?["finish_reason"]?.stringValue == "stopped", "\(stored.body)")
            let answer = conversation["messages"]?.arrayValue?.last { $0["role"]?.stringValue == "assistant" }
            #expect(answer?["content"]?.stringValue?.contains("word2") == true)
            #expect(answer?["content"]?.stringValue?.contains("word39") == false)
        }
    }

    @Test func aTurnPastItsTimeLimitIsStoppedSayingSoAndTurnsPastTheCapWait() async throws {
        try await withServe(extra: ["--chat-max-turns", "1", "--chat-turn-timeout", "1s"]) { serve, _ in
            let (curl, read) = try slowTurn(serve, output: directory + "/limited.sse")
            defer { if curl.isRunning { curl.terminate() } }
            try await waitUntil(timeout: .seconds(20), "the slow answer streams") { read().contains("word1 ") }

            let other = try Self.post(serve, "/api/v1/chat/turns", Self.turnBody("mock:text hello"))
            #expect(other.status == 503 && other.body.contains("too_many_turns"), "\(other.body)")
            #expect(other.headers["retry-after"] == "5")

            try await waitUntil(timeout: .seconds(20), "the turn ends at its limit") { !curl.isRunning }
            let events = Self.events(read())
            let error = try #require(events.first { Self.type($0) == "error" })
            #expect(error["kind"]?.stringValue == "timeout" && error["message"]?.stringValue?.contains("1s") == true)
            #expect(events.last?["finish_reason"]?.stringValue == "stopped")
            #expect(!read().contains("word39"))
        }
    }

    @Test func aProviderRefusingTheKeyOrRateLimitingIsAnEventInTheStreamAndTheConversationIsKept() async throws {
        try await withServe { serve, _ in
            let refused = try Self.post(serve, "/api/v1/chat/turns", Self.turnBody("mock:error-401 why?"))
            let events = Self.events(refused.body)
            #expect(refused.status == 200)
            let error = try #require(events.first { Self.type($0) == "error" })
            #expect(error["kind"]?.stringValue == "auth")
            #expect(error["message"]?.stringValue?.contains("OPENAI_API_KEY") == true, "\(error)")
            #expect(events.last?["finish_reason"]?.stringValue == "error")
            let id = try #require(events.first?["id"]?.stringValue)

            let limited = try Self.post(
                serve, "/api/v1/chat/turns", Self.turnBody("mock:error-429 and now?", host: nil, conversation: id))
            let limit = try #require(Self.events(limited.body).first { Self.type($0) == "error" })
            #expect(limit["kind"]?.stringValue == "rate_limited" && limit["retry_after_s"] == .number(7), "\(limit)")

            // Both questions are kept, each turn with its error, ready to go on.
            let stored = try JSONParser.parse(try serve.get("/api/v1/chat/conversations/\(id)").body)
            let questions = stored["messages"]?.arrayValue?.filter { $0["role"]?.stringValue == "user" } ?? []
            #expect(questions.count == 2)
            #expect(
                stored["turns"]?.arrayValue?.compactMap { $0["error_kind"]?.stringValue } == ["auth", "rate_limited"])
            let answered = try Self.post(
                serve, "/api/v1/chat/turns", Self.turnBody("mock:text once more", host: nil, conversation: id))
            #expect(Self.events(answered.body).last?["finish_reason"]?.stringValue == "stop")

            // The provider got the key from serve's environment (the mock answers 401 without one); no answer has it.
            for text in [refused.body, limited.body, answered.body, try serve.get("/api/v1/chat").body] {
                #expect(!text.contains(Self.apiKey))
            }
        }
    }

    @Test func chatPOSTsNeedJSONTheTokenInAHeaderAndThisServersOrigin() async throws {
        let token = "0123456789abcdef0123456789abcdef-chat"
        try await withServe(token: token) { serve, _ in
            let auth = "Authorization: Bearer \(token)"
            let json = "Content-Type: application/json"
            let body = Self.turnBody("mock:text hello")
            // No token, or the token only as a cookie: refused.
            #expect(try Self.post(serve, "/api/v1/chat/turns", body, headers: [json]).status == 401)
            #expect(
                try Self.post(serve, "/api/v1/chat/turns", body, headers: [json, "Cookie: token=\(token)"]).status
                    == 401)
            // A form or a "simple" request another site could make: not JSON, or from another origin.
            let form = try Self.post(
                serve, "/api/v1/chat/turns", body, headers: [auth, "Content-Type: application/x-www-form-urlencoded"])
            #expect(form.status == 415)
            let foreign = try Self.post(
                serve, "/api/v1/chat/turns", body, headers: [auth, json, "Origin: http://evil.example"])
            #expect(foreign.status == 403 && foreign.body.contains("forbidden_origin"))
            let crossSite = try Self.post(
                serve, "/api/v1/chat/turns", body, headers: [auth, json, "Sec-Fetch-Site: cross-site"])
            #expect(crossSite.status == 403)
            // No state-changing GET; a host serve does not watch; a body over the cap; an unknown field.
            let get = try serve.get("/api/v1/chat/turns?message=hi&host=h1", headers: [auth])
            #expect([404, 405].contains(get.status) && !get.body.contains("\"type\""), "a GET starts no turn")
            let other = try Self.post(
                serve, "/api/v1/chat/turns", Self.turnBody("hi", host: "elsewhere"), headers: [auth, json])
            #expect(other.status == 404 && other.body.contains("not watched"))
            let huge = try Self.post(
                serve, "/api/v1/chat/turns", Self.turnBody(String(repeating: "x", count: 70000)), headers: [auth, json])
            #expect(huge.status == 413)
            let extra = try Self.post(
                serve, "/api/v1/chat/turns", #"{"message":"hi","host":"h1","model":"gpt-5"}"#, headers: [auth, json])
            #expect(extra.status == 400 && extra.body.contains("unknown field model"))
            // The page's own request: JSON, the token in its header, the page's origin.
            let own = "Origin: http://127.0.0.1:\(serve.port)"
            let answered = try Self.post(serve, "/api/v1/chat/turns", body, headers: [auth, json, own])
            #expect(answered.status == 200 && Self.events(answered.body).last?["finish_reason"]?.stringValue == "stop")
        }
    }

    @Test func withoutAProviderTheChatSaysWhichOptionToGiveAndAMissingKeyStopsServe() async throws {
        let serve = try RunningServe(
            ["h1", "--ssh-config", config, "--every", "5s", "--listen", "127.0.0.1:0"], directory: directory)
        defer { _ = serve.stop() }
        try serve.waitUntilListening()
        let answer = try serve.get("/api/v1/chat")
        #expect(answer.status == 503 && answer.body.contains("--chat-provider"), "\(answer.body)")
        let turn = try Self.post(serve, "/api/v1/chat/turns", Self.turnBody("hi"))
        #expect(turn.status == 503 && turn.body.contains("chat_not_configured"))

        let missing = try CLI.run(
            ["serve", "h1", "--ssh-config", config, "--listen", "127.0.0.1:0", "--chat-provider", "anthropic"],
            environment: ["ANTHROPIC_API_KEY": ""], timeout: 30)
        #expect(missing.status == 64)
        #expect(
            missing.stderr.contains("no API key for") && missing.stderr.contains("ANTHROPIC_API_KEY"),
            "\(missing.stderr)")
        let alone = try CLI.run(["serve", "h1", "--chat-model", "gpt-4o"], timeout: 30)
        #expect(alone.status == 64 && alone.stderr.contains("need --chat-provider"), "\(alone.stderr)")
    }
}
