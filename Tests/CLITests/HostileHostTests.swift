import Foundation
import OrderedJSON
import TestSupport
import Testing

/// The built binary against a host that misbehaves (`Scripts/hostile_host_server.py`): probes that
/// never stop printing, print a 100 MB line, drip a byte a second, print NUL bytes, invalid UTF-8
/// and escapes, forge section markers, list hundreds of thousands more processes, exit half-way or
/// close without an exit status; and SFTP names holding newlines and escapes, a directory of a million entries and
/// a file that grows while it is read. Each run must end with a record or a sentence saying what
/// happened, within the output cap's memory (16 MiB per command, docs/ssh.md "Sessions"), and attribute
/// nothing to the wrong host, process or file.
@Suite(.serialized) struct HostileHostTests {
    static let password = "hostile-test-password"
    static let environment = ["HOSTSCOPE_HOSTILE_PASSWORD": password]

    /// hostscope's resident memory doing nothing much is about 45 MiB here; a command's output is capped
    /// at 16 MiB, and holding it, its text and the parse of it may take a few times that, never more.
    static let memoryBoundKiB = 45 * 1024 + 4 * 16 * 1024

    /// The server's address and the options reaching it: its password, a fresh known_hosts, an empty
    /// ssh_config.
    static func withHostileHost<T>(
        _ behavior: String, _ body: (_ host: String, _ connection: [String]) async throws -> T
    ) async throws -> T {
        try await withPythonServer("hostile_host_server.py", arguments: ["--behavior", behavior]) { server in
            let knownHosts = NSTemporaryDirectory() + "hostscope-hostile-host-known-hosts-\(UUID().uuidString)"
            defer { unlink(knownHosts) }
            let connection = [
                "--password-env", "HOSTSCOPE_HOSTILE_PASSWORD", "--known-hosts", knownHosts, "--accept-new-host-key",
                "--ssh-config", HostileTextTests.emptyConfig,
            ]
            return try await body("u@127.0.0.1:\(server.port)", connection)
        }
    }

    /// A run of the binary with its peak resident memory (from `Scripts/peak_rss.py`).
    struct MeasuredRun {
        var result: CLIResult
        var peakKiB: Int
        var seconds: Double
    }

    static func runMeasured(_ arguments: [String], timeout: TimeInterval = 120) throws -> MeasuredRun {
        let started = Date()
        let script = Repository.root.appendingPathComponent("Scripts/peak_rss.py").path
        let line = (["python3", script, CLI.binary] + arguments).map(CLI.shellQuoted).joined(separator: " ")
        var result = try CLI.runShell("timeout \(Int(timeout)) " + line, environment: environment)
        var lines = result.stderr.split(separator: "\n", omittingEmptySubsequences: false)
        while lines.last == "" { lines.removeLast() }
        let peak = lines.last.flatMap { $0.hasPrefix("peak_rss_kib=") ? Int($0.dropFirst(13)) : nil } ?? -1
        result.stderr = lines.dropLast().map { $0 + "\n" }.joined().replacingOccurrences(
            of: #"Warning: Permanently added '\[127.0.0.1\]:[0-9]+' \(ED25519\) to the list of known hosts.\n"#,
            with: "", options: .regularExpression)
        return MeasuredRun(result: result, peakKiB: peak, seconds: Date().timeIntervalSince(started))
    }

    static func record(_ run: MeasuredRun) throws -> JSONValue {
        try JSONParser.parse(run.result.stdout)
    }

    /// A probe that prints without end, or one line of 100 MB, stops at the output cap: an error record
    /// naming it, exit 6, and memory within the cap.
    @Test(arguments: ["forever", "big-line"])
    func aProbeThatPrintsPastTheOutputCapEndsInAnErrorRecordWithinBoundedMemory(_ behavior: String) async throws {
        try await Self.withHostileHost(behavior) { host, connection in
            let run = try Self.runMeasured(["snapshot", host, "--format", "json", "--timeout", "60s"] + connection)
            #expect(run.result.status == 6, "\(run.result.stderr)")
            #expect(
                run.result.stderr
                    == "hostscope: \(host): the probe printed more than the output limit; the host's process list may be huge\n"
            )
            let record = try Self.record(run)
            #expect(record["host"]?.stringValue == host)
            #expect(record["error"]?["kind"]?.stringValue == "command")
            #expect(run.peakKiB > 0 && run.peakKiB < Self.memoryBoundKiB, "peak RSS \(run.peakKiB) KiB")
        }
    }

    @Test func aProbeThatDripsAByteASecondTimesOut() async throws {
        try await Self.withHostileHost("drip") { host, connection in
            let run = try Self.runMeasured(["snapshot", host, "--format", "json", "--timeout", "3s"] + connection)
            #expect(run.result.status == 7, "\(run.result.stderr)")
            #expect(run.result.stderr == "hostscope: \(host): the command did not finish within 3 s; it was stopped\n")
            #expect(try Self.record(run)["error"]?["kind"]?.stringValue == "timeout")
            #expect(run.seconds < 20, "took \(run.seconds) s")
        }
    }

    /// NUL bytes, invalid UTF-8, OSC 52 and CSI in process names and command lines: the snapshot is read,
    /// JSON carries them escaped, and a terminal gets none of them raw.
    @Test func binaryBytesAndEscapesInProcessNamesAreReadAndShownEscaped() async throws {
        try await Self.withHostileHost("binary") { host, connection in
            let run = try Self.runMeasured(["snapshot", host, "--format", "json", "--top", "200"] + connection)
            #expect(run.result.status == 0, "\(run.result.stderr)")
            #expect(!run.result.stdout.contains("\u{1B}") && !run.result.stdout.contains("\u{0}"))
            let record = try Self.record(run)
            let commands =
                record["processes"].flatMap { value -> [String]? in
                    guard case .array(let processes) = value else { return nil }
                    return processes.compactMap { $0["command"]?.stringValue }
                } ?? []
            #expect(!commands.isEmpty)
            #expect(commands.contains { $0.contains("\u{1B}]52;c;aG9zdGlsZQ==\u{07}") }, "\(commands.prefix(3))")
            #expect(record["memory"]?["total_bytes"] != nil && record["disks"] != nil)

            let table = try CLI.runOnTerminal(["snapshot", host] + connection, environment: Self.environment)
            #expect(table.status == 0, "\(table.stdout)")
            #expect(HostileTextTests.holdsNoControls(table.stdout), "\(table.stdout)")
        }
    }

    /// Markers of other nonces in the middle of the process samples (a forged end, a forged df section
    /// naming `/forged`) end nothing and add nothing.
    @Test func forgedSectionMarkersEndNothingAndAddNothing() async throws {
        try await Self.withHostileHost("forged-markers") { host, connection in
            let run = try Self.runMeasured(["snapshot", host, "--format", "json"] + connection)
            #expect(run.result.status == 0, "\(run.result.stderr)")
            // The forged lines' own text, not the word: this machine's process list, which the loopback host
            // reports, holds the hostile server's command line (`--behavior forged-markers`).
            #expect(!run.result.stdout.contains("/forged") && !run.result.stdout.contains("@@"))
            let record = try Self.record(run)
            guard case .array(let disks)? = record["disks"], case .array(let processes)? = record["processes"] else {
                Issue.record("no disks or processes: \(run.result.stdout)")
                return
            }
            #expect(!disks.isEmpty && !processes.isEmpty)
        }
    }

    /// 400,000 more processes (100,000 where the host has no awk) take the probe's output past the cap: an
    /// error record saying so, within memory.
    @Test func hundredsOfThousandsOfProcessesEndInAnErrorRecordWithinBoundedMemory() async throws {
        try await Self.withHostileHost("processes") { host, connection in
            let run = try Self.runMeasured(["snapshot", host, "--format", "json"] + connection)
            #expect(run.result.status == 6, "\(run.result.stderr)")
            #expect(
                run.result.stderr.contains(
                    "the probe printed more than the output limit; the host's process list may be huge"))
            #expect(try Self.record(run)["error"]?["kind"]?.stringValue == "command")
            #expect(run.peakKiB > 0 && run.peakKiB < Self.memoryBoundKiB, "peak RSS \(run.peakKiB) KiB")
        }
    }

    @Test func aProbeCutHalfWayIsAParseErrorThatSaysSo() async throws {
        try await Self.withHostileHost("exit-half") { host, connection in
            let run = try Self.runMeasured(["snapshot", host, "--format", "json"] + connection)
            #expect(run.result.status == 6, "\(run.result.stderr)")
            #expect(
                run.result.stderr
                    == "hostscope: \(host): could not read the host's output: probe output: output ended early (no end "
                    + "marker): the host cut the command short\n")
            #expect(try Self.record(run)["error"]?["kind"]?.stringValue == "parse")
        }
    }

    /// The probe's own end marker says the output is whole, so a channel closed without an exit status
    /// loses nothing.
    @Test func aChannelClosedWithoutAnExitStatusAfterTheWholeOutputStillGivesTheSnapshot() async throws {
        try await Self.withHostileHost("no-exit-status") { host, connection in
            let run = try Self.runMeasured(["snapshot", host, "--format", "json"] + connection)
            #expect(run.result.status == 0, "\(run.result.stderr)")
            let record = try Self.record(run)
            #expect(record["error"] == nil && record["memory"]?["total_bytes"] != nil)
        }
    }

    /// One watch over a good host and a hostile one: each record names its own host, the good host's
    /// figures carry nothing of the hostile one's, and the hostile host's failure is its own error record.
    @Test(arguments: ["exit-half", "binary"])
    func aHostileHostInAWatchChangesNothingOfAnotherHost(_ behavior: String) async throws {
        let harness = try SSHTestServer.shared()
        try await Self.withHostileHost(behavior) { host, connection in
            // One known_hosts for both: the harness's key, and the hostile server's once accepted.
            let knownHosts = NSTemporaryDirectory() + "hostscope-hostile-watch-known-hosts-\(UUID().uuidString)"
            defer { unlink(knownHosts) }
            try FileManager.default.copyItem(atPath: harness.knownHostsPath, toPath: knownHosts)
            var options = connection
            options[options.firstIndex(of: "--known-hosts")! + 1] = knownHosts
            let run = try Self.runMeasured(
                [
                    "watch", harness.target, host, "--every", "1s", "--count", "1", "--format", "ndjson",
                    "--no-history",
                    "-i", harness.keyPath,
                ] + options)
            let records = try run.result.stdout.split(separator: "\n").map { try JSONParser.parse(String($0)) }
            try #require(records.count == 2, "\(run.result.stdout)\n\(run.result.stderr)")
            let good = try #require(records.first { $0["host"]?.stringValue == harness.target })
            let hostile = try #require(records.first { $0["host"]?.stringValue == host })
            // A watch writes a failed host as a record and goes on; it ends as it was asked to, with 0.
            #expect(run.result.status == 0, "\(run.result.stderr)")
            #expect(good["error"] == nil, "\(good)")
            #expect(!good.jsonString.contains("aG9zdGlsZQ"), "the good host's record holds the hostile text")
            if behavior == "exit-half" {
                #expect(hostile["error"]?["kind"]?.stringValue == "parse")
            } else {
                #expect(hostile["error"] == nil && hostile.jsonString.contains("aG9zdGlsZQ"))
            }
        }
    }

    /// Names holding a newline, a carriage return, escapes and invalid UTF-8: one line (or JSON object)
    /// per file, each name escaped, none raw on a terminal.
    @Test func sftpNamesWithNewlinesAndEscapesAreOneEntryEachAndShownEscaped() async throws {
        try await Self.withHostileHost("plain") { host, connection in
            let listing = try Self.runMeasured(["files", "ls", "sftp://\(host)/names"] + connection)
            #expect(listing.result.status == 0, "\(listing.result.stderr)")
            let lines = listing.result.stdout.split(separator: "\n")
            #expect(
                lines.sorted()
                    == [
                        #"\x1b[31mred\x1b[0m"#, #"\x1b]0;owned\x07title"#, #"\x1b]52;c;aG9zdGlsZQ==\x07clip"#,
                        #"carriage\rreturn"#, #"latin1-\xe9t\xe9"#, #"two\nlines"#,
                    ].sorted(), "\(lines)")

            let json = try Self.runMeasured(["files", "ls", "--json", "sftp://\(host)/names"] + connection)
            guard case .array(let entries) = try JSONParser.parse(json.result.stdout) else {
                Issue.record("no JSON array: \(json.result.stdout)")
                return
            }
            let names = Set(entries.compactMap { $0["name"]?.stringValue })
            #expect(names.contains("two\nlines") && names.contains("carriage\rreturn"))
            #expect(names.contains("\u{1B}]52;c;aG9zdGlsZQ==\u{07}clip"))
            #expect(entries.count == 6)

            let terminal = try CLI.runOnTerminal(
                ["files", "ls", "--long", "sftp://\(host)/names"] + connection, environment: Self.environment)
            #expect(HostileTextTests.holdsNoControls(terminal.stdout), "\(terminal.stdout)")
        }
    }

    /// A directory of a million entries lists whole and in order, in bounded memory.
    @Test func aDirectoryOfAMillionEntriesListsWithinBoundedMemory() async throws {
        try await Self.withHostileHost("plain") { host, connection in
            let run = try Self.runMeasured(["files", "ls", "sftp://\(host)/million"] + connection, timeout: 600)
            #expect(run.result.status == 0, "\(run.result.stderr)")
            let lines = run.result.stdout.split(separator: "\n")
            #expect(lines.count == 1_000_000)
            #expect(lines.first == "entry-0000000" && lines.last == "entry-0999999")
            #expect(run.peakKiB > 0 && run.peakKiB < Self.memoryBoundKiB, "peak RSS \(run.peakKiB) KiB")
        }
    }

    /// A file that grows each time it is looked at and never ends: a preview stops at its cap, a download
    /// at the size the file had when it was opened.
    @Test func aFileThatGrowsWhileItIsReadEndsAtItsSizeWhenOpened() async throws {
        try await Self.withHostileHost("plain") { host, connection in
            let preview = try Self.runMeasured(["files", "cat", "sftp://\(host)/growing.log"] + connection)
            #expect(preview.result.status == 0, "\(preview.result.stderr)")
            #expect(preview.result.stdout.utf8.count == 1 << 20)

            let directory = NSTemporaryDirectory() + "hostscope-growing-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let download = try Self.runMeasured(
                ["files", "get", "sftp://\(host)/growing.log", directory + "/growing.log"] + connection, timeout: 60)
            #expect(download.result.status == 0, "\(download.result.stderr)")
            let size = try FileManager.default.attributesOfItem(atPath: directory + "/growing.log")[.size] as? Int
            // The server grows the file by 1 MiB each time its size is asked for; hostscope asks twice.
            #expect(size.map { $0 > 0 && $0 <= 4 << 20 } == true, "downloaded \(String(describing: size)) bytes")
            #expect(download.peakKiB > 0 && download.peakKiB < Self.memoryBoundKiB)
        }
    }
}
