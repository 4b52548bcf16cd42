import Foundation
import Testing

@testable import Storage

/// The alerts' tables: the current alerts replaced per host in one transaction with the transitions, and the
/// transitions read back newest-bounded, oldest first.
@Suite struct AlertStoreTests {
    private let at = Date(timeIntervalSince1970: 1_800_000_000)

    private func alert(_ host: String, _ state: String, fired: Bool) -> StoredAlert {
        StoredAlert(
            fingerprint: "alertname=A,instance=\(host)", ruleKey: "A/warning", subject: "", host: host, name: "A",
            severity: "warning", state: state, value: 91.5, activeAt: at,
            firedAt: fired ? at.addingTimeInterval(60) : nil,
            lastHeldAt: at.addingTimeInterval(60), labels: ["alertname": "A", "instance": host],
            annotations: ["summary": "CPU at 91.5% \u{1F525}"])
    }

    private func transition(_ host: String, _ from: String, _ to: String, second: Double) -> StoredAlertTransition {
        StoredAlertTransition(
            at: at.addingTimeInterval(second), fingerprint: "alertname=A,instance=\(host)", host: host, name: "A",
            severity: "warning", from: from, to: to, value: 91.5, labels: ["alertname": "A", "instance": host],
            annotations: [:])
    }

    @Test func alertsAreReplacedPerHostAndTransitionsKeptInOrder() async throws {
        let directory = try TemporaryDirectory()
        let store = try await StorageDatabase.fresh(in: directory).alerts
        try await store.record(
            transitions: [transition("web1", "inactive", "pending", second: 0)], replacing: ["web1"],
            with: [alert("web1", "pending", fired: false)])
        try await store.record(
            transitions: [transition("web2", "inactive", "firing", second: 1)], replacing: ["web2"],
            with: [alert("web2", "firing", fired: true)])
        try await store.record(
            transitions: [transition("web1", "pending", "firing", second: 60)], replacing: ["web1"],
            with: [alert("web1", "firing", fired: true)])
        #expect(
            try await store.current() == [alert("web1", "firing", fired: true), alert("web2", "firing", fired: true)])
        try await store.record(
            transitions: [transition("web2", "firing", "resolved", second: 120)], replacing: ["web2"], with: [])
        #expect(try await store.current() == [alert("web1", "firing", fired: true)])
        let all = try await store.transitions()
        #expect(all.map(\.to) == ["pending", "firing", "firing", "resolved"])
        #expect(try await store.transitions(limit: 2).map(\.to) == ["firing", "resolved"])
        #expect(try await store.transitions(since: at.addingTimeInterval(30), host: "web1").map(\.to) == ["firing"])
    }
}
