import Alerting
import Foundation
import HostStats
import Testing

/// The evaluator driven record by record with the time given: pending, firing, `for`, `keep_firing_for`,
/// devices as labels, predictions, hostscope's own alerts, reloads and restarts.
@Suite struct AlertEvaluatorTests {
    private let start = Date(timeIntervalSince1970: 1_800_000_000)

    private func at(_ minutes: Double) -> Date { start.addingTimeInterval(minutes * 60) }

    private func rules(_ text: String) throws -> AlertRules { try AlertRules.parse("rules:\n" + text, source: "t") }

    private func cpu(_ busy: Double, host: String = "web1", minute: Double) -> SnapshotRecord {
        .snapshot(Snapshot(host: host, collectedAt: at(minute), collector: "proc", cpu: CPUStats(busyPercent: busy)))
    }

    private func disks(_ available: [String: UInt64], minute: Double) -> SnapshotRecord {
        let disks = available.sorted { $0.key < $1.key }.map { mount, free in
            DiskStats(
                filesystem: "/dev/" + (mount == "/" ? "sda1" : "sdb1"), type: "ext4", mount: mount, sizeBytes: 1000,
                usedBytes: 1000 - free, availableBytes: free)
        }
        return .snapshot(Snapshot(host: "web1", collectedAt: at(minute), collector: "proc", disks: disks))
    }

    private func failure(_ kind: FailureKind, minute: Double) -> SnapshotRecord {
        .failure(CollectionFailure(host: "web1", collectedAt: at(minute), kind: kind, message: "no"))
    }

    private func moves(_ transitions: [AlertTransition]) -> [String] {
        transitions.map { "\($0.alert.name) \($0.alert.subject) \($0.from.rawValue)→\($0.to.rawValue)" }
    }

    @Test func anAlertIsPendingUntilItsForHasPassedThenFiresThenResolves() throws {
        var evaluator = AlertEvaluator(
            rules: try rules("  - alert: Busy\n    when: cpu_busy_percent > 90\n    for: 2m\n"))
        #expect(moves(evaluator.evaluate(cpu(95, minute: 0), now: at(0))) == ["Busy  inactive→pending"])
        #expect(moves(evaluator.evaluate(cpu(96, minute: 1), now: at(1))) == [])
        #expect(evaluator.alerts.map(\.state) == [.pending])
        #expect(moves(evaluator.evaluate(cpu(97, minute: 2), now: at(2))) == ["Busy  pending→firing"])
        #expect(evaluator.alerts.first?.value == 97)
        #expect(evaluator.alerts.first?.activeAt == at(0))
        #expect(evaluator.alerts.first?.firedAt == at(2))
        #expect(moves(evaluator.evaluate(cpu(97, minute: 3), now: at(3))) == [])
        #expect(moves(evaluator.evaluate(cpu(10, minute: 4), now: at(4))) == ["Busy  firing→resolved"])
        #expect(evaluator.alerts.isEmpty)
    }

    @Test func oneHostsAlertsAreTheFleetsAlertsOfThatHostInTheSameOrder() throws {
        var evaluator = AlertEvaluator(
            rules: try rules(
                "  - alert: Busy\n    when: cpu_busy_percent > 90\n    for: 1m\n"
                    + "  - alert: Warm\n    when: cpu_busy_percent > 50\n"))
        for (index, host) in ["web1", "web2", "db1"].enumerated() {
            _ = evaluator.evaluate(cpu(95 - Double(index) * 20, host: host, minute: 0), now: at(0))
            _ = evaluator.evaluate(cpu(95 - Double(index) * 20, host: host, minute: 1), now: at(1))
        }
        #expect(evaluator.alerts.count == 4)
        for host in ["web1", "web2", "db1", "none"] {
            let own = evaluator.alerts(host: host)
            #expect(own == evaluator.alerts.filter { $0.host == host })
        }
        #expect(evaluator.alerts(host: "web1").map(\.name) == ["Busy", "Warm"])
    }

    @Test func theFleetsAlertsAreFiringFirstThenByNameAndHost() throws {
        var evaluator = AlertEvaluator(
            rules: try rules(
                "  - alert: Busy\n    when: cpu_busy_percent > 90\n    for: 1m\n"
                    + "  - alert: Warm\n    when: cpu_busy_percent > 50\n"))
        _ = evaluator.evaluate(cpu(95, host: "web2", minute: 0), now: at(0))
        _ = evaluator.evaluate(cpu(95, host: "web2", minute: 1), now: at(1))
        _ = evaluator.evaluate(cpu(95, host: "db1", minute: 1), now: at(1))
        _ = evaluator.evaluate(cpu(60, host: "app1", minute: 1), now: at(1))
        #expect(
            evaluator.alerts.map { "\($0.state.rawValue) \($0.name) \($0.host)" } == [
                "firing Busy web2", "firing Warm app1", "firing Warm db1", "firing Warm web2", "pending Busy db1",
            ])
    }

    @Test func aPendingAlertWhoseConditionStopsBeforeForEndsWithoutFiring() throws {
        var evaluator = AlertEvaluator(
            rules: try rules("  - alert: Busy\n    when: cpu_busy_percent > 90\n    for: 5m\n"))
        _ = evaluator.evaluate(cpu(95, minute: 0), now: at(0))
        #expect(moves(evaluator.evaluate(cpu(5, minute: 1), now: at(1))) == ["Busy  pending→inactive"])
        #expect(moves(evaluator.evaluate(cpu(95, minute: 2), now: at(2))) == ["Busy  inactive→pending"])
        #expect(evaluator.alerts.first?.activeAt == at(2))
    }

    @Test func keepFiringForHoldsAFlappingAlert() throws {
        var evaluator = AlertEvaluator(
            rules: try rules("  - alert: Busy\n    when: cpu_busy_percent > 90\n    keep_firing_for: 2m\n"))
        #expect(moves(evaluator.evaluate(cpu(95, minute: 0), now: at(0))) == ["Busy  inactive→firing"])
        #expect(moves(evaluator.evaluate(cpu(5, minute: 1), now: at(1))) == [])
        #expect(moves(evaluator.evaluate(cpu(95, minute: 2), now: at(2))) == [])
        #expect(moves(evaluator.evaluate(cpu(5, minute: 3), now: at(3))) == [])
        #expect(moves(evaluator.evaluate(cpu(5, minute: 4), now: at(4))) == ["Busy  firing→resolved"])
    }

    @Test func eachFilesystemIsAnAlertOfItsOwnWithItsLabelsInTheAnnotations() throws {
        var evaluator = AlertEvaluator(
            rules: try rules(
                """
                  - alert: Full
                    when: filesystem_avail_percent < 10
                    annotations:
                      description: '{{ $labels.mountpoint }} on {{ $labels.instance }}: {{ $value }}% left'
                """))
        let moved = evaluator.evaluate(disks(["/": 50, "/data": 500], minute: 0), now: at(0))
        #expect(moves(moved) == ["Full / inactive→firing"])
        let alert = try #require(moved.first?.alert)
        #expect(
            alert.labels == [
                "alertname": "Full", "severity": "warning", "instance": "web1", "device": "/dev/sda1",
                "mountpoint": "/", "fstype": "ext4",
            ])
        #expect(alert.annotations == ["description": "/ on web1: 5% left"])
        #expect(
            moves(evaluator.evaluate(disks(["/": 500, "/data": 20], minute: 1), now: at(1))).sorted() == [
                "Full / firing→resolved", "Full /data inactive→firing",
            ])
    }

    @Test func predictLinearFiresWhenTheLineCrossesWithinTheHorizon() throws {
        var evaluator = AlertEvaluator(
            rules: try rules("  - alert: FillingUp\n    when: predict_linear(filesystem_avail_bytes[1h], 4h) < 0\n"))
        // 10 bytes less each 10 minutes from 400: empty after 400 minutes, inside 4 h only from minute 160 on.
        var fired: Double?
        var valueWhenFired: Double?
        for step in 0..<30 {
            let minute = Double(step * 10)
            let moved = evaluator.evaluate(disks(["/": UInt64(400 - step * 10)], minute: minute), now: at(minute))
            if let firing = moved.first(where: { $0.to == .firing }), fired == nil {
                fired = minute
                valueWhenFired = firing.alert.value
            }
        }
        #expect(fired == 170)
        // The value is the prediction: 230 bytes left at minute 170, 240 less in 4 h.
        #expect(valueWhenFired.map { abs($0 - -10) < 1e-6 } == true)
    }

    @Test func aFailedRecordLeavesFigureAlertsAsTheyAreAndCountsTowardsHostUnreachable() throws {
        var evaluator = AlertEvaluator(
            rules: try rules(
                """
                  - alert: Busy
                    when: cpu_busy_percent > 90
                  - alert: HostUnreachable
                    when: unreachable_records >= 3
                    severity: critical
                  - alert: HostKeyChanged
                    when: host_key_changed == 1
                    severity: critical
                """))
        _ = evaluator.evaluate(cpu(95, minute: 0), now: at(0))
        #expect(moves(evaluator.evaluate(failure(.connect, minute: 1), now: at(1))) == [])
        #expect(moves(evaluator.evaluate(failure(.timeout, minute: 2), now: at(2))) == [])
        #expect(
            moves(evaluator.evaluate(failure(.connect, minute: 3), now: at(3))) == ["HostUnreachable  inactive→firing"])
        #expect(evaluator.alerts.map(\.name) == ["Busy", "HostUnreachable"])
        #expect(
            moves(evaluator.evaluate(cpu(5, minute: 4), now: at(4))).sorted() == [
                "Busy  firing→resolved", "HostUnreachable  firing→resolved",
            ])
        #expect(
            moves(evaluator.evaluate(failure(.hostKey, minute: 5), now: at(5))) == ["HostKeyChanged  inactive→firing"])
    }

    @Test func aRestoredFiringAlertIsNotFiredAgain() throws {
        let rules = try rules("  - alert: Busy\n    when: cpu_busy_percent > 90\n    for: 1m\n")
        var first = AlertEvaluator(rules: rules)
        _ = first.evaluate(cpu(95, minute: 0), now: at(0))
        _ = first.evaluate(cpu(95, minute: 1), now: at(1))
        #expect(first.alerts.map(\.state) == [.firing])
        var second = AlertEvaluator(rules: rules)
        second.restore(first.alerts)
        #expect(moves(second.evaluate(cpu(95, minute: 2), now: at(2))) == [])
        #expect(second.alerts.first?.firedAt == at(1))
        #expect(moves(second.evaluate(cpu(5, minute: 3), now: at(3))) == ["Busy  firing→resolved"])
    }

    /// An alert restored into an evaluator that has already seen the host quiet (so it skips the rule's lookup)
    /// is still resolved once its condition does not hold.
    @Test func anAlertRestoredAfterTheHostWasSeenQuietStillResolves() throws {
        let rules = try rules("  - alert: Busy\n    when: cpu_busy_percent > 90\n    for: 1m\n")
        var first = AlertEvaluator(rules: rules)
        _ = first.evaluate(cpu(95, minute: 0), now: at(0))
        _ = first.evaluate(cpu(95, minute: 1), now: at(1))
        var second = AlertEvaluator(rules: rules)
        #expect(moves(second.evaluate(cpu(5, minute: 0), now: at(0))) == [])
        second.restore(first.alerts)
        #expect(moves(second.evaluate(cpu(5, minute: 2), now: at(2))) == ["Busy  firing→resolved"])
        #expect(second.alerts.isEmpty)
    }

    @Test func aReloadKeepsTheStateOfRulesThatStayAndResolvesRemovedOnes() throws {
        var evaluator = AlertEvaluator(
            rules: try rules(
                "  - alert: Busy\n    when: cpu_busy_percent > 90\n  - alert: Busier\n    when: cpu_busy_percent > 91\n"
            ))
        #expect(evaluator.evaluate(cpu(95, minute: 0), now: at(0)).count == 2)
        let moved = evaluator.replaceRules(try rules("  - alert: Busy\n    when: cpu_busy_percent > 99\n"), now: at(1))
        #expect(moves(moved) == ["Busier  firing→resolved"])
        #expect(moves(evaluator.evaluate(cpu(95, minute: 2), now: at(2))) == ["Busy  firing→resolved"])
    }

    @Test func hostPatternsChooseTheHostsARuleAppliesTo() throws {
        var evaluator = AlertEvaluator(
            rules: try rules("  - alert: Busy\n    when: cpu_busy_percent > 90\n    hosts: [\"web*\", \"!web2\"]\n"))
        #expect(evaluator.evaluate(cpu(95, host: "web1", minute: 0), now: at(0)).count == 1)
        #expect(evaluator.evaluate(cpu(95, host: "web2", minute: 0), now: at(0)).isEmpty)
        #expect(evaluator.evaluate(cpu(95, host: "db1", minute: 0), now: at(0)).isEmpty)
    }

    @Test func aHostThatLeavesTheFleetEndsItsAlerts() throws {
        var evaluator = AlertEvaluator(
            rules: try rules(
                "  - alert: Busy\n    when: cpu_busy_percent > 90\n  - alert: Slow\n    when: cpu_busy_percent > 91\n    for: 1h\n"
            ))
        _ = evaluator.evaluate(cpu(95, host: "web1", minute: 0), now: at(0))
        _ = evaluator.evaluate(cpu(95, host: "web2", minute: 0), now: at(0))
        let moved = evaluator.removeHost("web1", now: at(1))
        #expect(moves(moved).sorted() == ["Busy  firing→resolved", "Slow  pending→inactive"])
        #expect(evaluator.alerts.map(\.host) == ["web2", "web2"])
    }
}
