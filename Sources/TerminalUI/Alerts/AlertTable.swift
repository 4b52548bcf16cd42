public import Alerting
public import Storage
import ValueFormats

/// `hostscope alerts` on a terminal: the pending and firing alerts, or the transitions, one line each.
public enum AlertTable {
    /// The alerts now: state, name, severity, host, device, since when (UTC), value and summary.
    public static func render(_ alerts: [StoredAlert], width: Int) -> String {
        guard !alerts.isEmpty else { return "no pending or firing alerts\n" }
        let rows = alerts.map { alert in
            [
                alert.state, alert.name, alert.severity, alert.host, alert.subject,
                TimeText.utc(RFC3339.format(alert.firedAt ?? alert.activeAt, precision: .seconds)),
                AlertValueText.plain(alert.value), alert.annotations["summary"] ?? "",
            ]
        }
        return table(["STATE", "ALERT", "SEVERITY", "HOST", "DEVICE", "SINCE (UTC)", "VALUE", "SUMMARY"], rows, width)
    }

    /// Transitions, oldest first: when (UTC), from → to, name, severity, host, device, value.
    public static func render(_ transitions: [StoredAlertTransition], width: Int) -> String {
        guard !transitions.isEmpty else { return "no alert transitions\n" }
        let rows = transitions.map { transition in
            [
                TimeText.utc(RFC3339.format(transition.at, precision: .seconds)),
                "\(transition.from)→\(transition.to)", transition.name, transition.severity, transition.host,
                subject(of: transition.labels), AlertValueText.plain(transition.value),
            ]
        }
        return table(["AT (UTC)", "CHANGE", "ALERT", "SEVERITY", "HOST", "DEVICE", "VALUE"], rows, width)
    }

    /// The line `watch` prints on stderr for a transition.
    public static func line(_ transition: AlertTransition) -> String {
        let alert = transition.alert
        let device = alert.subject.isEmpty ? "" : " \(alert.subject)"
        let summary = alert.annotations["summary"].map { ": \($0)" } ?? ""
        return "alert \(alert.name) (\(alert.severity)) on \(alert.host)\(device) \(transition.to.rawValue)"
            + " [\(AlertValueText.plain(alert.value))]\(summary)"
    }

    private static func subject(of labels: [String: String]) -> String {
        labels["mountpoint"] ?? labels["device"] ?? labels["cpu"] ?? ""
    }

    private static func table(_ header: [String], _ rows: [[String]], _ width: Int) -> String {
        var widths = header.map(\.count)
        for row in rows {
            for (index, cell) in row.enumerated() { widths[index] = min(max(widths[index], cell.count), 40) }
        }
        var out = ""
        for row in [header] + rows {
            var line = zip(row, widths).map { TerminalText.padded(TerminalText.truncate($0, to: $1), to: $1) }
                .joined(separator: "  ")
            while line.hasSuffix(" ") { line.removeLast() }
            out += TerminalText.truncate(line, to: max(20, width)) + "\n"
        }
        return out
    }
}
