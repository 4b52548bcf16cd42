import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The completion scripts of `hostscope --generate-completion-script`, the bash one for real: an interactive bash on
/// a pseudo-terminal (tmux) sources it and `Tab` is pressed, against the harness sshd for remote paths.
@Suite(.serialized, .timeLimit(.minutes(5))) struct ShellCompletionTests {
    /// A directory on the harness host (this machine) with names to complete, and a config naming the host `web1`.
    struct Setup {
        let directory: String
        let config: String
        let server: SSHTestServer

        init() throws {
            server = try SSHTestServer.shared()
            directory = NSTemporaryDirectory() + "hostscope-complete-\(UUID().uuidString)"
            let tree = directory + "/tree"
            for path in ["tree/alpha-logs/nested", "tree/beta"] {
                try FileManager.default.createDirectory(
                    atPath: directory + "/" + path, withIntermediateDirectories: true)
            }
            for file in ["alpha-notes.txt", ".hidden-alpha"] {
                try "x\n".write(toFile: tree + "/" + file, atomically: false, encoding: .utf8)
            }
            for path in [directory, tree, tree + "/alpha-logs", tree + "/alpha-logs/nested", tree + "/beta"] {
                chmod(path, 0o755)
            }
            config = directory + "/ssh_config"
            try [
                server.configBlock("web1 webstore"),
                server.configBlock("locked", identity: directory + "/no-such-key"),
                server.configBlock(
                    "fresh", knownHosts: directory + "/fresh_known_hosts", extra: ["StrictHostKeyChecking accept-new"]),
                "Host *.internal\n    User nobody\n",
            ].joined().write(toFile: config, atomically: true, encoding: .utf8)
            let script = try CLI.run(["--generate-completion-script", "bash"])
            try script.stdout.write(toFile: directory + "/hostscope.bash", atomically: true, encoding: .utf8)
            try """
            export PATH=\(CLI.shellQuoted((CLI.binary as NSString).deletingLastPathComponent)):$PATH
            PS1='$ '
            source \(CLI.shellQuoted(directory + "/hostscope.bash"))

            """.write(toFile: directory + "/bashrc", atomically: true, encoding: .utf8)
        }

        func remove() {
            try? FileManager.default.removeItem(atPath: directory)
        }

        /// An interactive bash with the script sourced, at its prompt.
        func bash() throws -> TerminalSession {
            let session = try TerminalSession(
                command: "bash --noprofile --rcfile \(CLI.shellQuoted(directory + "/bashrc")) -i", width: 200,
                height: 30)
            _ = try session.waitForScreen { $0.first == "$" }
            return session
        }
    }

    /// The line at the prompt once it shows `expected`.
    static func waitForLine(_ session: TerminalSession, _ expected: String) throws {
        _ = try session.waitForScreen { $0.first == "$ " + expected }
    }

    @Test func bashCompletesHostsFromTheConfigFileOnTheLine() throws {
        let setup = try Setup()
        defer { setup.remove() }
        let session = try setup.bash()
        try session.send("hostscope snapshot -F \(setup.config) webs", "Tab")
        try Self.waitForLine(session, "hostscope snapshot -F \(setup.config) webstore")
        try session.send("C-u", "hostscope snapshot -F \(setup.config) we", "Tab")
        try Self.waitForLine(session, "hostscope snapshot -F \(setup.config) web")
        // Ambiguous: two more Tabs list them, as readline does.
        try session.send("Tab", "Tab")
        let screen = try session.waitForScreen { $0.contains { $0.contains("web1") && $0.contains("webstore") } }
        // Patterns are no hosts to name.
        #expect(!screen.contains { $0.contains("*.internal") })
        try session.send("C-u", "C-l", "hostscope chat -F \(setup.config) --host webs", "Tab")
        try Self.waitForLine(session, "hostscope chat -F \(setup.config) --host webstore")
    }

    @Test func bashCompletesRemotePathsOverSFTP() throws {
        let setup = try Setup()
        defer { setup.remove() }
        let session = try setup.bash()
        let line = "hostscope files ls -F \(setup.config) "
        try session.send(line + "web", "Tab")
        try Self.waitForLine(session, line + "web")
        try session.send("1", "Tab")
        try Self.waitForLine(session, line + "web1:")
        try session.send(setup.directory + "/tree/al", "Tab")
        try Self.waitForLine(session, line + "web1:\(setup.directory)/tree/alpha-")
        try session.send("l", "Tab")
        try Self.waitForLine(session, line + "web1:\(setup.directory)/tree/alpha-logs/")
        try session.send("Tab")
        try Self.waitForLine(session, line + "web1:\(setup.directory)/tree/alpha-logs/nested/")
        // Hidden names only when the name typed starts with a dot.
        try session.send("C-u", line + "web1:\(setup.directory)/tree/.h", "Tab")
        try Self.waitForLine(session, line + "web1:\(setup.directory)/tree/.hidden-alpha")
        // The completed line runs.
        try session.send("C-u", line + "web1:\(setup.directory)/tree/b", "Tab")
        try Self.waitForLine(session, line + "web1:\(setup.directory)/tree/beta/")
        try session.send("Enter")
        _ = try session.waitForScreen { $0.last { !$0.isEmpty } == "$" }
    }

    @Test func aHostThatCannotBeReachedOffersNothingQuicklyAndSilently() throws {
        let setup = try Setup()
        defer { setup.remove() }
        let session = try setup.bash()
        let line = "hostscope files ls -F \(setup.config) "
        let started = ContinuousClock.now
        // A host whose key cannot be read (its password is never asked for), one whose host key is not known yet
        // (completion records none, whatever StrictHostKeyChecking says) and a name that does not resolve.
        try "".write(toFile: setup.directory + "/fresh_known_hosts", atomically: false, encoding: .utf8)
        for host in ["locked", "fresh", "unknown.internal"] {
            try session.send("C-u", "C-l", line + host + ":/t", "Tab", "x")
            try Self.waitForLine(session, line + host + ":/tx")
            #expect(try session.screen().filter { !$0.isEmpty }.count == 1)
        }
        #expect(ContinuousClock.now - started < .seconds(20))
        #expect(try String(contentsOfFile: setup.directory + "/fresh_known_hosts", encoding: .utf8).isEmpty)
    }

    @Test func zshAndFishScriptsAreGeneratedWithTheirHostPathHandling() throws {
        let zsh = try CLI.run(["--generate-completion-script", "zsh"])
        #expect(zsh.status == 0)
        #expect(zsh.stdout.hasPrefix("#compdef hostscope"))
        // The call that leaves no space after a directory or a host was put in place of the generated one.
        #expect(zsh.stdout.contains("_describe -V '' closed_completions -- open_completions -S ''"))
        let fish = try CLI.run(["--generate-completion-script", "fish"])
        #expect(fish.status == 0)
        #expect(fish.stdout.contains("complete -c 'hostscope'"))
        let bash = try CLI.run(["--generate-completion-script=bash"])
        #expect(bash.stdout.contains("complete -o filenames -F _hostscope_whole_words hostscope"))
        let bad = try CLI.run(["--generate-completion-script", "tcsh"])
        #expect(bad.status != 0)
        #expect(!bad.stderr.isEmpty)
    }
}
