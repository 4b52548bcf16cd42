import HostscopeCore
import TerminalUI
import Testing

@Suite struct ChatInputTests {
    @Test func linesAreMessagesOrCommands() {
        #expect(ChatInput.parse("why is the disk full?") == .message("why is the disk full?"))
        #expect(ChatInput.parse("  ") == .empty)
        #expect(ChatInput.parse("/stop") == .stop)
        #expect(ChatInput.parse("/retry") == .retry)
        #expect(ChatInput.parse("/model gpt-4o") == .model("gpt-4o"))
        #expect(ChatInput.parse("/system Answer in one line.") == .system("Answer in one line."))
        #expect(ChatInput.parse("/system") == .system(nil))
        #expect(ChatInput.parse("/tools") == .tools)
        #expect(ChatInput.parse("/trace 3") == .trace("3"))
        #expect(ChatInput.parse("/trace 3fa2b1") == .trace("3fa2b1"))
        #expect(ChatInput.parse("/inspect 2") == .inspect(2))
        #expect(ChatInput.parse("/export md") == .export(format: .markdown, path: nil))
        #expect(ChatInput.parse("/export json /tmp/a b.json") == .export(format: .json, path: "/tmp/a b.json"))
        #expect(ChatInput.parse("/new") == .new)
        #expect(ChatInput.parse("/sessions") == .sessions)
        #expect(ChatInput.parse("/QUIT") == .quit)
        #expect(ChatInput.parse("/exit") == .quit)
        #expect(ChatInput.parse("//etc/fstab looks odd") == .message("/etc/fstab looks odd"))
    }

    @Test func commandsThatCannotBeUsedSayWhatToType() {
        for line in ["/model", "/inspect", "/inspect x", "/inspect 0", "/trace", "/export", "/export pdf", "/rm -rf"] {
            guard case .invalid(let message) = ChatInput.parse(line) else {
                Issue.record("\(line) was accepted")
                continue
            }
            #expect(message.contains("/"), "\(line)")
        }
    }

    @Test func tabOffersTheCommandsALineStartsAndTheExportFormats() {
        #expect(ChatInput.completions(for: "/s") == ["/stop", "/system", "/sessions"])
        #expect(ChatInput.completions(for: "/sess") == ["/sessions"])
        #expect(ChatInput.completions(for: "") == ChatInput.commandNames)
        #expect(ChatInput.completions(for: "/export ") == ["md", "json"])
        #expect(ChatInput.completions(for: "/export j") == ["json"])
        #expect(ChatInput.completions(for: "/export json /tmp/") == [])
        #expect(ChatInput.completions(for: "/zz") == [])
        #expect(ChatInput.completions(for: "why /se") == [])
        #expect(ChatInput.completions(for: "//se") == [])
        #expect(ChatInput.completions(for: "a pasted\n/se") == [])
    }

    @Test func everyCommandTabOffersIsOneTheParserKnows() {
        for name in ChatInput.commandNames {
            let parsed = ChatInput.parse(name + " 1")
            if case .invalid(let message) = parsed, message.hasPrefix("no command") {
                Issue.record("\(name) is offered but not known")
            }
            #expect(ChatInput.helpText.contains(name), "\(name) is missing from /help")
        }
    }
}
