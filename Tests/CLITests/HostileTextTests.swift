import Foundation
import HostStats
import HostscopeCore
import Storage
import TestSupport
import Testing

/// Text a host chooses (a keyboard-interactive prompt, the owner and group of an SFTP long
/// listing, output quoted in a parse error, a record's error message) never reaches the terminal
/// with its escape sequences: the built binary is run against a hostile SSH server
/// (`Scripts/hostile_ssh_server.py`) and fed hostile tool output.
@Suite struct HostileTextTests {
    /// The server's hostile text as hostscope must show it: OSC 52 (clipboard), OSC 0 (title), ESC[2J.
    static let escapedPrompt = #"\e]52;c;aG9zdGlsZQ==\x07\e]0;owned\x07\e[2JVerification code:"#
    static let rawPrompt = "\u{1B}]52;c;aG9zdGlsZQ==\u{07}\u{1B}]0;owned\u{07}\u{1B}[2JVerification code:"

    static let password = "hostile-test-password"
    static let environment = ["HOSTSCOPE_HOSTILE_PASSWORD": password]

    /// Runs `body` with a hostile server in `mode`, its `user@127.0.0.1:PORT`, and the options reaching it:
    /// its password, a fresh known_hosts, an empty ssh_config.
    static func withHostileServer(
        _ mode: String, _ body: (_ host: String, _ connection: [String]) throws -> Void
    ) async throws {
        try await withPythonServer("hostile_ssh_server.py", arguments: ["--mode", mode]) { server in
            let knownHosts = NSTemporaryDirectory() + "hostscope-hostile-known-hosts-\(UUID().uuidString)"
            defer { unlink(knownHosts) }
            let connection = [
                "--password-env", "HOSTSCOPE_HOSTILE_PASSWORD", "--known-hosts", knownHosts, "--accept-new-host-key",
                "--ssh-config", emptyConfig,
            ]
            try body("u@127.0.0.1:\(server.port)", connection)
        }
    }

    static let emptyConfig: String = {
        let path = NSTemporaryDirectory() + "hostscope-hostile-ssh-config-\(getpid())"
        FileManager.default.createFile(atPath: path, contents: Data())
        FilesTestTree.removeAtExit(path)
        return path
    }()

    /// No ESC, BEL or CSI byte: nothing a terminal would act on.
    static func holdsNoControls(_ text: String) -> Bool {
        !text.unicodeScalars.contains { $0 == "\u{1B}" || $0 == "\u{07}" || $0 == "\u{9B}" }
    }

    static func authFailure(host: String) -> String {
        "hostscope: \(host): authentication failed for user u — tried keyboard-interactive (the server asked \""
            + escapedPrompt
            + "\", which only a person can answer; use a key instead). Check the user name (--user), that your "
            + "public key is in the host's ~/.ssh/authorized_keys, or pass a key with --identity\n"
    }

    @Test func aKeyboardInteractivePromptIsShownEscapedInAuthenticationErrors() async throws {
        try await Self.withHostileServer("kbdint") { host, connection in

            let files = try CLI.run(
                ["files", "ls", "sftp://\(host)/"] + connection, environment: Self.environment)
            #expect(files.status == 4)
            // The first connection records the server's key and says so, as ssh does.
            let recorded =
                "Warning: Permanently added '[127.0.0.1]:\(host.split(separator: ":").last!)' (ED25519) "
                + "to the list of known hosts.\n"
            #expect(files.stderr == recorded + Self.authFailure(host: host))

            let snapshot = try CLI.run(
                ["snapshot", host, "--format", "json"] + connection, environment: Self.environment)
            #expect(snapshot.status == 4)
            #expect(snapshot.stderr == Self.authFailure(host: host))
            // JSON escapes the same text by construction, and reads back as the server sent it.
            #expect(snapshot.stdout.contains(#"\u001b]52;c;aG9zdGlsZQ==\u0007\u001b]0;owned\u0007\u001b[2J"#))
            #expect(Self.holdsNoControls(snapshot.stdout))

            // On a terminal: the error record's table row, once; stderr, on the same screen, does not repeat it.
            let table = try CLI.runOnTerminal(["snapshot", host] + connection, environment: Self.environment)
            let shown = table.stdout.replacingOccurrences(of: "\r\n", with: "\n")
            #expect(shown.hasPrefix("\(host)  ERROR (auth): \(host): authentication failed"), "\(shown)")
            #expect(!shown.contains(Self.authFailure(host: host)))
            #expect(shown.components(separatedBy: "authentication failed").count == 2)
            #expect(Self.holdsNoControls(shown), "\(shown)")
        }
    }

    @Test func csvKeepsAnErrorMessageExactInAPipeAndEscapesItOnATerminal() async throws {
        try await Self.withHostileServer("kbdint") { host, connection in
            let commands = [
                ["snapshot", host, "--format", "csv"],
                ["watch", host, "--format", "csv", "--count", "1", "--no-history"],
            ]
            for command in commands {
                let piped = try CLI.run(command + connection, environment: Self.environment)
                #expect(piped.stdout.contains(Self.rawPrompt), "\(command[0]): \(piped.stdout)")

                let terminal = try CLI.runOnTerminal(command + connection, environment: Self.environment)
                #expect(terminal.stdout.contains(Self.escapedPrompt), "\(command[0]): \(terminal.stdout)")
                // Rows still end as RFC 4180 says (the terminal shows CR LF as CR CR LF).
                #expect(terminal.stdout.contains("error_message,slot\r\r\n"), "\(command[0]): \(terminal.stdout)")
                #expect(Self.holdsNoControls(terminal.stdout), "\(command[0]): \(terminal.stdout)")
            }
        }
    }

    @Test func theOwnerAndGroupOfAnSFTPLongListingAreShownEscaped() async throws {
        try await Self.withHostileServer("sftp") { host, connection in
            let target = "sftp://\(host)/"
            let expected =
                #"-rw-r--r--  \e]52;c;aG9zdGlsZQ==\x07root \e]0;owned\x07\e[2Jstaff            6 2024-05-06T07:08:09Z notes.txt"#
                + "\n"

            let piped = try CLI.run(["files", "ls", "--long", target] + connection, environment: Self.environment)
            #expect(piped.status == 0, "\(piped.stderr)")
            #expect(piped.stdout == expected)

            let terminal = try CLI.runOnTerminal(
                ["files", "ls", "--long", target] + connection, environment: Self.environment)
            #expect(terminal.stdout.replacingOccurrences(of: "\r\n", with: "\n") == expected)
        }
    }

    @Test func parseErrorsQuotingHostileTextAreShownEscaped() throws {
        let hostile = "\u{1B}]52;c;aG9zdGlsZQ==\u{07}\u{1B}]0;owned\u{07}\u{1B}[2J"
        let escaped = #"\e]52;c;aG9zdGlsZQ==\x07\e]0;owned\x07\e[2J"#

        let ps = try CLI.run(["parse", "ps", "-"], stdin: "ps: \(hostile)unknown option\n")
        #expect(ps.status == 6)
        #expect(ps.stderr == "hostscope: ps output: ps failed: ps: \(escaped)unknown option\n")

        let uptime = try CLI.run(["parse", "uptime", "-"], stdin: " 10:00:00 up \(hostile)\n")
        #expect(uptime.status == 6)
        #expect(
            uptime.stderr
                == "hostscope: uptime output: neither a duration nor load averages in `10:00:00 up \(escaped)`\n")

        // A carriage return inside quoted text cannot return to the start of the line and overwrite it.
        let top = try CLI.run(["parse", "top", "-"], stdin: "top - 10:00:00 up 1 min\nKiB Mem : 1\r2 total, free\n")
        #expect(top.status == 6)
        #expect(top.stderr == #"hostscope: top output: `1\r2` before `total free` is not a size"# + "\n")
    }

    @Test func historyKeepsDataExactInAPipeAndEscapesItOnATerminal() async throws {
        let hostile = "\u{1B}]52;c;aG9zdGlsZQ==\u{07}\u{1B}[2J"
        let directory = NSTemporaryDirectory() + "hostscope-hostile-history-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/history.sqlite"
        let database = try await StorageDatabase.open(at: path)
        try await database.history.append([
            .snapshot(
                Snapshot(
                    host: "web1", collectedAt: Date(timeIntervalSince1970: 1_795_000_000), collector: "proc",
                    processes: [ProcessStats(pid: 7, command: "evil \(hostile)\u{9B}31m")],
                    warnings: ["df reported: \(hostile)"])),
            .failure(
                CollectionFailure(
                    host: "web1", collectedAt: Date(timeIntervalSince1970: 1_795_000_010), kind: .command,
                    message: "probe said \(hostile)")),
        ])
        try await database.close()

        let csv = try CLI.run(["history", "--db", path, "--format", "csv"])
        #expect(csv.status == 0, "\(csv.stderr)")
        #expect(csv.stdout.contains("df reported: \(hostile)"))
        let csvOnTerminal = try CLI.runOnTerminal(["history", "--db", path, "--format", "csv"])
        #expect(
            csvOnTerminal.stdout.contains(#"df reported: \e]52;c;aG9zdGlsZQ==\x07\e[2J"#), "\(csvOnTerminal.stdout)")
        #expect(Self.holdsNoControls(csvOnTerminal.stdout))

        // The summary table on a terminal shows the last error escaped.
        let table = try CLI.runOnTerminal(["history", "--db", path])
        #expect(table.stdout.contains(#"probe said \e]52;c;aG9zdGlsZQ==\x07\e[2J"#), "\(table.stdout)")
        #expect(Self.holdsNoControls(table.stdout))

        // JSON is the same bytes either way: every control character is a \u escape.
        let json = try CLI.run(["history", "--db", path, "--format", "ndjson"])
        #expect(json.stdout.contains(#"evil \u001b]52;c;aG9zdGlsZQ==\u0007\u001b[2J\u009b31m"#), "\(json.stdout)")
        #expect(Self.holdsNoControls(json.stdout))
        let jsonOnTerminal = try CLI.runOnTerminal(["history", "--db", path, "--format", "ndjson"])
        #expect(jsonOnTerminal.stdout.replacingOccurrences(of: "\r\n", with: "\n") == json.stdout)
    }
}
