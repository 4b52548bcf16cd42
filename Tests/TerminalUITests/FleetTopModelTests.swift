import Alerting
import Foundation
import HostStats
import HostscopeCore
import OrderedJSON
import TerminalUI
import TestSupport
import Testing

/// `hostscope top`'s screens drawn from a fixed fleet: one host up (a captured snapshot, several ticks for the
/// sparklines), one failing since 42 s with its last figures kept, one still connecting. Goldens at 80×24 and
/// 160×45 under Fixtures/terminal/; `HOSTSCOPE_RECORD_GOLDENS=1` rewrites them on purpose.
@Suite struct FleetTopModelTests {
    static let now = Date(timeIntervalSince1970: 1_795_000_000)

    static func snapshot(host: String, age: TimeInterval, cpu: Double, memory: Double) throws -> Snapshot {
        let url = Repository.fixtures.appendingPathComponent("probes/busybox-1.35.0-debian12/snapshot.json")
        let record = try SnapshotRecord(json: JSONParser.parse(String(contentsOf: url, encoding: .utf8)))
        guard case .snapshot(var snapshot) = record else { throw HarnessError(description: "not a snapshot") }
        snapshot.host = host
        snapshot.collectedAt = now.addingTimeInterval(-age)
        snapshot.cpu?.busyPercent = cpu
        snapshot.cpu?.userPercent = cpu * 0.8
        snapshot.cpu?.systemPercent = cpu * 0.2
        snapshot.memory?.usedPercent = memory
        snapshot.cpu?.perCore = [CoreStats(core: 0, busyPercent: cpu), CoreStats(core: 1, busyPercent: cpu / 2)]
        return snapshot
    }

    static func fleet() throws -> FleetTopModel {
        var model = FleetTopModel(hosts: ["web1", "db-primary", "cache"], interval: .seconds(2))
        model.timeZone = TimeZone(identifier: "UTC")!
        for (index, cpu) in [12.0, 30, 55, 71, 90, 64].enumerated() {
            let tick = try snapshot(host: "web1", age: Double(10 - 2 * index), cpu: cpu, memory: 40 + Double(index))
            model.apply(.record(.snapshot(tick)))
        }
        var web = HostWatchState(host: "web1", phase: .up)
        web.ticks = 6
        web.lastTick = now.addingTimeInterval(-0)
        model.apply(.state(web))
        model.apply(.record(.snapshot(try snapshot(host: "db-primary", age: 42, cpu: 91, memory: 88))))
        var db = HostWatchState(host: "db-primary", phase: .backingOff(until: now.addingTimeInterval(8)))
        db.ticks = 9
        db.errors = 3
        db.lastError = "connect: db-primary: connection refused by 10.0.0.7:22"
        model.apply(.state(db))
        return model
    }

    static func checkGolden(_ lines: [String], _ name: String) throws {
        let text = lines.joined(separator: "\n") + "\n"
        let golden = Repository.fixtures.appendingPathComponent("terminal/\(name).txt")
        if ProcessInfo.processInfo.environment["HOSTSCOPE_RECORD_GOLDENS"] == "1" {
            try text.write(to: golden, atomically: true, encoding: .utf8)
            return
        }
        let expected = try String(contentsOf: golden, encoding: .utf8)
        #expect(text == expected, "\(name): rerun with HOSTSCOPE_RECORD_GOLDENS=1 if the change is intended")
    }

    @Test(arguments: [(80, 24), (160, 45)])
    func theFleetMatchesItsGolden(_ width: Int, _ height: Int) throws {
        var model = try Self.fleet()
        let lines = model.plainLines(width: width, height: height, now: Self.now)
        #expect(lines.count == height)
        #expect(lines.allSatisfy { $0.count == width })
        try Self.checkGolden(
            lines.map { $0.replacingOccurrences(of: " +$", with: "", options: .regularExpression) },
            "fleet-\(width)x\(height)")
    }

    @Test(arguments: [(80, 24), (160, 45)])
    func aHostsDetailMatchesItsGolden(_ width: Int, _ height: Int) throws {
        var model = try Self.fleet()
        #expect(model.handle(.enter) == .redraw)
        #expect(model.screen == .detail(host: "web1"))
        let lines = model.plainLines(width: width, height: height, now: Self.now)
        #expect(lines.count == height)
        #expect(lines.allSatisfy { $0.count == width })
        try Self.checkGolden(
            lines.map { $0.replacingOccurrences(of: " +$", with: "", options: .regularExpression) },
            "detail-\(width)x\(height)")
    }

    @Test func aHostsDetailShowsPressureUnderItsMemoryWhereTheKernelGivesIt() throws {
        var model = try Self.fleet()
        var tick = try Self.snapshot(host: "web1", age: 0, cpu: 50, memory: 40)
        #expect(tick.node != nil && tick.node?.pressure == [])
        tick.node?.pressure = [
            PressureStall(resource: "cpu", kind: "some", avg10: 12.34, avg60: 0, avg300: 0, totalMicroseconds: 1)
        ]
        tick.node?.activity = KernelActivity(procsRunning: 3, procsBlocked: 0)
        model.apply(.record(.snapshot(tick)))
        _ = model.handle(.enter)
        let lines = model.plainLines(width: 120, height: 40, now: Self.now)
        let memory = try #require(lines.firstIndex { $0.hasPrefix("Mem ") })
        #expect(lines[memory + 1].hasPrefix("PSI cpu 12.3% some  3 running, 0 blocked"), "\(lines)")
    }

    @Test func aFailingHostKeepsItsLastFiguresDimmedWithTheirAgeAndItsError() throws {
        var model = try Self.fleet()
        let lines = model.plainLines(width: 160, height: 45, now: Self.now)
        let row = try #require(lines.first { $0.contains("db-primary") })
        #expect(row.contains("wait"))
        #expect(row.contains("91.0"))
        #expect(row.contains("42s"))
        // The row names the host once: the sentence's own leading name is left out.
        #expect(row.contains("connect: connection refused by 10.0"), "\(row)")
        #expect(row.components(separatedBy: "db-primary").count == 2, "\(row)")
        let styled = model.screen(width: 160, height: 45, now: Self.now, colours: true).text
        // The stale CPU figure is dimmed (SGR 2), not coloured as a current one would be (red from 85 %).
        #expect(styled.contains("\u{1B}[2m  91.0\u{1B}[0m"))
        #expect(!styled.contains("\u{1B}[31m  91.0"))
    }

    @Test func theHeaderCountsEachHostOnceAsUpFailingOrConnecting() throws {
        var model = try Self.fleet()
        let header = model.plainLines(width: 160, height: 45, now: Self.now)[0]
        #expect(header.contains("3 hosts · 1 up · 1 failing · 1 connecting"))
    }

    @Test func sortingByCPUPutsTheBusiestFirstAndFilteringKeepsMatchingNames() throws {
        var model = try Self.fleet()
        #expect(model.visibleHosts == ["web1", "db-primary", "cache"])
        _ = model.handle(.character("s"))
        #expect(model.sort == .cpu)
        #expect(model.visibleHosts == ["db-primary", "web1", "cache"])
        _ = model.handle(.character("/"))
        #expect(model.editingFilter)
        for character in "PRIM" { _ = model.handle(.character(character)) }
        _ = model.handle(.enter)
        #expect(!model.editingFilter)
        #expect(model.visibleHosts == ["db-primary"])
        #expect(model.selected == "db-primary")
        _ = model.handle(.escape)
        #expect(model.filter.isEmpty)
        #expect(model.visibleHosts.count == 3)
    }

    @Test func aHostsLabelsShowInItsDetailAndTheFilterMatchesThem() throws {
        var model = try Self.fleet()
        var web = HostWatchState(host: "web1", phase: .up, labels: ["role": "web", "env": "prod"])
        web.ticks = 6
        model.apply(.state(web))
        model.apply(.state(HostWatchState(host: "db-primary", phase: .failing, labels: ["env": "staging"])))
        _ = model.handle(.character("/"))
        for character in "env=prod" { _ = model.handle(.character(character)) }
        _ = model.handle(.enter)
        #expect(model.visibleHosts == ["web1"])
        _ = model.handle(.enter)
        let lines = model.plainLines(width: 80, height: 24, now: Self.now)
        let title = try #require(lines.firstIndex { $0.hasPrefix("web1 ") }, "\(lines)")
        #expect(lines[title + 1].hasPrefix("labels env=prod role=web"), "\(lines)")
        // A host without labels has no such line.
        _ = model.handle(.escape)
        _ = model.handle(.escape)
        _ = model.handle(.character("/"))
        for character in "cache" { _ = model.handle(.character(character)) }
        _ = model.handle(.enter)
        _ = model.handle(.enter)
        #expect(!model.plainLines(width: 80, height: 24, now: Self.now).contains { $0.hasPrefix("labels") })
    }

    @Test func qAndCtrlCQuitAndEscLeavesTheDetail() throws {
        var model = try Self.fleet()
        _ = model.handle(.down)
        #expect(model.selected == "db-primary")
        _ = model.handle(.enter)
        #expect(model.screen == .detail(host: "db-primary"))
        _ = model.handle(.character("s"))
        #expect(model.processSort == .memory)
        _ = model.handle(.escape)
        #expect(model.screen == .fleet)
        #expect(model.handle(.character("q")) == .quit)
        #expect(model.handle(.interrupt) == .quit)
    }

    @Test func eShowsTheSelectedHostsWholeErrorOnALineOfItsOwn() throws {
        var model = try Self.fleet()
        _ = model.handle(.down)
        _ = model.handle(.character("e"))
        let lines = model.plainLines(width: 80, height: 24, now: Self.now)
        let index = try #require(lines.firstIndex { $0.contains("db-primary") })
        #expect(lines[index + 1].contains("connect: connection refused by 10.0.0.7:22"))
        #expect(!lines[index + 1].contains("db-primary"))
    }

    @Test(arguments: [80, 160])
    func eWrapsALongErrorWholeUnderItsRow(_ width: Int) throws {
        var model = try Self.fleet()
        let sentence =
            "cannot resolve host name \"db-primary.internal.example.com\" (Temporary failure in name resolution); "
            + "check HostName db-primary.internal.example.com at /etc/ssh/ssh_config.d/fleet.conf line 12, or the "
            + "resolver of this machine"
        var db = HostWatchState(host: "db-primary", phase: .backingOff(until: Self.now.addingTimeInterval(8)))
        db.lastError = "connect: db-primary: " + sentence
        model.apply(.state(db))
        _ = model.handle(.down)
        _ = model.handle(.character("e"))
        let lines = model.plainLines(width: width, height: 24, now: Self.now)
        let index = try #require(lines.firstIndex { $0.contains("db-primary ") })
        let shown = lines[(index + 1)...].prefix {
            $0.hasPrefix("    ") && !$0.trimmingCharacters(in: .whitespaces).isEmpty
        }
        let text = shown.map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
        #expect(text == "connect: " + sentence, "\(lines.joined(separator: "\n"))")
        #expect(shown.count > 1)
    }

    @Test func aHostsDetailListsRealFilesystemsFullestFirstAndHidesPseudoOnesAndTheLoopbackUnlessAll() throws {
        var model = try Self.fleet()
        _ = model.handle(.enter)
        let lines = model.plainLines(width: 80, height: 24, now: Self.now)
        #expect(lines.contains { $0.hasPrefix("/ ") }, "\(lines.joined(separator: "\n"))")
        #expect(lines.contains { $0.hasPrefix("eth0 ") }, "\(lines.joined(separator: "\n"))")
        for hidden in ["/dev ", "/dev/shm ", "/sys/fs/cgroup ", "lo ", "ifb0 ", "ifb1 "] {
            #expect(!lines.contains { $0.hasPrefix(hidden) }, "\(hidden) is shown")
        }
        #expect(!lines.contains { $0.contains("more filesystem") || $0.contains("more interface") })
        model.showsAllDevices = true
        let all = model.plainLines(width: 160, height: 60, now: Self.now)
        for shown in ["/ ", "/dev ", "/dev/shm ", "lo ", "ifb0 ", "eth0 "] {
            #expect(all.contains { $0.hasPrefix(shown) }, "\(shown) with --all")
        }
        let root = try #require(all.firstIndex { $0.hasPrefix("/ ") })
        #expect(all.firstIndex { $0.hasPrefix("/dev ") }! > root, "real filesystems first")
    }

    @Test func aLongFleetScrollsToKeepTheSelectionOnScreen() throws {
        let names = (1...40).map { "host\($0)" }
        var model = FleetTopModel(hosts: names, interval: .seconds(2))
        for _ in 1..<30 { _ = model.handle(.down) }
        let lines = model.plainLines(width: 80, height: 24, now: Self.now)
        #expect(lines.contains { $0.hasPrefix("> host30 ") })
        #expect(!lines.contains { $0.hasPrefix("  host1 ") })
    }

    static func transition(_ host: String, _ name: String, to state: AlertState, summary: String) -> AlertTransition {
        let alert = ActiveAlert(
            ruleKey: name, subject: "", labels: ["alertname": name, "instance": host, "severity": "critical"],
            annotations: ["summary": summary], state: state, value: 1, activeAt: now.addingTimeInterval(-60),
            firedAt: state == .firing ? now.addingTimeInterval(-30) : nil, lastHeldAt: now)
        return AlertTransition(alert: alert, from: state == .firing ? .pending : .firing, to: state, at: now)
    }

    /// A firing alert marks its host's row and is counted in the header; `a` lists it with its summary (escaped),
    /// the host's detail names it, and once it resolves every mark is gone.
    @Test func aFiringAlertMarksItsHostAndAListsItWithItsSummary() throws {
        var model = try Self.fleet()
        let summary = "db-primary is down\u{1B}[2J"
        model.apply(Self.transition("db-primary", "HostUnreachable", to: .firing, summary: summary))
        var lines = model.plainLines(width: 80, height: 24, now: Self.now)
        #expect(lines[0].contains(" · 1 firing · "), "\(lines[0])")
        #expect(lines.contains { $0.hasPrefix("  db-primary ") && $0.contains(" wait! ") }, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("> web1 ") && $0.contains(" up ") })
        #expect(lines[23].contains("a alerts"))
        _ = model.handle(.character("a"))
        lines = model.plainLines(width: 80, height: 24, now: Self.now)
        #expect(lines[0].hasPrefix("Firing alerts · 1 · "))
        let row = try #require(lines.first { $0.hasPrefix("db-primary ") }, "\(lines)")
        #expect(row.contains("HostUnreachable") && row.contains("critical") && row.contains("db-primary is down\\e[2J"))
        #expect(lines[23].hasPrefix("Esc back"))
        _ = model.handle(.escape)
        _ = model.handle(.down)
        _ = model.handle(.enter)
        lines = model.plainLines(width: 80, height: 24, now: Self.now)
        #expect(lines.contains { $0.hasPrefix("! HostUnreachable (critical): db-primary is down") }, "\(lines)")
        _ = model.handle(.escape)
        model.apply(Self.transition("db-primary", "HostUnreachable", to: .resolved, summary: summary))
        lines = model.plainLines(width: 80, height: 24, now: Self.now)
        #expect(!lines[0].contains("firing") && !lines.contains { $0.contains("wait!") }, "\(lines)")
        _ = model.handle(.character("a"))
        #expect(model.plainLines(width: 80, height: 24, now: Self.now).contains { $0.hasPrefix("no firing alerts") })
    }
}
