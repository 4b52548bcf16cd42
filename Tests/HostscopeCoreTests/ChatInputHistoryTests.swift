import Foundation
import HostscopeCore
import Synchronization
import Testing
import ValueFormats

#if canImport(Glibc)
    import Glibc
#endif

/// The chat's input history against real files in a temporary data directory.
@Suite struct ChatInputHistoryTests {
    final class Remarks: Sendable {
        let lines = Lock<[String]>([])
        var diagnostics: Diagnostics {
            Diagnostics(
                warning: { line in self.lines.withLock { $0.append("warning: " + line) } },
                error: { line in self.lines.withLock { $0.append("error: " + line) } },
                note: { line in self.lines.withLock { $0.append("note: " + line) } })
        }
    }

    static func withDirectory(_ body: (String) throws -> Void) throws {
        let directory = NSTemporaryDirectory() + "hostscope-history-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try body(directory)
    }

    static func mode(_ path: String) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: path))?[.posixPermissions] as? Int
    }

    @Test func theFileLivesInTheDataDirectory() {
        #expect(
            ChatInputHistory.defaultPath(environment: ["XDG_DATA_HOME": "/srv/data", "HOME": "/home/me"])
                == "/srv/data/hostscope/chat-history")
        #expect(
            ChatInputHistory.defaultPath(environment: ["HOME": "/home/me"])
                == "/home/me/.local/share/hostscope/chat-history")
    }

    @Test func keptLinesAreAppendedToAPrivateFileAndReadBackByTheNextRun() throws {
        try Self.withDirectory { directory in
            let path = directory + "/hostscope/chat-history"
            var history = ChatInputHistory(path: path, persists: true, diagnostics: .silent)
            #expect(history.lines.isEmpty)
            let lines = [
                "first", "two\nlines", "two\nlines", " leading space", "   ", "password=hunter2",
                String(repeating: "x", count: ChatInputHistory.maximumLineBytes + 1),
            ]
            var kept: [Bool] = []
            for line in lines { kept.append(history.record(line)) }
            #expect(kept == [true, true, false, false, false, false, false])
            #expect(Self.mode(path) == 0o600)
            #expect(Self.mode(directory + "/hostscope") == 0o700)
            let next = ChatInputHistory(path: path, persists: true, diagnostics: .silent)
            #expect(next.lines == ["first", "two\nlines"])
        }
    }

    @Test func withoutPersistingNothingIsWrittenButEarlierLinesAreOffered() throws {
        try Self.withDirectory { directory in
            let path = directory + "/chat-history"
            var writer = ChatInputHistory(path: path, persists: true, diagnostics: .silent)
            writer.record("earlier")
            var reader = ChatInputHistory(path: path, persists: false, diagnostics: .silent)
            let kept = reader.record("now")
            #expect(kept)
            #expect(reader.lines == ["earlier", "now"])
            #expect(ChatInputHistory(path: path, persists: true, diagnostics: .silent).lines == ["earlier"])
        }
    }

    @Test func theFileKeepsTheLastLinesAcrossRunsAndInALongOne() throws {
        try Self.withDirectory { directory in
            let path = directory + "/chat-history"
            var history = ChatInputHistory(path: path, persists: true, limit: 10, diagnostics: .silent)
            for number in 1...25 { history.record("line \(number)") }
            #expect(history.lines == (16...25).map { "line \($0)" })
            let text = try String(contentsOfFile: path, encoding: .utf8)
            #expect(text.split(separator: "\n").count <= 11)
            let next = ChatInputHistory(path: path, persists: true, limit: 10, diagnostics: .silent)
            #expect(next.lines == (16...25).map { "line \($0)" })
        }
    }

    @Test func twoChatsAtOnceBothKeepTheirLines() throws {
        try Self.withDirectory { directory in
            let path = directory + "/chat-history"
            var one = ChatInputHistory(path: path, persists: true, diagnostics: .silent)
            var two = ChatInputHistory(path: path, persists: true, diagnostics: .silent)
            one.record("from one")
            two.record("from two")
            one.record("one again")
            #expect(
                ChatInputHistory(path: path, persists: true, diagnostics: .silent).lines == [
                    "from one", "from two", "one again",
                ])
        }
    }

    @Test func aFileOthersCanReadIsMadePrivateWithANote() throws {
        try Self.withDirectory { directory in
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let path = directory + "/chat-history"
            try "\"old\"\nnot json\n".write(toFile: path, atomically: false, encoding: .utf8)
            chmod(path, 0o644)
            let remarks = Remarks()
            let history = ChatInputHistory(path: path, persists: true, diagnostics: remarks.diagnostics)
            #expect(history.lines == ["old"])
            #expect(Self.mode(path) == 0o600)
            #expect(
                remarks.lines.withLock { $0 }.contains { $0.hasPrefix("note: the chat history") && $0.contains("0644") }
            )
        }
    }

    @Test func aFileThatCannotBeWrittenCostsTheHistoryWithOneWarning() throws {
        try Self.withDirectory { directory in
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            // A directory where the file should be: nothing can be appended to it.
            let path = directory + "/chat-history"
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            let remarks = Remarks()
            var history = ChatInputHistory(path: path, persists: true, diagnostics: remarks.diagnostics)
            let kept = [history.record("one"), history.record("two")]
            #expect(kept == [true, true])
            #expect(history.lines == ["one", "two"])
            let warnings = remarks.lines.withLock { $0 }.filter { $0.hasPrefix("warning:") }
            #expect(warnings.count == 1)
            #expect(warnings.first?.contains("lines typed in this chat are not kept") == true)
        }
    }
}
