import Foundation
import OrderedJSON
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `watch --rules` against the harness's sshd and `alerts` reading back what it stored: firing within `for`,
/// the transitions, a restart that neither forgets nor fires again, and bad rules files.
@Suite struct AlertsCommandTests {
    let directory: String

    init() throws {
        directory = NSTemporaryDirectory() + "hostscope-alerts-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    private func rules(_ text: String) throws -> String {
        let path = directory + "/rules.yml"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    private func watch(_ server: SSHTestServer, rules: String, db: String, count: Int) throws -> CLIResult {
        try CLI.run(
            [
                "watch", server.target, "--every", "300ms", "--count", String(count), "--rules", rules, "--db", db,
                "-o", directory + "/out.ndjson",
            ] + CLI.harnessArguments(server))
    }

    private let lowThreshold = AlertTestRules.memoryInUse

    @Test func aRuleWithALowThresholdFiresWithinItsForAndAlertsReadsItBack() throws {
        let server = try SSHTestServer.shared()
        let db = directory + "/h.sqlite"
        let result = try watch(server, rules: try rules(lowThreshold), db: db, count: 4)
        #expect(result.status == 0, "\(result.stderr)")
        let now = try CLI.run(["alerts", "--db", db, "-f", "json"])
        #expect(now.status == 0, "\(now.stderr)")
        let alerts = try #require(try JSONParser.parse(now.stdout).arrayValue)
        #expect(alerts.count == 1)
        let alert = try #require(alerts.first)
        #expect(alert["state"]?.stringValue == "firing")
        #expect(alert["labels"]?["alertname"]?.stringValue == "MemoryInUse")
        #expect(alert["labels"]?["team"]?.stringValue == "ops")
        #expect(alert["labels"]?["instance"]?.stringValue == server.target)
        let summary = try #require(alert["annotations"]?["summary"]?.stringValue)
        #expect(summary.hasPrefix("memory at ") && summary.hasSuffix("% on \(server.target)"))
        let history = try CLI.run(["alerts", "--history", "--db", db, "-f", "ndjson"])
        let moves = try history.stdout.split(separator: "\n").map { line in
            let value = try JSONParser.parse(String(line))
            return "\(value["from"]?.stringValue ?? "")→\(value["to"]?.stringValue ?? "")"
        }
        #expect(moves == ["inactive→pending", "pending→firing"])
    }

    /// With --alert-records, the NDJSON output holds a `hostscope.alert/1` record for each move, after the
    /// snapshot that caused it; without it, snapshots only; with --no-alerts, a usage error.
    @Test func alertRecordsAddEachMoveToTheNDJSONOutput() throws {
        let server = try SSHTestServer.shared()
        let path = try rules(lowThreshold)
        let output = directory + "/records.ndjson"
        let result = try CLI.run(
            [
                "watch", server.target, "--every", "300ms", "--count", "4", "--rules", path, "--no-history",
                "--alert-records", "-o", output,
            ] + CLI.harnessArguments(server))
        #expect(result.status == 0, "\(result.stderr)")
        let records = try String(contentsOfFile: output, encoding: .utf8).split(separator: "\n").map {
            try JSONParser.parse(String($0))
        }
        #expect(records.allSatisfy { $0["host"]?.stringValue == server.target && $0["collected_at"] != nil })
        let alerts = records.filter { $0["schema"]?.stringValue == "hostscope.alert/1" }
        #expect(records.count - alerts.count == 4)
        let moves = alerts.map { "\($0["alert"]?["from"]?.stringValue ?? "")→\($0["alert"]?["to"]?.stringValue ?? "")" }
        #expect(moves == ["inactive→pending", "pending→firing"], "\(records)")
        let firing = try #require(alerts.last?["alert"])
        #expect(firing["labels"]?["alertname"]?.stringValue == "MemoryInUse")
        #expect(firing["annotations"]?["summary"]?.stringValue?.hasPrefix("memory at ") == true)
        // Each move follows the snapshot it was evaluated on.
        let index = try #require(records.firstIndex { $0["schema"]?.stringValue == "hostscope.alert/1" })
        #expect(index > 0 && records[index - 1]["collected_at"] == alerts[0]["collected_at"])

        let plain = directory + "/plain.ndjson"
        let without = try CLI.run(
            ["watch", server.target, "--every", "300ms", "--count", "4", "--rules", path, "--no-history", "-o", plain]
                + CLI.harnessArguments(server))
        #expect(without.status == 0, "\(without.stderr)")
        #expect(!(try String(contentsOfFile: plain, encoding: .utf8)).contains("hostscope.alert/1"))

        let contradiction = try CLI.run(["watch", server.target, "--no-alerts", "--alert-records", "--count", "1"])
        #expect(contradiction.status == 64)
        #expect(contradiction.stderr.contains("--alert-records writes alerts, but --no-alerts evaluates none"))
    }

    @Test func aRestartKeepsTheFiringAlertAndDoesNotFireItAgain() throws {
        let server = try SSHTestServer.shared()
        let db = directory + "/h.sqlite"
        let path = try rules(lowThreshold)
        #expect(try watch(server, rules: path, db: db, count: 4).status == 0)
        let before = try JSONParser.parse(try CLI.run(["alerts", "--db", db, "-f", "json"]).stdout)
        #expect(try watch(server, rules: path, db: db, count: 2).status == 0)
        let after = try JSONParser.parse(try CLI.run(["alerts", "--db", db, "-f", "json"]).stdout)
        #expect(after[0]?["state"]?.stringValue == "firing")
        #expect(after[0]?["firedAt"] == before[0]?["firedAt"])
        let history = try CLI.run(["alerts", "--history", "--db", db, "-f", "ndjson"])
        #expect(history.stdout.split(separator: "\n").count == 2, "\(history.stdout)")
    }

    @Test func aBadRulesFileStopsWatchAtStartWithTheFileAndLine() throws {
        let server = try SSHTestServer.shared()
        let path = try rules("rules:\n  - alert: A\n    when: cpu_busy > 3\n")
        let result = try watch(server, rules: path, db: directory + "/h.sqlite", count: 1)
        #expect(result.status == 64)
        #expect(result.stderr.contains("\(path):3: the condition 'cpu_busy > 3' reads the unknown figure 'cpu_busy'"))
        #expect(!FileManager.default.fileExists(atPath: directory + "/out.ndjson"))
    }

    @Test func theShippedDefaultsPrintAsAFileThatChecks() throws {
        let defaults = try CLI.run(["alerts", "defaults"])
        #expect(defaults.status == 0)
        let path = try rules(defaults.stdout)
        let check = try CLI.run(["alerts", "check", path])
        #expect(check.status == 0, "\(check.stderr)")
        #expect(check.stdout.hasPrefix("\(path): 19 rule(s)\n"))
        #expect(check.stdout.contains("  HostKeyChanged (critical): host_key_changed == 1\n"))
    }

    @Test func alertsWithoutADatabaseSaysHowToGetOne() throws {
        let result = try CLI.run(["alerts", "--db", directory + "/none.sqlite"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("no alerts yet at \(directory)/none.sqlite: run `hostscope watch --rules FILE`"))
    }

    @Test func theExportedPrometheusRulesPassPromtool() throws {
        let exported = try CLI.run(["alerts", "rules", "--format", "prometheus"])
        #expect(exported.status == 0, "\(exported.stderr)")
        let path = directory + "/prometheus-rules.yml"
        try exported.stdout.write(toFile: path, atomically: true, encoding: .utf8)
        #expect(exported.stdout.contains("- alert: NodeFilesystemSpaceFillingUp"))
        #expect(exported.stdout.contains("predict_linear(node_filesystem_avail_bytes[6h], 86400) < 0"))
        #expect(exported.stdout.contains("# Left out (figures of hostscope's own collection): HostCollectionFailing"))
        let check = try CLI.runShell("promtool check rules '\(path)'")
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
        #expect(check.stdout.contains("SUCCESS: 16 rules found"), "\(check.stdout)")
    }

    @Test func aHostThatCannotBeReachedRaisesHostUnreachableWithTheShippedRules() throws {
        let server = try SSHTestServer.shared()
        let port = try LoopbackListener.freePort()
        let db = directory + "/h.sqlite"
        let result = try CLI.run(
            [
                "watch", "\(server.user)@127.0.0.1:\(port)", "--every", "300ms", "--count", "3", "--db", db,
                "-o", directory + "/out.ndjson", "--connect-timeout", "2s",
            ] + CLI.harnessArguments(server))
        #expect(result.status == 0, "a failing host is a record of the watch, not a failure of it: \(result.stderr)")
        let alerts = try JSONParser.parse(try CLI.run(["alerts", "--db", db, "-f", "json"]).stdout).arrayValue ?? []
        #expect(alerts.map { $0["labels"]?["alertname"]?.stringValue } == ["HostUnreachable"])
        #expect(alerts.first?["labels"]?["severity"]?.stringValue == "critical")
    }

    /// A host that goes away (its proxy killed and refused from then on) raises HostUnreachable with the
    /// shipped rules once three collections in a row fail, and the alert resolves once the host is back.
    @Test func aHostThatGoesAwayRaisesHostUnreachableAndItResolvesWhenTheHostIsBack() async throws {
        let server = try SSHTestServer.shared()
        let flap = SwitchableHost("flap", flag: directory + "/flap-up")
        let config = directory + "/ssh_config"
        try flap.configBlock(server).write(toFile: config, atomically: true, encoding: .utf8)
        let db = directory + "/flap.sqlite"
        let output = directory + "/flap.ndjson"
        let watch = try RunningCLI(
            ["watch", "flap", "--ssh-config", config, "--every", "500ms", "--db", db, "-o", output],
            stderr: directory + "/flap.log")
        defer {
            watch.signal(SIGKILL)
            _ = watch.wait()
        }
        func alerts(_ extra: [String] = []) throws -> [JSONValue] {
            try JSONParser.parse(try CLI.run(["alerts", "--db", db, "-f", "json"] + extra).stdout).arrayValue ?? []
        }
        func lines() -> Int {
            ((try? String(contentsOfFile: output, encoding: .utf8)) ?? "").split(separator: "\n").count
        }
        try await waitUntil(timeout: .seconds(30), "two records of the host while it is up") {
            try await Task.sleep(for: .milliseconds(200))
            return lines() >= 2
        }
        // Other shipped rules may be pending on a busy machine (CPU, load); this test is about one alert.
        func unreachable() throws -> [JSONValue] {
            try alerts().filter { $0["labels"]?["alertname"]?.stringValue == "HostUnreachable" }
        }
        #expect(try unreachable().isEmpty)
        // Down: no new connection, and the open session goes with its proxy.
        try flap.takeDown()
        try await waitUntil(timeout: .seconds(60), "HostUnreachable firing") {
            try await Task.sleep(for: .milliseconds(300))
            return try alerts().contains {
                $0["labels"]?["alertname"]?.stringValue == "HostUnreachable" && $0["state"]?.stringValue == "firing"
            }
        }
        // Back: the next attempt connects, and the alert resolves.
        flap.bringUp()
        try await waitUntil(timeout: .seconds(90), "HostUnreachable resolved once the host is back") {
            try await Task.sleep(for: .milliseconds(300))
            return try unreachable().isEmpty
        }
        let moves = try alerts(["--history"]).compactMap { move -> String? in
            guard move["labels"]?["alertname"]?.stringValue == "HostUnreachable" else { return nil }
            return "\(move["from"]?.stringValue ?? "")→\(move["to"]?.stringValue ?? "")"
        }
        #expect(moves.contains("inactive→firing") || moves.contains("pending→firing"), "\(moves)")
        #expect(moves.contains("firing→resolved"), "\(moves)")
    }

    @Test func aChangedHostKeyRaisesHostKeyChangedAtOnce() throws {
        let server = try SSHTestServer.shared()
        // known_hosts naming another key for the harness: the user's own public key stands in for it.
        let userKey = try String(contentsOfFile: server.directory + "/id_ed25519.pub", encoding: .utf8)
            .split(separator: " ").prefix(2).joined(separator: " ")
        let knownHosts = directory + "/known_hosts"
        try "[\(server.host)]:\(server.port) \(userKey)\n".write(toFile: knownHosts, atomically: true, encoding: .utf8)
        let db = directory + "/h.sqlite"
        let result = try CLI.run(
            [
                "watch", server.target, "--every", "300ms", "--count", "1", "--db", db, "-o", directory + "/out.ndjson",
                "-i", server.keyPath, "--known-hosts", knownHosts,
            ])
        #expect(result.status == 0, "a failing host is a record of the watch, not a failure of it: \(result.stderr)")
        let alerts = try JSONParser.parse(try CLI.run(["alerts", "--db", db, "-f", "json"]).stdout).arrayValue ?? []
        #expect(alerts.map { $0["labels"]?["alertname"]?.stringValue } == ["HostKeyChanged"])
        #expect(alerts.first?["state"]?.stringValue == "firing")
    }
}
