import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `hostscope top` on a real pseudo-terminal (tmux) at 80×24 and 160×45: keys in, screen out, and the terminal's
/// mode as it was after `q`, Ctrl-C and SIGTERM. A password prompt on the same terminal gives way to one Ctrl-C.
@Suite(.serialized, .timeLimit(.minutes(5))) struct TopCommandTests {
    static let sizes = [(80, 24), (160, 45)]

    @Test(arguments: sizes)
    func theFleetFillsTheTerminalAndQQuitsWithTheModeRestored(_ width: Int, _ height: Int) throws {
        let session = try TerminalSession(["top", "local", "--every", "500ms"], width: width, height: height)
        let screen = try session.waitForScreen { $0.first?.contains("1 up") ?? false }
        #expect(screen[0].hasPrefix("hostscope top · 1 host · 1 up · 0 failing · every 500ms"))
        let headings = screen[1].split(separator: " ")
        #expect(headings == ["HOST", "STATE", "CPU%", "cpu", "MEM%", "mem", "LOAD", "DISK%", "NET/s", "AGE"])
        #expect(screen[2].hasPrefix("> local "))
        #expect(screen[2].contains(" up "))
        #expect(screen[height - 1].hasPrefix("q quit"))
        #expect(screen.allSatisfy { $0.count <= width })
        try session.send("q")
        #expect(try session.waitForExit() == 0)
        let modes = try session.modes()
        #expect(modes.before == modes.after)
        // Back on the normal screen: the view's lines are gone with the alternate screen.
        #expect(!(try session.screen()).contains { $0.contains("hostscope top ·") })
    }

    @Test(arguments: sizes)
    func enterOpensTheHostsDetailAndEscGoesBack(_ width: Int, _ height: Int) throws {
        let session = try TerminalSession(["top", "local", "--every", "500ms"], width: width, height: height)
        _ = try session.waitForScreen { $0.first?.contains("1 up") ?? false }
        try session.send("Enter")
        // Whole screens only: a capture can fall in the middle of a redraw.
        let detail = try session.waitForScreen { lines in
            lines.contains { $0.hasPrefix("CPU ") } && lines[height - 1].hasPrefix("Esc back")
                && (height < 45 || lines.contains { $0.contains("COMMAND") })
        }
        #expect(detail[0].hasPrefix("local · "))
        #expect(detail.contains { $0.hasPrefix("Mem ") })
        #expect(detail.contains { $0.hasPrefix("MOUNT") && $0.contains("INODE%") })
        if height >= 45 {
            #expect(detail.contains { $0.hasPrefix("INTERFACE") && $0.contains("RX ERR") })
            #expect(detail.contains { $0.contains("PID") && $0.contains("COMMAND") })
        }
        #expect(detail[height - 1].hasPrefix("Esc back  s sort:cpu"))
        #expect(detail.allSatisfy { $0.count <= width })
        try session.send("s")
        _ = try session.waitForScreen { $0[height - 1].hasPrefix("Esc back  s sort:memory") }
        try session.send("Escape")
        _ = try session.waitForScreen { $0.first?.hasPrefix("hostscope top") ?? false }
        try session.send("/", "z", "z", "z", "Enter")
        _ = try session.waitForScreen { $0.contains { $0.contains("no host matches \"zzz\"") } }
        try session.send("C-c")
        #expect(try session.waitForExit() == 0)
        let modes = try session.modes()
        #expect(modes.before == modes.after)
    }

    @Test func aCountedWatchOnATerminalShowsTheFullScreenViewAndGivesTheTerminalBackWhenItEnds() throws {
        let session = try TerminalSession(
            ["watch", "local", "--every", "300ms", "--count", "4", "--no-history"], width: 80, height: 24)
        let screen = try session.waitForScreen { $0.first?.hasPrefix("hostscope watch · 1 host · 1 up") ?? false }
        #expect(screen[2].hasPrefix("> local "))
        #expect(try session.waitForExit() == 0)
        let modes = try session.modes()
        #expect(modes.before == modes.after)
    }

    @Test func sigtermEndsTheViewWithTheModeRestored() throws {
        let session = try TerminalSession(["top", "local", "--every", "500ms"], width: 80, height: 24)
        _ = try session.waitForScreen { $0.first?.contains("1 up") ?? false }
        let pid = try #require(try session.commandPID())
        kill(pid, SIGTERM)
        #expect(try session.waitForExit() == 0)
        let modes = try session.modes()
        #expect(modes.before == modes.after)
    }

    @Test func aFailingHostShowsItsErrorAndExpandsIt() throws {
        // Nothing listens on port 1 of the loopback. (A name that does not resolve is refused before top starts.)
        let session = try TerminalSession(
            ["top", "local", "127.0.0.1:1", "--every", "500ms"], width: 160, height: 45)
        let screen = try session.waitForScreen { $0.first?.contains("1 failing") ?? false }
        let row = try #require(screen.first { $0.contains("127.0.0.1:1") })
        #expect(row.contains("connect"))
        try session.send("Down", "e")
        let expanded = try session.waitForScreen { lines in
            lines.contains { $0.hasPrefix("    connect:") && $0.lowercased().contains("refused") }
        }
        #expect(expanded.allSatisfy { $0.count <= 160 })
        try session.send("q")
        #expect(try session.waitForExit() == 0)
    }

    /// The harness host with a rule that fires at once: its row is marked, the header counts it, `a` lists it with
    /// its summary and the host's detail names it.
    @Test func aHostWithAFiringAlertIsMarkedAndAListsTheAlert() throws {
        let server = try SSHTestServer.shared()
        let rules = try AlertTestRules.file(AlertTestRules.memoryInUse)
        defer { try? FileManager.default.removeItem(atPath: rules) }
        let session = try TerminalSession(
            ["top", server.target, "--every", "300ms", "--rules", rules] + CLI.harnessArguments(server), width: 160,
            height: 45)
        let screen = try session.waitForScreen { $0.first?.contains("1 firing") ?? false }
        // The target is longer than the name column: its start names it.
        #expect(screen[2].hasPrefix("> \(server.target.prefix(20))") && screen[2].contains(" up! "), "\(screen[2])")
        #expect(screen[44].contains("a alerts"))
        try session.send("a")
        let alerts = try session.waitForScreen { $0.first?.hasPrefix("Firing alerts · 1") ?? false }
        let row = try #require(alerts.first { $0.hasPrefix(server.target.prefix(20)) }, "\(alerts)")
        #expect(row.contains("MemoryInUse") && row.contains("info") && row.contains("memory at "), "\(row)")
        try session.send("Escape", "Enter")
        let detail = try session.waitForScreen { $0.contains { $0.hasPrefix("! MemoryInUse (info): memory at ") } }
        #expect(detail.allSatisfy { $0.count <= 160 })
        try session.send("q")
        #expect(try session.waitForExit() == 0)
    }

    /// Without a terminal, an alert that fires is a line of its own among the plain lines.
    @Test func withoutATerminalAFiringAlertIsALineOfItsOwn() throws {
        let server = try SSHTestServer.shared()
        let rules = try AlertTestRules.file(AlertTestRules.memoryInUse)
        defer { try? FileManager.default.removeItem(atPath: rules) }
        let arguments = (["top", server.target, "--every", "300ms", "--rules", rules] + CLI.harnessArguments(server))
            .map(CLI.shellQuoted).joined(separator: " ")
        let result = try CLI.runShell(
            "timeout 20 \(CLI.shellQuoted(CLI.binary)) \(arguments) </dev/null | grep -m1 '^alert '")
        #expect(
            result.stdout.hasPrefix("alert MemoryInUse (info) on \(server.target) firing [")
                && result.stdout.contains("]: memory at "), "\(result.stdout)\(result.stderr)")
    }

    @Test func withoutATerminalTopPrintsOnePlainLinePerTick() throws {
        // A second per tick gives the local probe 800 ms (80 % of it), which a busy or sanitized build keeps;
        // at 200 ms a slow probe became a timeout line.
        let result = try CLI.runShell(
            "timeout 20 \(CLI.shellQuoted(CLI.binary)) top local --every 1s </dev/null | head -2")
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == 2)
        #expect(
            lines.allSatisfy { $0.contains(" local cpu ") && $0.contains(" mem ") && !$0.contains("\u{1B}") },
            "\(lines)")
    }

    @Test func oneCtrlCCancelsAPasswordPromptAndTheModeIsRestored() throws {
        let server = try SSHTestServer.shared()
        let session = try TerminalSession(
            ["snapshot", server.target, "-i", server.encryptedKeyPath, "--known-hosts", server.knownHostsPath],
            width: 120, height: 30)
        _ = try session.waitForScreen { $0.contains { $0.contains("Enter passphrase for key") } }
        try session.send("C-c")
        let status = try session.waitForExit(timeout: 10)
        #expect(status != 0)
        let modes = try session.modes()
        #expect(modes.before == modes.after)
    }
}
