import Foundation
import HostStats
import HostscopeCore
import OrderedJSON
import Storage
import TestSupport
import Testing
import ValueFormats

@Suite struct HistoryCommandTests {
    /// A database in a fresh temp directory, filled through the Storage API as `watch` fills it.
    struct Fixture {
        let directory: String
        let path: String
        let records: [SnapshotRecord]

        init(records: [SnapshotRecord]) async throws {
            directory = NSTemporaryDirectory() + "hostscope-history-\(UUID().uuidString)"
            path = directory + "/data/hostscope/hostscope.sqlite"
            self.records = records
            let database = try await StorageDatabase.open(at: path)
            try await database.history.append(records)
            try await database.close()
        }

        func remove() { try? FileManager.default.removeItem(atPath: directory) }
    }

    static let start = Date(timeIntervalSince1970: 1_795_000_000)

    static func snapshot(_ host: String, at seconds: Double, busy: Double) -> SnapshotRecord {
        .snapshot(
            Snapshot(
                host: host, collectedAt: start.addingTimeInterval(seconds), collector: "proc", durationMs: 3.5,
                load: LoadAverage(one: 0.5, five: 0.25, fifteen: 0.125),
                cpu: CPUStats(cores: 2, busyPercent: busy, idlePercent: 100 - busy),
                memory: MemoryStats(totalBytes: 1_000, usedBytes: 250, usedPercent: 25),
                disks: [DiskStats(filesystem: "/dev/vda1", type: "ext4", mount: "/", sizeBytes: 100, usedBytes: 10)],
                network: [NetworkInterfaceStats(interface: "eth0", rxBytes: 7, txBytes: 9)],
                warnings: ["comma, and \"quote\""]))
    }

    static func failure(_ host: String, at seconds: Double) -> SnapshotRecord {
        .failure(
            CollectionFailure(
                host: host, collectedAt: start.addingTimeInterval(seconds), kind: .connect,
                message: "cannot connect to \(host): connection refused"))
    }

    static func stamp(_ seconds: Double) -> String { RFC3339.format(start.addingTimeInterval(seconds)) }

    /// web1 and web2 every 10 s from 0 to 50 s, web2 failing at 30 s, and db-1 at 25 s.
    static func fleet() async throws -> Fixture {
        var records: [SnapshotRecord] = []
        for tick in 0..<6 {
            let seconds = Double(tick * 10)
            records.append(snapshot("web1", at: seconds, busy: Double(tick) + 0.5))
            records.append(tick == 3 ? failure("web2", at: seconds) : snapshot("web2", at: seconds, busy: 50))
        }
        records.append(snapshot("db-1", at: 25, busy: 99.25))
        return try await Fixture(records: records)
    }

    @Test func ndjsonPrintsTheStoredObjectsOfOneHostInTimeOrder() async throws {
        let fixture = try await Self.fleet()
        defer { fixture.remove() }
        let result = try CLI.run(["history", "web2", "--db", fixture.path, "--format", "ndjson"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty)
        let expected = fixture.records.filter { $0.host == "web2" }.map { $0.jsonValue.jsonString + "\n" }.joined()
        #expect(result.stdout == expected)
        #expect(
            result.stdout.contains(
                #""error":{"kind":"connect","message":"cannot connect to web2: connection refused"}"#))
    }

    @Test func sinceAndUntilTakeRFC3339TimesAndIncludeBothEnds() async throws {
        let fixture = try await Self.fleet()
        defer { fixture.remove() }
        let result = try CLI.run([
            "history", "web1", "--db", fixture.path, "-o", "ndjson", "--since", Self.stamp(10), "--until",
            Self.stamp(30),
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let stamps = try result.stdout.split(separator: "\n").map { try JSONParser.parse(String($0))["collected_at"] }
        #expect(stamps == [10, 20, 30].map { .string(Self.stamp($0)) })
        // A time with an offset names the same instant: 13:07:00+02:00 is the 20 s tick (11:07:00Z).
        #expect(Self.stamp(20) == "2026-11-18T11:07:00.000Z")
        let offset = try CLI.run([
            "history", "web1", "--db", fixture.path, "-o", "ndjson", "--since", "2026-11-18T13:07:00+02:00",
            "--until", "2026-11-18T13:07:00+02:00",
        ])
        #expect(offset.status == 0, "\(offset.stderr)")
        #expect(
            try offset.stdout.split(separator: "\n").map { try JSONParser.parse(String($0))["collected_at"] }
                == [.string(Self.stamp(20))])
    }

    @Test func sinceTakesADurationBackFromNow() async throws {
        let now = Date()
        let records = [-3.0 * 3600, -1.0 * 3600, -60].map { offset in
            Self.snapshot("web1", at: now.timeIntervalSince(Self.start) + offset, busy: 1)
        }
        let fixture = try await Fixture(records: records)
        defer { fixture.remove() }
        let recent = try CLI.run(["history", "web1", "--db", fixture.path, "-o", "ndjson", "--since", "2h"])
        #expect(recent.status == 0, "\(recent.stderr)")
        #expect(recent.stdout.split(separator: "\n").count == 2)
        let older = try CLI.run(["history", "web1", "--db", fixture.path, "-o", "ndjson", "--until", "30m"])
        #expect(older.stdout.split(separator: "\n").count == 2)
        let window = try CLI.run(["history", "--db", fixture.path, "-o", "ndjson", "--since", "2h", "--until", "30m"])
        #expect(window.stdout.split(separator: "\n").count == 1)
    }

    @Test func jsonIsOnePrettyArrayOfTheSameObjects() async throws {
        let fixture = try await Self.fleet()
        defer { fixture.remove() }
        let result = try CLI.run(["history", "web1", "--db", fixture.path, "--format", "json"])
        #expect(result.status == 0, "\(result.stderr)")
        let values = fixture.records.filter { $0.host == "web1" }.map(\.jsonValue)
        #expect(result.stdout == JSONValue.array(values).prettyJSONString + "\n")
        #expect(try JSONParser.parse(result.stdout).arrayValue?.count == 6)

        let empty = try CLI.run(["history", "web1", "--db", fixture.path, "-o", "json", "--since", Self.stamp(1000)])
        #expect(empty.status == 0)
        #expect(empty.stdout == "[]\n")
    }

    @Test func csvHasTheSnapshotColumnsAndAnErrorRowForAFailedTick() async throws {
        let fixture = try await Self.fleet()
        defer { fixture.remove() }
        let wide = try CLI.run(["history", "web2", "--db", fixture.path])
        #expect(wide.status == 0, "\(wide.stderr)")
        let web2 = fixture.records.filter { $0.host == "web2" }
        #expect(wide.stdout == SnapshotCSV.wideHeader + web2.map(SnapshotCSV.wideRow).joined())
        let rows = wide.stdout.components(separatedBy: "\r\n").filter { !$0.isEmpty }
        #expect(rows.count == 7)
        #expect(rows[4].hasPrefix("\(Self.stamp(30)),web2,connect,"))
        #expect(rows[1].contains(#""comma, and ""quote""""#))

        let long = try CLI.run(["history", "db-1", "--db", fixture.path, "--csv-layout", "long"])
        #expect(long.stdout.hasPrefix(SnapshotCSV.longHeader))
        #expect(long.stdout.contains("\(Self.stamp(25)),db-1,disk,/,size_bytes,100\r\n"))
        #expect(long.stdout.contains("\(Self.stamp(25)),db-1,network,eth0,rx_bytes,7\r\n"))
    }

    @Test func allOrNoHostPrintsEveryHostAndAGlobSelectsSome() async throws {
        let fixture = try await Self.fleet()
        defer { fixture.remove() }
        let everything = try CLI.run(["history", "--db", fixture.path, "-o", "ndjson"])
        #expect(everything.status == 0, "\(everything.stderr)")
        #expect(everything.stdout.split(separator: "\n").count == fixture.records.count)
        let all = try CLI.run(["history", "all", "--db", fixture.path, "-o", "ndjson"])
        #expect(all.stdout == everything.stdout)
        let hosts = try everything.stdout.split(separator: "\n").map { try JSONParser.parse(String($0)) }
        let times = hosts.compactMap { $0["collected_at"]?.stringValue }
        #expect(times == times.sorted(), "oldest first across hosts")
        #expect(hosts[6]["host"] == "db-1", "db-1 at 25 s falls between the 20 s and 30 s ticks")

        let web = try CLI.run(["history", "web*", "--db", fixture.path, "-o", "ndjson"])
        #expect(web.stdout.split(separator: "\n").count == 12)
        #expect(!web.stdout.contains("db-1"))
    }

    @Test func anUnknownHostIsAnErrorThatListsTheKnownOnes() async throws {
        let fixture = try await Self.fleet()
        defer { fixture.remove() }
        let result = try CLI.run(["history", "web9", "--db", fixture.path])
        #expect(result.status == 1)
        #expect(result.stdout.isEmpty)
        #expect(
            result.stderr == "hostscope: no history for web9 at \(fixture.path); hosts with history: db-1, web1, web2\n"
        )
        let pattern = try CLI.run(["history", "mail-*", "--db", fixture.path])
        #expect(pattern.status == 1)
        #expect(pattern.stderr.hasPrefix("hostscope: no host matching 'mail-*' at \(fixture.path)"))
    }

    @Test func aMissingDatabaseSaysToRunWatchFirst() throws {
        let path = NSTemporaryDirectory() + "hostscope-none-\(UUID().uuidString)/hostscope.sqlite"
        let result = try CLI.run(["history", "web1", "--db", path])
        #expect(result.status == 1)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr == "hostscope: no history yet at \(path): run `hostscope watch` first\n")
        #expect(!FileManager.default.fileExists(atPath: path), "reading never creates a database")
    }

    @Test func theDatabaseComesFromHOSTSCOPE_DBOrTheXDGDataDirectory() async throws {
        let fixture = try await Self.fleet()
        defer { fixture.remove() }
        let fromVariable = try CLI.run(
            ["history", "db-1", "-o", "ndjson"], environment: ["HOSTSCOPE_DB": fixture.path])
        #expect(fromVariable.status == 0, "\(fromVariable.stderr)")
        #expect(fromVariable.stdout.split(separator: "\n").count == 1)
        // The fixture lives at <dir>/data/hostscope/hostscope.sqlite, which is where XDG_DATA_HOME=<dir>/data points.
        let fromXDG = try CLI.run(
            ["history", "db-1", "-o", "ndjson"], environment: ["XDG_DATA_HOME": fixture.directory + "/data"])
        #expect(fromXDG.status == 0, "\(fromXDG.stderr)")
        #expect(fromXDG.stdout == fromVariable.stdout)
        let overridden = try CLI.run(
            ["history", "db-1", "--db", fixture.directory + "/other.sqlite"],
            environment: ["HOSTSCOPE_DB": fixture.path])
        #expect(overridden.status == 1, "--db wins over HOSTSCOPE_DB")
        #expect(overridden.stderr.contains("other.sqlite"))
    }

    @Test func aFileThatIsNotADatabaseIsNamedInOneSentence() async throws {
        let directory = NSTemporaryDirectory() + "hostscope-history-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/notes.sqlite"
        try String(repeating: "not a database\n", count: 100).write(toFile: path, atomically: true, encoding: .utf8)
        let result = try CLI.run(["history", "--db", path])
        #expect(result.status == 1)
        #expect(result.stderr.hasPrefix("hostscope: cannot open \(path): it is not an SQLite database"))
        #expect(result.stderr.hasSuffix("pass another file with --db or HOSTSCOPE_DB\n"))
        #expect(result.stderr.split(separator: "\n").count == 1)
    }

    @Test func stepRollsEachHostsRecordsUpIntoMeansPerStepInEveryFormat() async throws {
        let fixture = try await Self.fleet()
        defer { fixture.remove() }
        // The fixture starts on a multiple of 20 s: web1's ticks 0+10, 20+30, 40+50 make three steps.
        let ndjson = try CLI.run(["history", "--db", fixture.path, "--step", "20s", "-f", "ndjson"])
        #expect(ndjson.status == 0, "\(ndjson.stderr)")
        let steps = try ndjson.stdout.split(separator: "\n").map { try JSONParser.parse(String($0)) }
        #expect(steps.count == 7, "\(ndjson.stdout)")
        #expect(steps.allSatisfy { $0["schema"] == "hostscope.history-step/1" })
        let web1 = steps.filter { $0["host"] == "web1" }.sorted {
            $0["start"]!.stringValue! < $1["start"]!.stringValue!
        }
        #expect(web1.map { $0["cpu_busy_percent"]?.doubleValue } == [1.0, 3.0, 5.0])
        #expect(web1.map { $0["samples"]?.intValue } == [2, 2, 2])
        #expect(
            web1.first?["start"]?.stringValue == Self.stamp(0).replacingOccurrences(of: ".000Z", with: "Z")
                || web1.first?["start"]?.stringValue == Self.stamp(0))
        let failed = try #require(steps.first { $0["host"] == "web2" && $0["errors"]?.intValue == 1 })
        #expect(failed["samples"]?.intValue == 2 && failed["cpu_busy_percent"]?.doubleValue == 50)

        let csv = try CLI.run(["history", "web1", "--db", fixture.path, "--step", "20s", "-f", "csv"])
        let rows = csv.stdout.components(separatedBy: "\r\n").filter { !$0.isEmpty }
        #expect(rows.first?.hasPrefix("start,end,host,samples,errors,cpu_busy_percent,") == true, "\(csv.stdout)")
        #expect(rows.count == 4)
        #expect(rows.dropFirst().map { $0.split(separator: ",")[5] } == ["1.00", "3.00", "5.00"])

        let json = try CLI.run(["history", "--db", fixture.path, "--step", "20s", "-f", "json"])
        #expect(try JSONParser.parse(json.stdout).arrayValue?.count == 7)

        let table = try CLI.runOnTerminal(["history", "web1", "--db", fixture.path, "--step", "20s"])
        #expect(table.stdout.contains("web1  3 steps of 20s"), "\(table.stdout)")
        #expect(table.stdout.contains("START (UTC)"), "\(table.stdout)")

        let short = try CLI.run(["history", "--db", fixture.path, "--step", "100ms"])
        #expect(short.status == 64)
        #expect(short.stderr.contains("--step 100ms is too short"))
    }

    @Test func badTimesAreUsageErrors() throws {
        let bad = try CLI.run(["history", "--since", "yesterday-ish"])
        #expect(bad.status == 64)
        #expect(bad.stderr.contains("--since"))
        // The same examples as every duration that cannot be read.
        #expect(bad.stderr.contains("a duration back from now (30m, 2h, 1h30m, 7d)"), "\(bad.stderr)")
        #expect(bad.stderr.contains("as 250ms, 5s"), "\(bad.stderr)")
        let compound = try CLI.run(["history", "--since", "1h30m", "--until", "1h31m"])
        #expect(
            compound.stderr.contains("--since is later than --until"), "1h30m and 1h31m are read: \(compound.stderr)")
        let reversed = try CLI.run(["history", "--since", "1h", "--until", "2h"])
        #expect(reversed.status == 64)
        #expect(reversed.stderr.contains("--since is later than --until"))
    }

    @Test func aLongHistoryStreamsAcrossPages() async throws {
        // More records than one page, with ties in time, to cross page boundaries.
        let records = (0..<1_203).map { Self.failure("h\($0 % 3)", at: Double($0 / 4)) }
        let fixture = try await Fixture(records: records)
        defer { fixture.remove() }
        let result = try CLI.run(["history", "--db", fixture.path, "-o", "ndjson"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == records.map { $0.jsonValue.jsonString + "\n" }.joined())
    }

    // MARK: - On a terminal

    /// web1 every 10 s for a minute with network rates from its second tick, one tick failing; db-1 once.
    static func summarised() async throws -> Fixture {
        var records: [SnapshotRecord] = []
        for tick in 0..<7 {
            let seconds = Double(tick * 10)
            guard tick != 4 else {
                records.append(failure("web1", at: seconds))
                continue
            }
            guard case .snapshot(var snapshot) = snapshot("web1", at: seconds, busy: Double(tick) * 11.5 + 0.5) else {
                continue
            }
            snapshot.memory = MemoryStats(totalBytes: 1_000, usedBytes: 250, usedPercent: 25 + Double(tick))
            snapshot.disks = [
                DiskStats(filesystem: "/dev/vda1", mount: "/", usedPercent: 71 + Double(tick) / 4),
                DiskStats(filesystem: "tmpfs", mount: "/run", usedPercent: 1),
            ]
            snapshot.network = [
                NetworkInterfaceStats(
                    interface: "eth0", rxBytes: 7, txBytes: 9, rxBytesPerSecond: tick == 0 ? nil : Double(tick) * 2048,
                    txBytesPerSecond: tick == 0 ? nil : 512)
            ]
            records.append(.snapshot(snapshot))
        }
        records.append(snapshot("db-1", at: 25, busy: 99.25))
        return try await Fixture(records: records)
    }

    @Test func onATerminalWithoutAFormatEachHostsFiguresAreSummarisedInATableThatFitsEightyColumns() async throws {
        let fixture = try await Self.summarised()
        defer { fixture.remove() }
        let session = try TerminalSession(["history", "--db", fixture.path], width: 80, height: 30)
        #expect(try session.waitForExit() == 0)
        let screen = try session.screen()
        let text = screen.joined(separator: "\n").trimmingCharacters(in: .newlines) + "\n"
        #expect(text == (try golden("terminal/history-cli-80x30.txt", recording: text)))
        // Nothing wrapped: tmux joins wrapped lines back with -J, and none is wider than the terminal.
        let joined = try session.tmux(["capture-pane", "-p", "-J", "-t", "0"]).split(separator: "\n")
        #expect(joined.allSatisfy { $0.count <= 80 })
        #expect(screen.contains { $0.hasPrefix("CPU busy") })
        #expect(
            screen.contains { $0.hasPrefix("errors") && $0.contains("1 of 7; last at 2026-11-18 11:07:20 (connect)") })
    }

    @Test func csvRoundsFiguresWhileJSONKeepsEveryDigit() async throws {
        guard case .snapshot(var snapshot) = Self.snapshot("web1", at: 0, busy: 12.345678901234567) else { return }
        snapshot.memory = MemoryStats(totalBytes: 1_000, usedBytes: 333, usedPercent: 33.300000000000004)
        snapshot.load = LoadAverage(one: 0.123456789, five: 1, fifteen: 2.5)
        let fixture = try await Fixture(records: [.snapshot(snapshot)])
        defer { fixture.remove() }
        let csv = try CLI.run(["history", "--db", fixture.path, "-f", "csv"])
        let row = Dictionary(
            uniqueKeysWithValues: zip(
                SnapshotCSV.wideColumns,
                csv.stdout.components(separatedBy: "\r\n")[1].split(separator: ",", omittingEmptySubsequences: false)
                    .map(String.init)))
        #expect(row["cpu.busy_percent"] == "12.35")
        #expect(row["memory.used_percent"] == "33.30")
        #expect(row["memory.used_bytes"] == "333")
        #expect(row["load.1m"] == "0.12" && row["load.5m"] == "1.00" && row["load.15m"] == "2.50")
        #expect(row["duration_ms"] == "3.500")
        let ndjson = try CLI.run(["history", "--db", fixture.path, "-f", "ndjson"])
        #expect(ndjson.stdout.contains(#""busy_percent":12.345678901234567"#))
        #expect(ndjson.stdout.contains(#""used_percent":33.300000000000004"#))
        #expect(ndjson.stdout.contains(#""1m":0.123456789"#))
    }

    @Test func aFormatOnATerminalOrAPipeWithoutOneStillPrintsData() async throws {
        let fixture = try await Self.summarised()
        defer { fixture.remove() }
        let session = try TerminalSession(
            ["history", "web1", "-f", "csv", "--db", fixture.path], width: 200, height: 20)
        #expect(try session.waitForExit() == 0)
        let screen = try session.screen()
        #expect(screen.first?.hasPrefix("timestamp,host,error,") == true)
        #expect(screen.filter { $0.contains(",web1,") }.count == 7)
        let piped = try CLI.run(["history", "web1", "--db", fixture.path])
        #expect(piped.stdout.hasPrefix(SnapshotCSV.wideHeader))
    }
}
