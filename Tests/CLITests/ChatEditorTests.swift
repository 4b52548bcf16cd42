import Foundation
import OrderedJSON
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The chat's line editor on a real pseudo-terminal (tmux) against the mock LLM server of `Scripts/`: keys in,
/// screen out (goldens at 80×24 and 160×45 under Fixtures/terminal/, `HOSTSCOPE_RECORD_GOLDENS=1` rewrites them on
/// purpose), the history file across runs, `Tab`, a bracketed paste, and the terminal's mode (`stty -g`) as it was
/// after `Ctrl-C`, `Ctrl-D`, a provider error and `SIGTERM`.
@Suite(.serialized, .timeLimit(.minutes(5))) struct ChatEditorTests {
    static let sizes = [(80, 24), (160, 45)]
    static let apiKey = "sk-editor-\(UUID().uuidString.replacingOccurrences(of: "-", with: ""))"

    /// One test's mock server and data directory (the history file lives there).
    struct Setup {
        let mock: PythonServer
        let dataHome: String

        var historyFile: String { dataHome + "/hostscope/chat-history" }

        func session(model: String = "mock-text", width: Int = 80, height: Int = 24, extra: [String] = [])
            throws -> TerminalSession
        {
            try TerminalSession(
                [
                    "chat", "--host", "local", "--provider", "openai", "--base-url", mock.baseURL + "/v1", "--model",
                    model, "--db", dataHome + "/chat.sqlite",
                ] + extra, width: width, height: height,
                environment: ["OPENAI_API_KEY": ChatEditorTests.apiKey, "XDG_DATA_HOME": dataHome])
        }

        /// Every request the mock server received.
        func requests() throws -> [JSONValue] {
            let result = try CLI.runShell("curl -s \(mock.baseURL)/requests")
            return try JSONParser.parse(result.stdout)["requests"]?.arrayValue ?? []
        }

        /// The lines of the history file.
        func history() throws -> [String] {
            try String(contentsOfFile: historyFile, encoding: .utf8).split(separator: "\n").compactMap {
                try JSONParser.parse(String($0)).stringValue
            }
        }
    }

    static func withSetup(_ body: (Setup) async throws -> Void) async throws {
        let dataHome = NSTemporaryDirectory() + "hostscope-editor-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dataHome, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dataHome) }
        try await withPythonServer("llm_mock_server.py") { mock in
            try await body(Setup(mock: mock, dataHome: dataHome))
        }
    }

    /// The screen without what differs between runs: the turn's elapsed time.
    static func normalized(_ screen: [String]) -> String {
        screen.map { $0.replacingOccurrences(of: " · [0-9.]+ s$", with: " · T s", options: .regularExpression) }
            .joined(separator: "\n")
    }

    static func prompt(_ screen: [String]) -> String? {
        screen.last { $0.hasPrefix("› ") || $0 == "›" }
    }

    static func expectModeRestored(_ session: TerminalSession) throws {
        let modes = try session.modes()
        #expect(modes.before == modes.after)
    }

    @Test(arguments: sizes)
    func editingKeysCompletionAndHistoryDrawTheGoldenScreen(_ width: Int, _ height: Int) async throws {
        try await Self.withSetup { setup in
            let session = try setup.session(width: width, height: height)
            _ = try session.waitForScreen { Self.prompt($0) == "›" }
            // Typed with two mistakes, mended with the arrows, Home and End.
            try session.send(
                "helo wrld", "Left", "Left", "Left", "o", "Home", "Right", "Right", "Right", "l", "End", "!")
            _ = try session.waitForScreen { $0.contains("› hello world!") }
            try session.send("Enter")
            _ = try session.waitForScreen { screen in
                screen.contains { $0.hasPrefix("mock-text · ") } && Self.prompt(screen) == "›"
            }
            // Tab on an empty line starts a command; again, it lists them; then completes one and its format.
            try session.send("Tab")
            _ = try session.waitForScreen { Self.prompt($0) == "› /" }
            try session.send("Tab")
            _ = try session.waitForScreen { screen in
                screen.contains { $0.hasPrefix("/stop ") } && screen.contains { $0.contains(" /sessions ") }
                    && Self.prompt(screen) == "› /"
            }
            try session.send("ex", "Tab", "j", "Tab")
            _ = try session.waitForScreen { Self.prompt($0) == "› /export json" }
            // Ctrl-U empties the line, ↑ brings back the question, Ctrl-C abandons it.
            try session.send("C-u", "Up")
            _ = try session.waitForScreen { Self.prompt($0) == "› hello world!" }
            try session.send("C-c")
            let screen = try session.waitForScreen { $0.contains("› hello world!^C") && Self.prompt($0) == "›" }
            #expect(screen.allSatisfy { $0.count <= width })
            let golden = Repository.fixtures.appendingPathComponent("terminal/chat-editor-\(width)x\(height).txt")
            let text = Self.normalized(screen)
            if ProcessInfo.processInfo.environment["HOSTSCOPE_RECORD_GOLDENS"] == "1" {
                try text.write(to: golden, atomically: true, encoding: .utf8)
            } else {
                let expected = try String(contentsOf: golden, encoding: .utf8)
                #expect(text == expected, "rerun with HOSTSCOPE_RECORD_GOLDENS=1 if the change is intended")
            }
            // The model got the mended question.
            let sent = try setup.requests().last?["body"]?["messages"]?.arrayValue?.last?["content"]?.stringValue
            #expect(sent == "hello world!")
            try session.send("C-d")
            #expect(try session.waitForExit() == 0)
            try Self.expectModeRestored(session)
        }
    }

    @Test func afterTheTerminalIsResizedThePromptIsShownOnce() async throws {
        try await Self.withSetup { setup in
            let session = try setup.session(width: 80, height: 24)
            _ = try session.waitForScreen { Self.prompt($0) == "›" }
            try session.send("/model mock-slow")
            _ = try session.waitForScreen { Self.prompt($0) == "› /model mock-slow" }
            for (width, height) in [(100, 30), (70, 20)] {
                try session.tmux(["resize-window", "-t", "0", "-x", String(width), "-y", String(height)])
                // The editor looks at the terminal's size every 250 ms while it waits for a key and then draws the
                // line again; nothing on the screen tells that it did, so real time is let pass for a few looks.
                try await Task.sleep(for: .seconds(1))
                let screen = try session.waitForScreen { screen in
                    screen.count >= height && Self.prompt(screen) == "› /model mock-slow"
                }
                #expect(!screen.contains { $0.contains("› ›") }, "\(screen.joined(separator: "\n"))")
                #expect(
                    screen.filter { $0.contains("/model mock-slow") }.count == 1, "\(screen.joined(separator: "\n"))")
            }
            // The line is still the one typed.
            try session.send("C-u", "C-d")
            #expect(try session.waitForExit() == 0)
        }
    }

    @Test func ctrlCOnAnEmptyLineSaysHowToLeaveAndASecondOneLeavesWithTheModeRestored() async throws {
        try await Self.withSetup { setup in
            let session = try setup.session()
            _ = try session.waitForScreen { Self.prompt($0) == "›" }
            try session.send("C-c")
            _ = try session.waitForScreen { $0.contains { $0.hasPrefix("(Ctrl-C again or Ctrl-D leaves") } }
            // A key between two Ctrl-C: the second only abandons the line.
            try session.send("x", "BSpace", "C-c")
            _ = try session.waitForScreen { $0.filter { $0.hasPrefix("(Ctrl-C again") }.count == 2 }
            try session.send("C-c")
            #expect(try session.waitForExit() == 0)
            try Self.expectModeRestored(session)
        }
    }

    @Test func ctrlDOnAnEmptyLineLeavesAndElsewhereDeletesWithTheModeRestored() async throws {
        try await Self.withSetup { setup in
            let session = try setup.session()
            _ = try session.waitForScreen { Self.prompt($0) == "›" }
            try session.send("abc", "C-a", "C-d")
            _ = try session.waitForScreen { Self.prompt($0) == "› bc" }
            try session.send("C-e", "C-d", "C-u", "C-d")
            #expect(try session.waitForExit() == 0)
            try Self.expectModeRestored(session)
        }
    }

    @Test func aProviderErrorIsShownTheChatGoesOnAndTheModeIsRestored() async throws {
        try await Self.withSetup { setup in
            let session = try setup.session(model: "mock-error-500")
            _ = try session.waitForScreen { Self.prompt($0) == "›" }
            try session.send("disk?", "Enter")
            _ = try session.waitForScreen { screen in
                screen.contains { $0.contains("✗ server: OpenAI failed with HTTP 500") } && Self.prompt(screen) == "›"
            }
            try session.send("still there?", "Enter")
            _ = try session.waitForScreen {
                $0.filter { $0.contains("✗ server: OpenAI failed with HTTP 500") }.count == 2
            }
            try session.send("C-d")
            #expect(try session.waitForExit() == 0)
            try Self.expectModeRestored(session)
        }
    }

    @Test func sigtermAtThePromptEndsTheChatWithTheModeRestored() async throws {
        try await Self.withSetup { setup in
            let session = try setup.session()
            _ = try session.waitForScreen { Self.prompt($0) == "›" }
            try session.send("half a question")
            _ = try session.waitForScreen { Self.prompt($0) == "› half a question" }
            let pid = try #require(try session.commandPID())
            kill(pid, SIGTERM)
            #expect(try session.waitForExit() == 0)
            try Self.expectModeRestored(session)
            // Nothing half typed reached the model.
            #expect(try setup.requests().isEmpty)
        }
    }

    @Test func theHistoryIsKeptAcrossRunsInAPrivateFileWithoutSpaceLinesOrSecrets() async throws {
        try await Self.withSetup { setup in
            let first = try setup.session()
            _ = try first.waitForScreen { Self.prompt($0) == "›" }
            for line in ["why is the disk full?", " keep this one out", "the password=hunter2 works", "/tools"] {
                try first.send(line, "Enter")
                _ = try first.waitForScreen { screen in
                    screen.contains { $0.hasPrefix("› " + line) }
                        && Self.prompt(screen) == "›"
                }
            }
            try first.send("C-d")
            #expect(try first.waitForExit() == 0)
            #expect(try setup.history() == ["why is the disk full?", "/tools"])
            let file = try FileManager.default.attributesOfItem(atPath: setup.historyFile)
            #expect((file[.posixPermissions] as? Int) == 0o600)
            let directory = try FileManager.default.attributesOfItem(atPath: setup.dataHome + "/hostscope")
            #expect((directory[.posixPermissions] as? Int) == 0o700)

            // The next chat offers them with ↑, newest first, and adds its own.
            let second = try setup.session()
            _ = try second.waitForScreen { Self.prompt($0) == "›" }
            try second.send("Up")
            _ = try second.waitForScreen { Self.prompt($0) == "› /tools" }
            try second.send("Up")
            _ = try second.waitForScreen { Self.prompt($0) == "› why is the disk full?" }
            try second.send("Up", " again", "Enter")
            _ = try second.waitForScreen { screen in
                screen.contains { $0.hasPrefix("mock-text · ") } && Self.prompt(screen) == "›"
            }
            try second.send("C-d")
            #expect(try second.waitForExit() == 0)
            #expect(try setup.history() == ["why is the disk full?", "/tools", "why is the disk full? again"])
            #expect(!(try String(contentsOfFile: setup.historyFile, encoding: .utf8)).contains("hunter2"))
        }
    }

    @Test func theHistoryFileKeepsTheLastThousandLines() async throws {
        try await Self.withSetup { setup in
            try FileManager.default.createDirectory(
                atPath: setup.dataHome + "/hostscope", withIntermediateDirectories: true)
            let old = (1...1500).map { "\"question \($0)\"" }.joined(separator: "\n") + "\n"
            try old.write(toFile: setup.historyFile, atomically: false, encoding: .utf8)
            chmod(setup.historyFile, 0o644)
            let session = try setup.session()
            _ = try session.waitForScreen { Self.prompt($0) == "›" }
            try session.send("Up")
            _ = try session.waitForScreen { Self.prompt($0) == "› question 1500" }
            try session.send("C-u", "C-d")
            #expect(try session.waitForExit() == 0)
            let kept = try setup.history()
            #expect(kept.count == 1000)
            #expect(kept.first == "question 501")
            #expect(kept.last == "question 1500")
            // A file others could read is the owner's alone again.
            let file = try FileManager.default.attributesOfItem(atPath: setup.historyFile)
            #expect((file[.posixPermissions] as? Int) == 0o600)
        }
    }

    @Test func tabCompletesASlashCommand() async throws {
        try await Self.withSetup { setup in
            let session = try setup.session(extra: ["--no-history"])
            _ = try session.waitForScreen { Self.prompt($0) == "›" }
            try session.send("/ses", "Tab")
            _ = try session.waitForScreen { Self.prompt($0) == "› /sessions" }
            try session.send("Enter")
            _ = try session.waitForScreen { $0.contains("conversations are not stored (--no-history)") }
            try session.send("C-d")
            #expect(try session.waitForExit() == 0)
            // --no-history writes no history file either.
            #expect(!FileManager.default.fileExists(atPath: setup.historyFile))
        }
    }

    @Test func aBracketedPasteOfThreeLinesReachesTheModelAsOneMessage() async throws {
        try await Self.withSetup { setup in
            let session = try setup.session()
            _ = try session.waitForScreen { Self.prompt($0) == "›" }
            try session.send("look at this: ")
            try session.tmux(["set-buffer", "line one\nline two\nline three"])
            // -p: as the terminal pastes, marked with ESC [200~ … ESC [201~ since the editor asked for it.
            try session.tmux(["paste-buffer", "-p", "-t", "0"])
            _ = try session.waitForScreen { $0.contains("› look at this: line one") && $0.contains("line three") }
            #expect(try setup.requests().isEmpty)
            try session.send("Enter")
            _ = try session.waitForScreen { screen in
                screen.contains { $0.hasPrefix("mock-text · ") } && Self.prompt(screen) == "›"
            }
            let requests = try setup.requests()
            #expect(requests.count == 1)
            let sent = requests.first?["body"]?["messages"]?.arrayValue?.last?["content"]?.stringValue
            #expect(sent == "look at this: line one\nline two\nline three")
            try session.send("C-d")
            #expect(try session.waitForExit() == 0)
            try Self.expectModeRestored(session)
        }
    }

    @Test func ctrlZSuspendsTheChatAndFgBringsTheLineBack() async throws {
        try await Self.withSetup { setup in
            let modes = setup.dataHome + "/mode"
            let chat = [
                CLI.binary, "chat", "--host", "local", "--provider", "openai", "--base-url", setup.mock.baseURL + "/v1",
                "--model", "mock-text", "--db", setup.dataHome + "/chat.sqlite",
            ].map(CLI.shellQuoted).joined(separator: " ")
            // An interactive bash, whose job control stops and continues the chat.
            let session = try TerminalSession(
                command: "PS1='$ ' bash --norc --noprofile -i", width: 120, height: 30,
                environment: ["OPENAI_API_KEY": ChatEditorTests.apiKey, "XDG_DATA_HOME": setup.dataHome])
            _ = try session.waitForScreen { $0.first == "$" }
            try session.send("stty -g > \(modes)-before; " + chat, "Enter")
            _ = try session.waitForScreen { Self.prompt($0) == "›" }
            try session.send("half typed", "C-z")
            _ = try session.waitForScreen {
                $0.contains { $0.hasPrefix("[1]+  Stopped") } && $0.last { !$0.isEmpty } == "$"
            }
            try session.send("fg", "Enter")
            _ = try session.waitForScreen { Self.prompt($0) == "› half typed" }
            try session.send(" question", "Enter")
            _ = try session.waitForScreen { screen in
                screen.contains { $0.hasPrefix("mock-text · ") } && Self.prompt(screen) == "›"
            }
            let sent = try setup.requests().last?["body"]?["messages"]?.arrayValue?.last?["content"]?.stringValue
            #expect(sent == "half typed question")
            try session.send("C-d")
            _ = try session.waitForScreen { $0.last { !$0.isEmpty } == "$" }
            try session.send("stty -g > \(modes)-after", "Enter")
            try await waitUntil("the mode after the chat written") {
                (try? String(contentsOfFile: modes + "-after", encoding: .utf8))?.hasSuffix("\n") == true
            }
            #expect(
                try String(contentsOfFile: modes + "-before", encoding: .utf8)
                    == String(contentsOfFile: modes + "-after", encoding: .utf8))
        }
    }

    @Test func ctrlCWhileAnAnswerStreamsStopsItAndTheEditorComesBack() async throws {
        try await Self.withSetup { setup in
            // A frame every 400 ms: the answer lasts 16 s, so Ctrl-C lands while it streams even on a busy machine.
            let session = try setup.session(model: "mock-slow", extra: ["--header", "X-Mock-Interval-Ms=400"])
            _ = try session.waitForScreen { Self.prompt($0) == "›" }
            try session.send("count slowly", "Enter")
            _ = try session.waitForScreen { $0.contains { $0.contains("word2") } }
            try session.send("C-c")
            _ = try session.waitForScreen { screen in
                screen.contains { $0.hasPrefix("(stopped; the answer so far is kept") } && Self.prompt(screen) == "›"
            }
            try session.send("Up")
            _ = try session.waitForScreen { Self.prompt($0) == "› count slowly" }
            try session.send("C-u", "/quit", "Enter")
            #expect(try session.waitForExit() == 0)
            try Self.expectModeRestored(session)
        }
    }

    @Test func linesTypedWhileAnAnswerStreamsRunAfterItAndAPasteThereIsOneMessage() async throws {
        try await Self.withSetup { setup in
            let session = try setup.session(model: "mock-slow")
            _ = try session.waitForScreen { Self.prompt($0) == "›" }
            try session.send("count slowly", "Enter")
            _ = try session.waitForScreen { $0.contains { $0.contains("word2") } }
            try session.tmux(["set-buffer", "first\nsecond"])
            try session.tmux(["paste-buffer", "-p", "-t", "0"])
            try session.send("Enter", "/model mock-text", "Enter")
            try await waitUntil(timeout: .seconds(60), "the pasted block sent after the slow answer") {
                try setup.requests().count == 2
            }
            let sent = try setup.requests().last?["body"]?["messages"]?.arrayValue?.last?["content"]?.stringValue
            #expect(sent == "first\nsecond")
            _ = try session.waitForScreen(timeout: 60) { screen in
                screen.contains { $0.contains("model: mock-text from the next question on") }
                    && Self.prompt(screen) == "›"
            }
            try session.send("C-d")
            #expect(try session.waitForExit() == 0)
            try Self.expectModeRestored(session)
        }
    }
}
