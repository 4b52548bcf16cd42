import Foundation
import OrderedJSON
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A chat whose tools look at the machine hostscope runs on: hostscope's own command line (headers, OTLP
/// credentials) must reach neither the model, nor the event stream, the database or the exported spans; a
/// provider echoing a header must not carry it into the error event; and a tool call that takes too long is
/// stopped and reported.
@Suite(.serialized, .timeLimit(.minutes(5))) struct ChatSecretsTests {
    static func marker() -> String { "Mk" + UUID().uuidString.replacingOccurrences(of: "-", with: "") }

    /// The mock's record of the requests, with the header lists left out: the headers are meant for the
    /// provider, everything else (the conversation, the tool results) must not hold a secret.
    static func requestBodies(_ setup: ChatCommandTests.Setup) throws -> String {
        try setup.requests().map { request -> String in
            var object = request.objectValue ?? [:]
            object["headers"] = nil
            return JSONValue.object(object).jsonString
        }.joined(separator: "\n")
    }

    /// The value the mock recorded for a header in each request.
    static func recordedHeader(_ name: String, _ setup: ChatCommandTests.Setup) throws -> [String] {
        try setup.requests().flatMap { request in
            (request["headers"]?.arrayValue ?? []).compactMap { pair -> String? in
                guard let items = pair.arrayValue, items.count == 2, items[0].stringValue == name else { return nil }
                return items[1].stringValue
            }
        }
    }

    @Test func topProcessesOnThisMachineNeverHandsHostscopesOwnSecretsToTheModelTheOutputOrTheStores() async throws {
        let marker = Self.marker()
        let received = NSTemporaryDirectory() + "hostscope-chat-otlp-\(UUID().uuidString).jsonl"
        let exported = NSTemporaryDirectory() + "hostscope-chat-export-\(UUID().uuidString).jsonl"
        defer { for path in [received, exported] { try? FileManager.default.removeItem(atPath: path) } }
        try await ChatCommandTests.withSetup { setup in
            try await withPythonServer("otlp_receiver.py", arguments: ["--ndjson", received]) { receiver in
                // The harness host is this machine: the process list the tool reads holds this very command.
                // The secrets come first, within the part of a command line that top_processes shows.
                let secrets = [
                    "--otlp-header", "x-custom-team=team\(marker)",
                    "--header", "X-Custom-Key=hdr\(marker)",
                    "--otlp-endpoint", "http://collector:pw\(marker)@127.0.0.1:\(receiver.port)",
                    "--otlp-header", "Authorization=Bearer otlp\(marker)",
                ]
                let result = try CLI.run(
                    ["chat"] + secrets + setup.arguments("openai", model: "mock-top-processes").dropFirst()
                        + ["--message", "What uses the memory?", "--jsonl"],
                    environment: setup.environment)
                let events = result.stdout.split(separator: "\n").compactMap { try? JSONParser.parse(String($0)) }
                #expect(result.status == 0, "\(result.stderr)")
                let results = events.filter { ChatCommandTests.type($0) == "tool_result" }
                let output = try #require(results.first?["output"]?.stringValue)
                #expect(results.first?["is_error"] == false)
                #expect(output.contains("processes by memory"))
                // hostscope's own process is still listed, without its arguments.
                #expect(output.contains("hostscope [arguments hidden]"), "\(output)")
                // The header really went to the provider: the marker was live.
                #expect(try Self.recordedHeader("X-Custom-Key", setup) == ["hdr\(marker)", "hdr\(marker)"])

                let export = try CLI.run(
                    ["trace", "export", "--format", "otlp", "--output", exported, "--db", setup.database])
                #expect(export.status == 0, "\(export.stderr)")
                let spans = try setup.spans()
                #expect(spans.contains { $0["name"]?.stringValue == "execute_tool top_processes" })
                // The receiver's record of what it got, without the headers it was meant to get.
                let log = try CLI.runShell("curl -s http://127.0.0.1:\(receiver.port)/received")
                let receiverLog = (try JSONParser.parse(log.stdout)["requests"]?.arrayValue ?? []).map { request in
                    var object = request.objectValue ?? [:]
                    object["headers"] = nil
                    return JSONValue.object(object).jsonString
                }.joined(separator: "\n")
                #expect(!result.stderr.contains(marker), "the marker is on stderr")
                let places: [(String, String)] = [
                    ("the provider requests", try Self.requestBodies(setup)), ("the --jsonl output", result.stdout),
                    ("the database", setup.databaseBytes()),
                    ("the stored spans", spans.map(\.jsonString).joined(separator: "\n")),
                    ("the export", (try? String(contentsOfFile: exported, encoding: .utf8)) ?? ""),
                    ("the receiver's spans", (try? String(contentsOfFile: received, encoding: .utf8)) ?? ""),
                    ("the receiver's log", receiverLog),
                ]
                for (place, text) in places {
                    #expect(!text.isEmpty, "\(place) is empty")
                    #expect(!text.contains(marker), "the marker is in \(place)")
                }
            }
        }
    }

    @Test func aProviderErrorThatEchoesACustomHeaderReachesNeitherTheEventNorTheDatabase() async throws {
        let marker = Self.marker()
        try await ChatCommandTests.withSetup { setup in
            let (result, events) = try setup.chat(
                "openai", model: "mock-error-401", extra: ["--header", "X-Custom-Team=team\(marker)"])
            #expect(result.status == 9)
            let error = try #require(events.first { ChatCommandTests.type($0) == "error" })
            #expect(error["kind"] == "auth")
            let message = error["message"]?.stringValue ?? ""
            // The mock echoed the header; what reached the event is the echo with the value scrubbed.
            #expect(message.contains("X-Custom-Team: REDACTED"), "\(message)")
            #expect(try Self.recordedHeader("X-Custom-Team", setup) == ["team\(marker)"])
            for (place, text) in [
                ("the --jsonl output", result.stdout), ("stderr", result.stderr),
                ("the database", setup.databaseBytes()),
            ] {
                #expect(!text.contains(marker), "the marker is in \(place)")
            }
        }
    }

    @Test func headersComeFromAPrivateFileAndASecretGivenInlineIsWarnedAbout() async throws {
        let marker = Self.marker()
        let file = NSTemporaryDirectory() + "hostscope-chat-headers-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: file) }
        try "# provider headers\nX-Custom-Key: file\(marker)\n\nHTTP-Referer=https://example.org\n".write(
            toFile: file, atomically: false, encoding: .utf8)
        chmod(file, 0o600)
        try await ChatCommandTests.withSetup { setup in
            let (fromFile, _) = try setup.chat("openai", model: "mock-text", extra: ["--header", "@" + file])
            #expect(fromFile.status == 0, "\(fromFile.stderr)")
            #expect(try Self.recordedHeader("X-Custom-Key", setup) == ["file\(marker)"])
            #expect(try Self.recordedHeader("HTTP-Referer", setup) == ["https://example.org"])
            #expect(!fromFile.stderr.contains("command line"), "\(fromFile.stderr)")

            // The same value typed on the command line works, with a warning that never quotes it.
            let (inline, _) = try setup.chat(
                "openai", model: "mock-text", extra: ["--header", "X-Custom-Key=inline\(marker)"])
            #expect(inline.status == 0, "\(inline.stderr)")
            #expect(inline.stderr.contains("the value of --header X-Custom-Key is on the command line"))
            #expect(inline.stderr.contains("--header @FILE"))
            #expect(!inline.stderr.contains(marker))

            // A headers file others can read is refused before anything is sent.
            chmod(file, 0o644)
            try setup.reset()
            let (refused, _) = try setup.chat("openai", model: "mock-text", extra: ["--header", "@" + file])
            #expect(refused.status == 64)
            #expect(refused.stderr.contains("refusing the headers file given to --header \(file)"))
            #expect(refused.stderr.contains("chmod 600"))
            #expect(try setup.requests().isEmpty)

            // A base URL with a token in its query: warned about, never printed.
            let (tokenURL, _) = try setup.chat(
                "openai", model: "mock-text",
                extra: ["--base-url", setup.baseURL("openai") + "?api_key=url\(marker)"])
            #expect(tokenURL.stderr.contains("--base-url carries credentials"), "\(tokenURL.stderr)")
            #expect(!tokenURL.stderr.contains(marker))
            #expect(!tokenURL.stdout.contains(marker))
        }
    }

    @Test func aToolCallPastItsDeadlineIsStoppedAndReportedAndTheNextCallStillWorks() async throws {
        try await ChatCommandTests.withSetup { setup in
            // Enough files that searching them all over SFTP takes far longer than the deadline.
            let many = setup.workspace.root + "/many"
            try FileManager.default.createDirectory(atPath: many, withIntermediateDirectories: true)
            chmod(many, 0o755)
            for index in 0..<1500 {
                FileManager.default.createFile(
                    atPath: many + "/file-\(index).txt", contents: Data("line \(index)\n".utf8),
                    attributes: [.posixPermissions: 0o644])
            }
            let started = Date()
            let (result, events) = try setup.chat(
                "openai", model: "mock-slow-grep", root: true, extra: ["--tool-timeout", "250ms"])
            let elapsed = Date().timeIntervalSince(started)
            #expect(result.status == 0, "\(result.stderr)")
            let results = events.filter { ChatCommandTests.type($0) == "tool_result" }
            try #require(results.count == 2)
            #expect(results[0]["name"] == "grep")
            #expect(results[0]["is_error"] == true)
            let message = results[0]["output"]?.stringValue ?? ""
            #expect(message.contains("grep did not finish within 250 ms and was stopped"), "\(message)")
            let duration = results[0]["duration_ms"]?.doubleValue ?? 0
            #expect(duration >= 250 && duration < 3000, "grep took \(duration) ms")
            // The session goes on: the next call reads a file over the same host.
            #expect(results[1]["name"] == "read_file")
            #expect(results[1]["is_error"] == false)
            #expect(results[1]["output"]?.stringValue?.contains("The disk filled at 19:20") == true)
            #expect(events.last?["finish_reason"] == "stop")
            #expect(elapsed < 60)
        }
    }
}
