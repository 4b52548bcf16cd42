import Foundation
import OrderedJSON
import TestSupport
import Testing

@Suite(.serialized) struct SnapshotCommandTests {
    @Test func versionAndHelpPrint() throws {
        let version = try CLI.run(["--version"])
        #expect(version.status == 0)
        #expect(version.stdout.split(separator: ".").count == 3)
        let help = try CLI.run(["snapshot", "--help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("--format"))
        #expect(help.stdout.contains("--accept-new-host-key"))
    }

    @Test func noHostMeansThisMachineInTheSnapshotSchema() throws {
        let result = try CLI.run(["snapshot", "--format", "json"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty)
        let json = try JSONParser.parse(result.stdout)
        #expect(json["schema"] == "hostscope.snapshot/1")
        #expect(json["host"] == "local")
        let keys = json.objectValue?.keys ?? []
        #expect(
            keys == [
                "schema", "host", "collected_at", "collector", "duration_ms", "os", "uptime_seconds", "load", "cpu",
                "memory", "disks", "network", "processes", "warnings", "kernel",
            ])
        #expect(json["cpu"]?["busy_percent"]?.doubleValue != nil)
        #expect(json["kernel"]?["context_switches"]?.doubleValue != nil)
        #expect(json["kernel"]?["meminfo"]?["MemTotal_bytes"]?.doubleValue != nil)
        #expect(json["memory"]?["definition"] == "total-available")
        #expect(json["collected_at"]?.stringValue?.hasSuffix("Z") == true)
    }

    @Test func ndjsonPrintsOneRecordPerLineAndCSVAFixedHeader() throws {
        let ndjson = try CLI.run(["snapshot", "local", "local", "-o", "ndjson"])
        #expect(ndjson.status == 0)
        let lines = ndjson.stdout.split(separator: "\n")
        #expect(lines.count == 1, "a host named twice is collected once")
        #expect(try JSONParser.parse(String(lines[0]))["host"] == "local")

        let csv = try CLI.run(["snapshot", "-o", "csv"])
        #expect(csv.status == 0)
        let rows = csv.stdout.components(separatedBy: "\r\n").filter { !$0.isEmpty }
        #expect(rows.count == 2)
        #expect(rows[0].hasPrefix("timestamp,host,error,cpu.busy_percent,"))
        #expect(
            rows[1].split(separator: ",", omittingEmptySubsequences: false).count
                == rows[0].split(separator: ",").count)

        let long = try CLI.run(["snapshot", "-o", "csv", "--csv-layout", "long"])
        #expect(long.stdout.hasPrefix("timestamp,host,kind,device,metric,value\r\n"))
        #expect(long.stdout.contains(",disk,/,size_bytes,"))
    }

    /// Every figure field of `snapshot`'s and `watch`'s CSV, wide and long: a signed decimal with at most three
    /// decimals (duration_ms), two for every other float, and none for bytes and counts.
    @Test func csvFiguresOfSnapshotAndWatchKeepTheDecimalsTheirKindMeans() throws {
        func figures(_ header: [String], _ row: [String]) -> [(String, String)] {
            zip(header, row).filter { column, value in
                !value.isEmpty
                    && !["timestamp", "host", "error", "collector", "warnings", "error_message", "slot"]
                        .contains(column)
            }
        }
        func decimals(_ value: String) -> Int? {
            guard Double(value) != nil else { return nil }
            return value.split(separator: ".", omittingEmptySubsequences: false).dropFirst().first?.count ?? 0
        }
        let snapshot = try CLI.run(["snapshot", "-f", "csv"])
        let watch = try CLI.run(["watch", "local", "--every", "300ms", "--count", "2", "--no-history", "-f", "csv"])
        #expect(snapshot.status == 0 && watch.status == 0, "\(snapshot.stderr)\(watch.stderr)")
        for text in [snapshot.stdout, watch.stdout] {
            let rows = text.components(separatedBy: "\r\n").filter { !$0.isEmpty }.map {
                $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            }
            try #require(rows.count >= 2)
            for row in rows.dropFirst() {
                for (column, value) in figures(rows[0], row) {
                    let expected =
                        column == "duration_ms"
                        ? 3 : column.hasSuffix("_bytes") || column == "cpu.cores" ? 0 : 2
                    #expect(decimals(value) == expected, "\(column) = \(value)")
                }
            }
        }
        let long = try CLI.run(["snapshot", "-f", "csv", "--csv-layout", "long"])
        for line in long.stdout.components(separatedBy: "\r\n").dropFirst() where !line.isEmpty {
            let fields = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            let metric = fields[4]
            let expected = metric.hasSuffix("_percent") || metric.hasSuffix("_per_second") ? 2 : 0
            #expect(decimals(fields[5]) == expected, "\(line)")
        }
    }

    @Test func onAnEightyColumnTerminalTheTableWrapsNoLine() throws {
        let session = try TerminalSession(["snapshot", "local", "--top", "3"], width: 80, height: 60)
        #expect(try session.waitForExit() == 0)
        let screen = try session.screen()
        #expect(screen.contains { $0.hasPrefix("MOUNT ") && $0.contains("FILESYSTEM") && $0.hasSuffix("WRITE") })
        // tmux joins a wrapped line back with -J: none is wider than the terminal.
        let joined = try session.tmux(["capture-pane", "-p", "-J", "-t", "0"]).split(separator: "\n")
        #expect(joined.allSatisfy { $0.count <= 80 }, "\(joined.filter { $0.count > 80 })")
    }

    @Test func aTerminalTableIsTheDefaultOnlyOnATerminal() throws {
        // Piped, the default is JSON so that scripts get data.
        let piped = try CLI.run(["snapshot"])
        #expect(piped.stdout.hasPrefix("{"))
        let table = try CLI.run(["snapshot", "-o", "table"])
        #expect(table.stdout.hasPrefix("local  "))
        #expect(table.stdout.contains("MOUNT"))
        #expect(table.stdout.contains("COMMAND"))
    }

    @Test func aRemoteHostIsSnapshottedOverSSH() throws {
        let server = try SSHTestServer.shared()
        let result = try CLI.run(["snapshot", server.target, "-o", "json"] + CLI.harnessArguments(server))
        #expect(result.status == 0, "\(result.stderr)")
        let json = try JSONParser.parse(result.stdout)
        #expect(json["host"]?.stringValue == server.target)
        #expect(json["memory"]?["total_bytes"]?.int64Value != nil)
    }

    @Test func anSSHConfigAliasResolvesHostUserPortAndKey() throws {
        let server = try SSHTestServer.shared()
        let config = NSTemporaryDirectory() + "hostscope-cli-config-\(UUID().uuidString)"
        try server.configBlock("web1 other").write(toFile: config, atomically: true, encoding: .utf8)
        let result = try CLI.run(["snapshot", "web1", "-F", config, "-o", "json"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try JSONParser.parse(result.stdout)["host"] == "web1")
    }

    @Test func oneFailingHostDoesNotStopTheOthersAndSetsTheExitStatus() throws {
        let result = try CLI.run(["snapshot", "local", "no-such-host.invalid", "-o", "ndjson"])
        #expect(result.status == 3)
        let lines = result.stdout.split(separator: "\n").map { try? JSONParser.parse(String($0)) }
        #expect(lines.count == 2)
        #expect(lines[0]?["host"] == "local")
        #expect(lines[0]?["memory"] != nil)
        #expect(lines[1]?["error"]?["kind"] == "connect")
        let errorLines = result.stderr.split(separator: "\n")
        #expect(errorLines.count == 1)
        #expect(errorLines[0].contains("no-such-host.invalid"))
    }

    /// A name that does not resolve is traced to the ssh_config line whose HostName set it, in the file
    /// actually read (`-F`); a name typed as it is gets the general advice.
    @Test func anUnresolvableHostNameNamesTheConfigLineThatSetIt() throws {
        let config = NSTemporaryDirectory() + "hostscope-cli-resolve-\(UUID().uuidString)"
        try "# fleet\nHost db1\n    HostName db1.no-such-domain.invalid\n".write(
            toFile: config, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: config) }
        let configured = try CLI.run(["snapshot", "db1", "-F", config, "-o", "ndjson"])
        #expect(configured.status == 3)
        #expect(
            configured.stderr.contains(
                "db1: cannot resolve host name \"db1.no-such-domain.invalid\"")
                && configured.stderr.contains("; check HostName db1.no-such-domain.invalid at \(config) line 3"),
            "\(configured.stderr)")
        let typed = try CLI.run(["snapshot", "web9.no-such-domain.invalid", "-F", config, "-o", "ndjson"])
        #expect(typed.status == 3)
        // The advice names the file read, not the one -F replaced.
        #expect(typed.stderr.contains("check the name, or give it a HostName in \(config)"), "\(typed.stderr)")
        #expect(!typed.stderr.contains("~/.ssh/config"), "\(typed.stderr)")
    }

    @Test func aHostsFileIsReadAndSeveralHostsOnATerminalGetOneLineEach() throws {
        let file = NSTemporaryDirectory() + "hostscope-cli-hosts-\(UUID().uuidString)"
        // Nothing listens on port 1 of the loopback: that host fails at once.
        try "# fleet\nlocal   # this machine\n127.0.0.1:1\n".write(toFile: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: file) }
        let piped = try CLI.run(["snapshot", "--hosts-file", file, "-f", "ndjson", "--sample", "100ms"])
        #expect(piped.status == 3, "\(piped.stderr)")
        let hosts = try piped.stdout.split(separator: "\n").map { try JSONParser.parse(String($0))["host"] }
        #expect(hosts == ["local", "127.0.0.1:1"])

        let summary = try CLI.runOnTerminal(["snapshot", "--hosts-file", file, "--sample", "100ms"])
        let lines = summary.stdout.components(separatedBy: "\r\n")
        #expect(lines.first?.hasPrefix("HOST") == true, "\(summary.stdout)")
        #expect(lines.contains { $0.hasPrefix("local ") && $0.contains(" up ") }, "\(summary.stdout)")
        #expect(lines.contains { $0.hasPrefix("127.0.0.1:1 ") && $0.contains(" connect ") }, "\(summary.stdout)")
        #expect(!summary.stdout.contains("MOUNT"), "one line per host, no block: \(summary.stdout)")
        // The failure's whole sentence is below the table.
        #expect(summary.stdout.contains("127.0.0.1:1  ERROR (connect): "), "\(summary.stdout)")

        let long = try CLI.runOnTerminal(["snapshot", "--hosts-file", file, "--sample", "100ms", "--long"])
        #expect(long.stdout.contains("MOUNT"), "\(long.stdout)")
        #expect(!long.stdout.hasPrefix("HOST"))
    }

    @Test func anUnknownHostKeyExitsFiveAndSaysHowToAccept() throws {
        let server = try SSHTestServer.shared()
        let knownHosts = NSTemporaryDirectory() + "hostscope-cli-kh-\(UUID().uuidString)"
        let arguments = ["snapshot", server.target, "-i", server.keyPath, "--known-hosts", knownHosts, "-o", "json"]
        let refused = try CLI.run(arguments)
        #expect(refused.status == 5)
        #expect(refused.stderr.contains("--accept-new-host-key"))
        #expect(try JSONParser.parse(refused.stdout)["error"]?["kind"] == "host_key")

        let accepted = try CLI.run(arguments + ["--accept-new-host-key"])
        #expect(accepted.status == 0, "\(accepted.stderr)")
        let again = try CLI.run(arguments)
        #expect(again.status == 0, "\(again.stderr)")
    }

    @Test func aRejectedKeyExitsFour() throws {
        let server = try SSHTestServer.shared()
        let result = try CLI.run(
            ["snapshot", "nobody-\(getpid())@\(server.host):\(server.port)", "-o", "json"]
                + CLI.harnessArguments(server))
        #expect(result.status == 4)
        #expect(result.stderr.contains("authentication failed"))
    }

    @Test(.enabled(if: getuid() == 0, "a non-root sshd cannot check passwords"))
    func aPasswordFromAnEnvironmentVariableNeverReachesOutput() throws {
        let server = try SSHTestServer.shared()
        let password = try #require(server.password)
        let good = try CLI.run(
            [
                "snapshot", server.target, "--known-hosts", server.knownHostsPath, "--password-env", "HS_PW", "-o",
                "json",
                "-i", "/nonexistent",
            ],
            environment: ["HS_PW": password, "HOME": NSTemporaryDirectory()])
        #expect(good.status == 0, "\(good.stderr)")
        #expect(!good.stdout.contains(password) && !good.stderr.contains(password))

        let wrong = "Wrong-\(password)"
        let bad = try CLI.run(
            [
                "snapshot", server.target, "--known-hosts", server.knownHostsPath, "--password-env", "HS_PW", "-o",
                "json",
                "-i", "/nonexistent",
            ],
            environment: ["HS_PW": wrong, "HOME": NSTemporaryDirectory()])
        #expect(bad.status == 4)
        #expect(!bad.stdout.contains(wrong) && !bad.stderr.contains(wrong))
    }

    @Test func badOptionsGetOneSentenceAndAUsageStatus() throws {
        let port = try CLI.run(["snapshot", "--port", "70000"])
        #expect(port.status != 0)
        #expect(port.stderr.contains("70000"))
        let config = try CLI.run(["snapshot", "web1", "-F", "/nonexistent/config"])
        #expect(config.status == 64)
        #expect(config.stderr.contains("/nonexistent/config"))
        let sample = try CLI.run(["snapshot", "--sample", "soon"])
        #expect(sample.status != 0)
        #expect(sample.stderr.contains("sample"))
    }
}

@Suite struct ParseCommandTests {
    private var fixture: String { Repository.fixtures.appendingPathComponent("generated/debian12/free_b.txt").path }

    @Test func aCapturedFreeOutputBecomesTheMemorySection() throws {
        let result = try CLI.run(["parse", "free", fixture])
        #expect(result.status == 0, "\(result.stderr)")
        let json = try JSONParser.parse(result.stdout)
        #expect(json.objectValue?.keys.first == "memory")
        #expect(json["memory"]?["total_bytes"]?.int64Value ?? 0 > 0)
    }

    @Test func standardInputIsReadWithADash() throws {
        let text = try String(contentsOfFile: fixture, encoding: .utf8)
        let result = try CLI.run(["parse", "free", "-", "--compact"], stdin: text)
        #expect(result.status == 0)
        #expect(result.stdout.split(separator: "\n").count == 1)
    }

    @Test func theWrongToolSaysWhichToolTheTextLooksLike() throws {
        let df = Repository.fixtures.appendingPathComponent("generated/debian12/df_kP.txt").path
        let result = try CLI.run(["parse", "free", df])
        #expect(result.status != 0)
        #expect(result.stderr.contains("df"))
        #expect(result.stdout.isEmpty)
    }

    @Test func anUnknownToolAndAMissingFileAreClearErrors() throws {
        let tool = try CLI.run(["parse", "nosuchtool", fixture])
        #expect(tool.status == 64)
        #expect(tool.stderr.contains("unknown tool"))
        let file = try CLI.run(["parse", "free", "/nonexistent/file"])
        #expect(file.status == 1)
        #expect(file.stderr.contains("/nonexistent/file"))
    }
}

@Suite(.serialized) struct PasswordPromptTests {
    @Test(.enabled(if: getuid() == 0, "a non-root sshd cannot check passwords"))
    func aPasswordTypedAtTheTerminalPromptIsUsedAndNotEchoed() throws {
        let server = try SSHTestServer.shared()
        let password = try #require(server.password)
        // `script` gives hostscope a real terminal; the password is typed once the prompt is up.
        let command =
            "\(CLI.binary) snapshot \(server.target) --known-hosts \(server.knownHostsPath) -i /nonexistent -o ndjson"
        let result = try CLI.runShell(
            "(sleep 1; printf '%s\\n' \"$HS_PW\") | script -q -e -c '\(command)' /dev/null",
            environment: ["HS_PW": password, "HOME": NSTemporaryDirectory()])
        #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
        #expect(result.stdout.contains("\(server.user)@\(server.host)'s password: "))
        #expect(result.stdout.contains("\"schema\":\"hostscope.snapshot/1\""))
        #expect(!result.stdout.contains(password))
    }
}
