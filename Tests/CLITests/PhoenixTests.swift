import Foundation
import OrderedJSON
import TestSupport
import Testing

/// Whether Phoenix is there to test against.
enum PhoenixInstallation {
    /// Whether `python3 -c 'import phoenix'` works (Scripts/setup.sh --tests installs it).
    static let importable: Bool = {
        let result = try? CLI.runShell("${PYTHON:-python3} -c 'import phoenix' 2>/dev/null")
        return result?.status == 0
    }()
}

/// Arize Phoenix, a real LLM-tracing backend that takes only binary protobuf, started on loopback by
/// `Scripts/phoenix_server.py`: a snapshot and two chat turns with tools, pushed with `trace push`, read back
/// through Phoenix's REST API.
@Suite(
    .serialized, .timeLimit(.minutes(10)),
    .enabled(
        if: PhoenixInstallation.importable,
        "arize-phoenix cannot be imported by python3, so the Phoenix tests are skipped: pip install arize-phoenix"))
struct PhoenixTests {
    /// A value registered as a secret (a provider header) that the first question also quotes.
    static let marker = "Mk" + UUID().uuidString.replacingOccurrences(of: "-", with: "")

    /// Every span of a project, each with its attributes flattened to dotted keys, through the REST API's pages.
    static func spans(_ phoenix: PythonServer, project: String) throws -> (spans: [JSONValue], raw: String) {
        var spans: [JSONValue] = []
        var raw = ""
        var cursor: String?
        repeat {
            let query = "limit=1000" + (cursor.map { "&cursor=\($0)" } ?? "")
            let page = try CLI.runShell("curl -sf '\(phoenix.baseURL)/v1/projects/\(project)/spans?\(query)'")
            guard page.status == 0 else { return (spans, raw) }
            raw += page.stdout
            let body = try JSONParser.parse(page.stdout)
            spans += body["data"]?.arrayValue ?? []
            cursor = body["next_cursor"]?.stringValue
        } while cursor != nil
        return (spans, raw)
    }

    /// `{"a": {"b": 1}}` as `["a.b": 1]`, as the span's attributes were sent.
    static func flattened(_ value: JSONValue?, prefix: String = "") -> [String: JSONValue] {
        guard let object = value?.objectValue else { return prefix.isEmpty ? [:] : [prefix: value ?? .null] }
        var result: [String: JSONValue] = [:]
        for (key, member) in object {
            let name = prefix.isEmpty ? key : prefix + "." + key
            if member.objectValue != nil {
                result.merge(flattened(member, prefix: name)) { $1 }
            } else {
                result[name] = member
            }
        }
        return result
    }

    @Test func aSnapshotAndChatsWithToolsArriveWholeWithSessionsToolDetailsAndContentOnlyWhenCaptured() async throws {
        let project = "hostscope-e2e-\(UUID().uuidString.prefix(8).lowercased())"
        try await ChatCommandTests.withSetup { setup in
            let snapshot = try CLI.run(
                ["snapshot", setup.ssh.target, "--format", "json"] + CLI.harnessArguments(setup.ssh),
                environment: ["HOSTSCOPE_DB": setup.database])
            #expect(snapshot.status == 0, "\(snapshot.stderr)")
            let secretHeader = ["--header", "X-Custom-Key=\(Self.marker)"]
            let (captured, capturedEvents) = try setup.chat(
                "openai", model: "mock-tool-loop", message: "Why is the disk filling up? Mention \(Self.marker).",
                extra: secretHeader, environment: ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true"])
            #expect(captured.status == 0, "\(captured.stderr)")
            let (quiet, quietEvents) = try setup.chat(
                "openai", model: "mock-tool-loop", extra: secretHeader + ["--no-capture-message-content"],
                environment: ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true"])
            #expect(quiet.status == 0, "\(quiet.stderr)")
            let capturedSession = try #require(capturedEvents.last?["session_id"]?.stringValue)
            let quietSession = try #require(quietEvents.last?["session_id"]?.stringValue)
            #expect(capturedSession != quietSession)

            // What Phoenix should hold: every stored span but hostscope's own export requests.
            let stored = try setup.spans().filter {
                $0["attributes"]?["hostscope.telemetry.export"]?.boolValue != true
            }
            let storedIDs = Set(stored.compactMap { $0["span_id"]?.stringValue })
            #expect(storedIDs.count > 20)

            let phoenix = try await PythonServer.start("phoenix_server.py", readyTimeout: .seconds(300))
            defer { phoenix.stop() }
            let push = try CLI.run(
                ["trace", "push", "--endpoint", phoenix.baseURL, "--db", setup.database],
                environment: ["OTEL_SERVICE_NAME": project])
            #expect(push.status == 0, "\(push.stderr)")
            #expect(push.stdout.hasPrefix("pushed \(storedIDs.count) span(s) to \(phoenix.baseURL)/v1/traces"))

            // Phoenix stores what it received in the background: wait until every span is there.
            var received: [JSONValue] = []
            var raw = ""
            for _ in 0..<120 {
                (received, raw) = try Self.spans(phoenix, project: project)
                if received.count >= storedIDs.count { break }
                try await Task.sleep(for: .milliseconds(500))
            }
            let byID = Dictionary(
                received.compactMap { span in span["context"]?["span_id"]?.stringValue.map { ($0, span) } },
                uniquingKeysWith: { first, _ in first })
            #expect(Set(byID.keys) == storedIDs)
            for span in stored {
                guard let id = span["span_id"]?.stringValue, let arrived = byID[id] else { continue }
                #expect(arrived["parent_id"]?.stringValue == span["parent_span_id"]?.stringValue, "\(id)")
                #expect(arrived["context"]?["trace_id"]?.stringValue == span["trace_id"]?.stringValue)
            }

            let attributes = received.map {
                (
                    name: $0["name"]?.stringValue ?? "", kind: $0["span_kind"]?.stringValue,
                    attributes: Self.flattened($0["attributes"])
                )
            }
            let chat = attributes.filter { $0.attributes["gen_ai.operation.name"] != nil }
            #expect(chat.count == 12)  // per conversation: the turn, three model calls, two tools
            for span in chat {
                let conversation = span.attributes["gen_ai.conversation.id"]?.stringValue
                #expect(conversation == capturedSession || conversation == quietSession, "\(span.name)")
                // Phoenix read the conversation as its session.
                #expect(span.attributes["session.id"]?.stringValue == conversation, "\(span.name)")
            }
            let sessions = try CLI.runShell("curl -sf '\(phoenix.baseURL)/v1/projects/\(project)/sessions'")
            #expect(sessions.stdout.contains(capturedSession))
            #expect(sessions.stdout.contains(quietSession))

            let calls = chat.filter { $0.name == "chat mock-tool-loop" }
            #expect(calls.count == 6)
            for call in calls {
                let session = call.attributes["gen_ai.conversation.id"]?.stringValue
                let messages = call.attributes.keys.filter { $0.hasPrefix("llm.input_messages.") }
                #expect(call.attributes["gen_ai.response.id"]?.stringValue?.hasPrefix("chatcmpl-") == true)
                #expect(call.kind == "LLM")
                if session == capturedSession {
                    #expect(!messages.isEmpty, "no messages shown on a captured LLM span")
                    #expect(call.attributes.keys.contains { $0.hasPrefix("llm.output_messages.") })
                } else {
                    #expect(messages.isEmpty, "messages shown on an LLM span without capture")
                    #expect(call.attributes["gen_ai.input.messages"] == nil)
                }
            }
            let tools = chat.filter { $0.name.hasPrefix("execute_tool ") }
            #expect(tools.count == 4)
            for tool in tools {
                #expect(tool.kind == "TOOL")
                // Phoenix shows the arguments as the tool's parameters and the result as its output.
                #expect(tool.attributes["tool.parameters.path"]?.stringValue?.hasPrefix("/var") == true, "\(tool.name)")
                #expect(tool.attributes["output.value"]?.stringValue?.contains("127.0.0.1") == true, "\(tool.name)")
            }
            #expect(Set(tools.compactMap { $0.attributes["tool.name"]?.stringValue }) == ["disk_usage", "tail_log"])
            // Each tool's SSH and SFTP work arrived beneath it.
            for tool in received.filter({ $0["name"]?.stringValue?.hasPrefix("execute_tool ") == true }) {
                let id = tool["context"]?["span_id"]?.stringValue
                let children = received.filter { $0["parent_id"]?.stringValue == id }.compactMap {
                    $0["name"]?.stringValue
                }
                #expect(children.contains { $0.hasPrefix("ssh ") || $0.hasPrefix("files.") }, "\(children)")
            }
            #expect(received.contains { $0["name"]?.stringValue == "collect snapshot" })
            #expect(!raw.contains(Self.marker), "the secret reached Phoenix")
            #expect(raw.contains("REDACTED"), "the captured question kept no trace of the scrubbed secret")
        }
    }
}
