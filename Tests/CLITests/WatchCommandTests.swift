import Foundation
import OrderedJSON
import Storage
import TestSupport
import Testing

/// Starts the built binary without waiting, for tests that signal it mid-run.
final class RunningCLI {
    let pid: pid_t
    private var exitStatus: Int32?

    /// Starts hostscope with `arguments`; with a `launcher` (`unshare … sh -c '…; exec "$@"'`), that
    /// command is started instead, hostscope's path and arguments after it.
    init(
        _ arguments: [String], stdout: String = "/dev/null", stderr: String = "/dev/null",
        environment: [String: String] = [:], launcher: [String] = []
    ) throws {
        var pid: pid_t = 0
        let command = launcher + [CLI.binary] + arguments
        var argv: [UnsafeMutablePointer<CChar>?] = command.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var variables = ProcessInfo.processInfo.environment
        variables.removeValue(forKey: "SSH_AUTH_SOCK")
        variables["XDG_DATA_HOME"] = CLI.dataHome
        variables.removeValue(forKey: "HOSTSCOPE_DB")
        for (key, value) in environment { variables[key] = value }
        var envp: [UnsafeMutablePointer<CChar>?] = variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { envp.forEach { free($0) } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard posix_spawn(&pid, command[0], &actions, nil, &argv, &envp) == 0 else {
            throw HarnessError(description: "cannot start hostscope")
        }
        self.pid = pid
    }

    func signal(_ number: Int32) {
        if exitStatus == nil { kill(pid, number) }
    }

    /// Whether the process has ended (its status is kept for ``wait()``).
    var hasExited: Bool {
        if exitStatus != nil { return true }
        var status: Int32 = 0
        guard waitpid(pid, &status, WNOHANG) == pid else { return false }
        exitStatus = Self.decode(status)
        return true
    }

    /// Waits for the process; returns its exit status, or 128 + signal.
    func wait() -> Int32 {
        if let exitStatus { return exitStatus }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        exitStatus = Self.decode(status)
        return exitStatus!
    }

    private static func decode(_ status: Int32) -> Int32 {
        (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
    }
}

@Suite(.serialized) struct WatchCommandTests {
    let directory: String

    init() throws {
        directory = NSTemporaryDirectory() + "hostscope-watch-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    private func lines(_ path: String, separator: String = "\n") -> [String] {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").components(separatedBy: separator).filter {
            !$0.isEmpty
        }
    }

    @Test func aCountedWatchWritesEveryFormatAndTheHistory() async throws {
        let server = try SSHTestServer.shared()
        let db = directory + "/h.sqlite"
        for format in ["csv", "json", "ndjson"] {
            let output = directory + "/fleet.\(format)"
            let result = try CLI.run(
                ["watch", "local", server.target, "--every", "300ms", "--count", "3", "-o", output, "--db", db]
                    + CLI.harnessArguments(server))
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.isEmpty, "piped, watch prints nothing but data")
            switch format {
            case "csv":
                let rows = lines(output, separator: "\r\n")
                #expect(rows.count == 7)
                #expect(rows[0].hasPrefix("timestamp,host,error,"))
            case "json":
                #expect(try JSONParser.parse(String(contentsOfFile: output, encoding: .utf8)).arrayValue?.count == 6)
            default:
                #expect(try lines(output).map { try JSONParser.parse($0)["schema"] }.count == 6)
            }
        }
        let history = try CLI.run(["history", "--db", db, "--format", "ndjson"])
        #expect(history.status == 0)
        #expect(history.stdout.split(separator: "\n").count == 18)
    }

    @Test func stdoutCarriesOnlyDataWhenPiped() throws {
        let result = try CLI.run([
            "watch", "local", "--every", "200ms", "--count", "2", "--no-history", "--format", "csv",
        ])
        #expect(result.status == 0)
        #expect(result.stderr.isEmpty)
        #expect(result.stdout.components(separatedBy: "\r\n").filter { !$0.isEmpty }.count == 3)
    }

    @Test func sigtermEndsCleanlyWithAValidJSONArray() async throws {
        let output = directory + "/fleet.json"
        let watch = try RunningCLI([
            "watch", "local", "--every", "200ms", "-o", output, "--db", directory + "/t.sqlite",
        ])
        try await waitUntil("three records in \(output)") {
            let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
            return text.components(separatedBy: "\"collected_at\"").count > 3
        }
        watch.signal(SIGTERM)
        #expect(watch.wait() == 0)
        let array = try JSONParser.parse(String(contentsOfFile: output, encoding: .utf8)).arrayValue ?? []
        #expect(array.count >= 3)
    }

    @Test func afterKillNineEveryLineIsWholeTheDatabaseIsIntactAndAResumeAppends() async throws {
        let csv = directory + "/fleet.csv"
        let ndjson = directory + "/fleet.ndjson"
        let db = directory + "/k.sqlite"
        let first = try RunningCLI(["watch", "local", "--every", "100ms", "-o", csv, "--db", db])
        let second = try RunningCLI(["watch", "local", "--every", "100ms", "-o", ndjson, "--no-history"])
        try await waitUntil("three records in each file and in the database") {
            guard lines(csv, separator: "\r\n").count > 3, lines(ndjson).count >= 3 else { return false }
            guard let database = try? await StorageDatabase.open(at: db, mode: .existingOnly) else { return false }
            let stored = (try? await database.history.count()) ?? 0
            try await database.close()
            return stored >= 3
        }
        first.signal(SIGKILL)
        second.signal(SIGKILL)
        #expect(first.wait() == 128 + SIGKILL)
        #expect(second.wait() == 128 + SIGKILL)

        let columns = lines(csv, separator: "\r\n").first?.split(separator: ",").count ?? 0
        let rows = lines(csv, separator: "\r\n")
        #expect(rows.count >= 3)
        // A cut row can only be the last one, and resuming removes it.
        for row in rows.dropLast() {
            #expect(row.split(separator: ",", omittingEmptySubsequences: false).count == columns)
        }
        for line in lines(ndjson).dropLast() { #expect((try? JSONParser.parse(line)) != nil) }

        let database = try await StorageDatabase.open(at: db, mode: .existingOnly)
        #expect(try await database.integrityCheck().isOK)
        let stored = try await database.history.count()
        try await database.close()
        #expect(stored >= 3)

        let resumed = try CLI.run(["watch", "local", "--every", "100ms", "--count", "2", "-o", csv, "--db", db])
        #expect(resumed.status == 0, "\(resumed.stderr)")
        let after = lines(csv, separator: "\r\n")
        #expect(after.filter { $0.hasPrefix("timestamp,") }.count == 1)
        for row in after { #expect(row.split(separator: ",", omittingEmptySubsequences: false).count == columns) }
        let resumedNDJSON = try CLI.run([
            "watch", "local", "--every", "100ms", "--count", "2", "-o", ndjson, "--no-history",
        ])
        #expect(resumedNDJSON.status == 0)
        for line in lines(ndjson) { #expect((try? JSONParser.parse(line)) != nil, "\(line.prefix(80))") }
    }

    @Test func aFullDiskStopsTheFileButTheDatabaseKeepsReceiving() async throws {
        let db = directory + "/full.sqlite"
        let result = try CLI.run([
            "watch", "local", "--every", "200ms", "--count", "3", "-o", "/dev/full", "--format", "csv", "--db", db,
        ])
        #expect(result.status == 1)
        let errors = result.stderr.split(separator: "\n")
        #expect(errors.count == 1)
        #expect(errors.first?.contains("disk is full") == true)
        let database = try await StorageDatabase.open(at: db, mode: .existingOnly)
        #expect(try await database.history.count() == 3)
        try await database.close()
    }

    /// The output file used to stay silent for the rest of the run once the disk had filled, even after
    /// space came back (found by the soak, docs/soak.md).
    @Test(.enabled(if: SmallFileSystem.available, "needs the right to mount a tmpfs"))
    func aFullDiskIsSaidOnceAndTheFileReceivesRecordsAgainOnceThereIsRoom() async throws {
        let volume = try SmallFileSystem(kilobytes: 256)
        defer { volume.unmount() }
        let csv = volume.file("fleet.csv")
        let db = directory + "/refilled.sqlite"
        let stderr = directory + "/refilled.stderr"
        let watch = try RunningCLI(
            ["watch", "local", "--every", "100ms", "--count", "70", "-o", csv, "--db", db], stderr: stderr)
        try await Task.sleep(for: .milliseconds(800))
        let ballast = volume.file("ballast")
        #expect(FileManager.default.createFile(atPath: ballast, contents: nil))
        let handle = try #require(FileHandle(forWritingAtPath: ballast))
        while (try? handle.write(contentsOf: Data(count: 4096))) != nil {}
        try handle.close()
        // Long enough for the rows to fill the free bytes of the file's last page and then fail.
        try await Task.sleep(for: .milliseconds(3000))
        try FileManager.default.removeItem(atPath: ballast)
        let freed = Date()
        // Missing records in the file make the run incomplete: status 1, as before.
        #expect(watch.wait() == 1)
        // Said once per spell of failures, and once when it ends. A disk at the edge can take a short
        // record after refusing a long one, so there may be more than one spell, each said whole.
        let said = lines(stderr)
        #expect(!said.isEmpty)
        for (index, line) in said.enumerated() {
            let expected = index.isMultiple(of: 2) ? "the disk is full" : "again"
            #expect(line.contains(expected), "\(said)")
        }
        #expect(said.count.isMultiple(of: 2), "the last spell has no end: \(said)")
        let rows = lines(csv, separator: "\r\n")
        let columns = rows.first?.split(separator: ",").count ?? 0
        for row in rows { #expect(row.split(separator: ",", omittingEmptySubsequences: false).count == columns) }
        let lastSlot = try #require(rows.last.flatMap { $0.split(separator: ",").last }.map(String.init))
        let stamps = ISO8601DateFormatter()
        stamps.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let last = try #require(stamps.date(from: lastSlot))
        #expect(last > freed, "no record in the file after the disk had room again")
        #expect(rows.count - 1 < 70, "no record was missed: the disk never filled")
        let database = try await StorageDatabase.open(at: db, mode: .existingOnly)
        #expect(try await database.history.count() == 70)
        try await database.close()
    }

    @Test func hostsComeFromAHostsFileWithComments() throws {
        let file = directory + "/hosts"
        try "# fleet\nlocal   # this machine\n\n".write(toFile: file, atomically: true, encoding: .utf8)
        let result = try CLI.run([
            "watch", "--hosts-file", file, "--every", "200ms", "--count", "1", "--no-history", "--format", "ndjson",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try JSONParser.parse(result.stdout.trimmingCharacters(in: .newlines))["host"] == "local")
    }

    @Test func severalOutputsEachGetEveryRecordInTheFormatOfTheirExtension() throws {
        let csv = directory + "/a.csv"
        let ndjson = directory + "/b.ndjson"
        let result = try CLI.run([
            "watch", "local", "--every", "200ms", "--count", "2", "--no-history", "-o", csv, "-o", ndjson,
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let rows = lines(csv, separator: "\r\n")
        #expect(rows.count == 3, "a header and two records in \(csv)")
        #expect(rows.first?.hasPrefix("timestamp,host,") == true)
        #expect(try lines(ndjson).map { try JSONParser.parse($0)["host"] } == ["local", "local"])

        let twice = try CLI.run(["watch", "local", "--no-history", "-o", csv, "-o", directory + "/./a.csv"])
        #expect(twice.status != 0)
        #expect(twice.stderr.contains("given twice"), "\(twice.stderr)")
        let formatted = try CLI.run(["watch", "local", "--no-history", "-o", csv, "-o", ndjson, "--format", "csv"])
        #expect(formatted.status != 0)
        #expect(formatted.stderr.contains("leave --format out"), "\(formatted.stderr)")
    }

    @Test func aStrayWordAmongTheHostsIsRefusedBeforeTheWatchStarts() throws {
        let config = directory + "/ssh_config"
        try "Host web1\n  HostName 127.0.0.1\n".write(toFile: config, atomically: true, encoding: .utf8)
        // `s` was meant as the unit of --every; no name `s` resolves here.
        let stray = try CLI.run(["watch", "web1", "--every", "2", "s", "-F", config, "--no-history", "--count", "1"])
        #expect(stray.status != 0)
        #expect(stray.stderr.contains("host s does not resolve"), "\(stray.stderr)")
        #expect(stray.stdout.isEmpty)
        let misspelt = try CLI.run(["watch", "web", "-F", config, "--no-history", "--count", "1"])
        #expect(misspelt.status != 0)
        #expect(misspelt.stderr.contains("Did you mean web1?"), "\(misspelt.stderr)")
        // The file read is the one named, not ~/.ssh/config.
        #expect(misspelt.stderr.contains("it is no \(config) alias"), "\(misspelt.stderr)")
    }

    @Test func aHostFailingEveryTickIsSaidOnStderrOncePerChangeOfState() throws {
        // Nothing listens on port 1 of the loopback: every tick fails the same way.
        let result = try CLI.run([
            "watch", "local", "127.0.0.1:1", "--every", "200ms", "--count", "3", "--no-history", "--format", "ndjson",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.split(separator: "\n").count == 6)
        let notices = result.stderr.split(separator: "\n").filter { $0.contains("127.0.0.1:1") }
        #expect(notices.count == 1, "\(result.stderr)")
        #expect(notices.first?.contains("failed (connect)") == true, "\(result.stderr)")
    }

    @Test func badInvocationsGetOneSentence() throws {
        let none = try CLI.run(["watch", "--no-history"])
        #expect(none.status == 64)
        #expect(none.stderr.contains("no hosts to watch"))
        let both = try CLI.run(["watch", "local", "--count", "2", "--for", "1m"])
        #expect(both.status != 0)
        #expect(both.stderr.contains("--count and --for"))
        let unknown = try CLI.run(["watch", "local", "-o", directory + "/out.txt", "--no-history"])
        #expect(unknown.status == 64)
        #expect(unknown.stderr.contains("--format"))
        let missing = try CLI.run(["watch", "--hosts-file", "/nonexistent/hosts"])
        #expect(missing.status == 64)
        #expect(missing.stderr.contains("/nonexistent/hosts"))
    }

    @Test func onADumbTerminalWatchShowsALiveStatusPerHost() throws {
        let command = "\(CLI.binary) watch local --every 200ms --count 3 --no-history"
        let result = try CLI.runShell("script -q -e -c '\(command)' /dev/null", environment: ["TERM": "dumb"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("watching 1 host"))
        #expect(result.stdout.contains("local"))
        #expect(result.stdout.contains("ticks 3"))
        #expect(!result.stdout.contains("\"schema\""))
    }
}
