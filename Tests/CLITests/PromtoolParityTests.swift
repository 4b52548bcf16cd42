import Alerting
import Foundation
import HostStats
import OrderedJSON
import TestSupport
import Testing

/// hostscope's own evaluator and Prometheus (`promtool test rules`) over the same recorded series give the same
/// answer: the memory of the harness host, recorded by `watch`, becomes node_exporter's two memory series of a
/// promtool unit test, one sample per evaluation step; the rule, exported by `hostscope alerts rules --format
/// prometheus`, is evaluated by hostscope step by step, and what fires at each step becomes the test's expected
/// alerts. promtool passing means both fire and resolve at the same evaluation steps.
@Suite struct PromtoolParityTests {
    /// One evaluation step, in seconds: promtool's `interval` and `evaluation_interval`.
    static let step = 1.0

    @Test func promtoolFiresAndResolvesAtTheStepsHostscopeDoesOnARecordedSeries() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/promtool") else {
            print("promtool is not installed (Debian's prometheus package); the rule parity test is skipped")
            return
        }
        let server = try SSHTestServer.shared()
        let directory = NSTemporaryDirectory() + "hostscope-promtool-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }

        // The recorded series: the harness host's memory, one snapshot every 500 ms.
        let recording = directory + "/recorded.ndjson"
        let watch = try CLI.run(
            [
                "watch", server.target, "--every", "500ms", "--count", "30", "--no-history", "--no-alerts", "-o",
                recording,
            ] + CLI.harnessArguments(server))
        #expect(watch.status == 0, "\(watch.stderr)")
        let snapshots = try String(contentsOfFile: recording, encoding: .utf8).split(separator: "\n").compactMap {
            line -> Snapshot? in
            guard case .snapshot(let snapshot) = try SnapshotRecord(json: JSONParser.parse(String(line))),
                snapshot.memory?.totalBytes ?? 0 > 0
            else { return nil }
            return snapshot
        }
        try #require(snapshots.count >= 12, "\(snapshots.count) snapshots recorded")

        // A threshold between two recorded values (never on one: the two formulas may round apart), chosen so that
        // the alert both fires and resolves where the series allows it.
        let values = snapshots.compactMap { $0.memory?.usedPercent }
        let distinct = Array(Set(values)).sorted()
        let candidates = zip(distinct, distinct.dropFirst()).map { ($0 + $1) / 2 } + [distinct[0] - 1]
        // Above or below it: a series that only rises resolves an alert on "below".
        var chosen: (rule: String, firing: [Bool])?
        search: for comparison in [">", "<"] {
            for threshold in candidates {
                let rule = Self.rule(comparison, threshold)
                let firing = try Self.hostscopeFiring(snapshots, rule: rule)
                let resolves = zip(firing, firing.dropFirst()).contains { $0 && !$1 }
                if chosen == nil || (resolves && firing.contains(true)) { chosen = (rule, firing) }
                if resolves { break search }
            }
        }
        let (rule, firing) = try #require(chosen)
        #expect(firing.contains(true), "the alert never fired on \(values)")

        let rules = directory + "/rules.yml"
        try rule.write(toFile: rules, atomically: true, encoding: .utf8)
        let exported = try CLI.run(["alerts", "rules", "--format", "prometheus", "--rules", rules])
        #expect(exported.status == 0, "\(exported.stderr)")
        try exported.stdout.write(toFile: directory + "/prometheus-rules.yml", atomically: true, encoding: .utf8)
        let test = directory + "/test.yml"
        try Self.unitTest(snapshots, host: snapshots[0].host, firing: firing).write(
            toFile: test, atomically: true, encoding: .utf8)
        let result = try CLI.runShell("cd \(CLI.shellQuoted(directory)) && promtool test rules test.yml")
        let resolves = zip(firing, firing.dropFirst()).contains { $0 && !$1 }
        print(
            "promtool parity: \(rule.split(separator: "\n")[2]), firing at steps \(firing.indices.filter { firing[$0] }), resolves: \(resolves)"
        )
        // The same test with hostscope's answer one step late must fail: promtool does compare every step.
        try Self.unitTest(snapshots, host: snapshots[0].host, firing: [false] + firing.dropLast()).write(
            toFile: directory + "/shifted.yml", atomically: true, encoding: .utf8)
        let shifted = try CLI.runShell("cd \(CLI.shellQuoted(directory)) && promtool test rules shifted.yml")
        #expect(shifted.status != 0, "promtool accepted alerts one step late: \(shifted.stdout)")
        #expect(
            result.status == 0,
            "promtool disagrees with hostscope on \(rule) over \(values):\n\(result.stdout)\(result.stderr)"
        )
    }

    /// The rule of the test: memory in use above (or below) `threshold` for two steps.
    static func rule(_ comparison: String, _ threshold: Double) -> String {
        """
        rules:
          - alert: MemoryAbove
            when: memory_used_percent \(comparison) \(AlertValueText.plain(threshold))
            for: 2s
            severity: warning
        """
    }

    /// Whether hostscope's evaluator has the alert firing after each step, the snapshots taken one step apart.
    static func hostscopeFiring(_ snapshots: [Snapshot], rule: String) throws -> [Bool] {
        var evaluator = AlertEvaluator(rules: try AlertRules.parse(rule, source: "test"))
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        return snapshots.enumerated().map { index, snapshot in
            _ = evaluator.evaluate(.snapshot(snapshot), now: start.addingTimeInterval(Double(index) * step))
            return evaluator.alerts.contains { $0.state == .firing }
        }
    }

    /// A promtool unit test: node_exporter's memory series from the snapshots, and at every step the alert
    /// expected firing exactly where hostscope fires it.
    static func unitTest(_ snapshots: [Snapshot], host: String, firing: [Bool]) -> String {
        func series(_ name: String, _ value: (MemoryStats) -> UInt64) -> String {
            let values = snapshots.map { String(value($0.memory!)) }.joined(separator: " ")
            return "      - series: '\(name){instance=\"\(host)\"}'\n        values: '\(values)'\n"
        }
        var text = """
            rule_files: [prometheus-rules.yml]
            evaluation_interval: \(Int(step))s
            tests:
              - interval: \(Int(step))s
                input_series:

            """
        text += series("node_memory_MemAvailable_bytes") { $0.availableBytes ?? 0 }
        text += series("node_memory_MemTotal_bytes") { $0.totalBytes ?? 0 }
        text += "    alert_rule_test:\n"
        for (index, fires) in firing.enumerated() {
            text += "      - eval_time: \(index * Int(step))s\n        alertname: MemoryAbove\n"
            text +=
                fires
                ? "        exp_alerts:\n          - exp_labels: {severity: warning, instance: '\(host)'}\n"
                : "        exp_alerts: []\n"
        }
        return text
    }
}
