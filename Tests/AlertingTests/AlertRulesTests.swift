import Alerting
import Foundation
import TestSupport
import Testing

/// Reading rules files: the format of docs/alerts.md, and one sentence with the file and line for each
/// kind of bad input.
@Suite struct AlertRulesTests {
    private func problem(_ text: String) -> String {
        do {
            _ = try AlertRules.parse(text, source: "rules.yml")
            return "no error"
        } catch {
            return error.message
        }
    }

    @Test func aRuleWithEveryKeyIsRead() throws {
        let rules = try AlertRules.parse(
            """
            rules:
              - alert: RootAlmostFull
                when:
                  - filesystem_avail_percent < 10
                  - predict_linear(filesystem_avail_bytes[6h], 4h) < 0
                for: 30m
                keep_firing_for: 5m
                severity: critical
                hosts: ["web-*", "!web-old"]
                labels: {team: ops}
                annotations:
                  summary: '{{ $labels.mountpoint }} at {{ printf "%.1f" $value }}%'
            """, source: "rules.yml")
        let rule = try #require(rules.rules.first)
        #expect(rule.name == "RootAlmostFull")
        #expect(
            rule.conditions.map(\.text) == [
                "filesystem_avail_percent < 10", "predict_linear(filesystem_avail_bytes[6h], 4h) < 0",
            ])
        #expect(rule.forDuration == .seconds(1800))
        #expect(rule.keepFiringFor == .seconds(300))
        #expect(rule.severity == .critical)
        #expect(rule.hosts == ["web-*", "!web-old"])
        #expect(rule.labels == ["team": "ops"])
        #expect(rule.scope == .filesystem)
        #expect(rule.line == 2)
        #expect(rule.annotations["summary"]?.render(labels: ["mountpoint": "/"], value: 7.25) == "/ at 7.2%")
    }

    @Test func theShippedDefaultsParseAndCarryNodeMixinsNames() throws {
        let names = Set(AlertRules.defaults.rules.map(\.name))
        #expect(
            names == [
                "NodeFilesystemAlmostOutOfSpace", "NodeFilesystemSpaceFillingUp", "NodeFilesystemAlmostOutOfFiles",
                "NodeFilesystemFilesFillingUp", "NodeMemoryHighUtilization", "NodeCPUHighUsage", "NodeSystemSaturation",
                "NodeDiskIOSaturation", "NodeNetworkReceiveErrs", "NodeNetworkTransmitErrs",
                "NodeMemoryMajorPagesFaults", "NodeClockSkewDetected", "HostUnreachable", "HostKeyChanged",
                "HostCollectionFailing",
            ])
        #expect(try AlertRules.parse(AlertRules.defaultsText, source: "x") == AlertRules.defaults.with(source: "x"))
    }

    @Test func docsAlertsListsEveryFigure() throws {
        let doc = try String(
            contentsOf: Repository.root.appendingPathComponent("docs/alerts.md"), encoding: .utf8)
        let missing = AlertFigure.catalog.map(\.name).filter { !doc.contains("`\($0)`") }
        #expect(missing.isEmpty, "docs/alerts.md does not list \(missing)")
    }

    @Test func aYAMLErrorNamesTheFileAndLine() {
        #expect(
            problem("rules:\n  - alert: A\n    when: [cpu_busy_percent > 1\n").hasPrefix("rules.yml:4: not valid YAML"))
    }

    @Test func anUnknownFigureIsNamedWithItsLineAndTheClosestName() {
        #expect(
            problem("rules:\n  - alert: A\n    when: cpu_busy_percnt > 90\n")
                == "rules.yml:3: the condition 'cpu_busy_percnt > 90' reads the unknown figure 'cpu_busy_percnt' "
                + "(did you mean cpu_busy_percent?); `hostscope alerts figures` lists them.")
    }

    @Test func aBadDurationIsNamedWithItsLine() {
        #expect(
            problem("rules:\n  - alert: A\n    when: load1 > 4\n    for: 5 minutes\n")
                .hasPrefix("rules.yml:4: `for: 5 minutes` is no duration;"))
    }

    @Test func aTemplateThatDoesNotParseIsNamedWithItsLine() {
        #expect(
            problem("rules:\n  - alert: A\n    when: load1 > 4\n    annotations:\n      summary: '{{ $value'\n")
                == "rules.yml:5: the annotation summary has a '{{' without its '}}'.")
        #expect(
            problem("rules:\n  - alert: A\n    when: load1 > 4\n    annotations:\n      summary: '{{ .Foo }}'\n")
                .hasPrefix("rules.yml:5: the annotation summary has the action '{{ .Foo }}', which is none of"))
    }

    @Test func aThresholdOutOfTheFiguresRangeIsNamedWithItsLine() {
        #expect(
            problem("rules:\n  - alert: A\n    when: memory_used_percent > 120\n")
                == "rules.yml:3: the condition 'memory_used_percent > 120' compares memory_used_percent with 120, "
                + "outside its range 0…100.")
    }

    @Test func anUnknownKeyASeverityAndAMixOfDevicesAreRefused() {
        #expect(
            problem("rules:\n  - alert: A\n    when: load1 > 4\n    fore: 5m\n").hasPrefix(
                "rules.yml:4: the rule key 'fore' is not known (did you mean for?)"))
        #expect(
            problem("rules:\n  - alert: A\n    when: load1 > 4\n    severity: page\n")
                == "rules.yml:4: the severity 'page' is none of info, warning, critical.")
        #expect(
            problem("rules:\n  - alert: A\n    when: [filesystem_avail_percent < 4, disk_io_busy_percent > 9]\n")
                .hasPrefix("rules.yml:2: the rule A mixes figures per disk and filesystem;"))
        #expect(
            problem("rules:\n  - alert: A\n    when: load1 > 4\n  - alert: A\n    when: load5 > 4\n")
                == "rules.yml:4: the rule A with severity warning repeats the one of line 2; "
                + "give one of them other labels or remove it.")
    }

    @Test func aMissingFileIsOneSentenceNamingIt() {
        #expect(
            throws: AlertingError(
                .unreadable,
                "The rules file /nonexistent/rules.yml could not be read (No such file or directory); "
                    + "check the path given to --rules.")
        ) {
            try AlertRules.load(path: "/nonexistent/rules.yml")
        }
    }
}

/// Annotation templates: the actions Prometheus's rules use, filled in as Prometheus fills them.
@Suite struct AlertTemplateTests {
    private func render(_ text: String, value: Double) throws -> String {
        let rules = try AlertRules.parse(
            "rules:\n  - alert: A\n    when: load1 > 1\n    annotations:\n      x: '\(text)'\n", source: "t")
        return try #require(rules.rules.first?.annotations["x"]).render(
            labels: ["instance": "web1", "device": "sda"], value: value)
    }

    @Test func labelsAndValuesAreFilledInWithPrometheusFunctions() throws {
        #expect(try render("{{ $labels.instance }}/{{ $labels.device }}: {{ $value }}", value: 12) == "web1/sda: 12")
        #expect(try render("{{ $value | humanize }}", value: 1_234_567) == "1.235M")
        #expect(try render("{{ humanize1024 $value }}", value: 2048) == "2Ki")
        #expect(try render("{{ $value | humanizePercentage }}", value: 0.256) == "25.6%")
        #expect(try render("{{ $value | humanizeDuration }}", value: 3725) == "1h 2m 5s")
        #expect(try render("{{ $labels.missing }}!", value: 1) == "!")
    }
}
