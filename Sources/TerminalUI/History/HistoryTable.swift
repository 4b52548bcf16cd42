import Foundation
import HostStats
public import HostscopeCore
import ValueFormats

/// `history` on a terminal: per host, a header with the range and the samples, then one row per figure with its
/// smallest, mean, largest and last value over the range, and the errors. Host text is escaped.
public enum HistoryTable {
    /// The tables of every host in `summary`, a blank line apart; a line saying so when there are none.
    public static func render(_ summary: HistorySummary, width: Int) -> String {
        guard !summary.hosts.isEmpty else { return "no records in that range\n" }
        return summary.hosts.map { render($0, width: width) }.joined(separator: "\n")
    }

    /// One host's table.
    public static func render(_ host: HostHistorySummary, width: Int) -> String {
        var header = [TerminalText.sanitize(host.host)]
        if let first = host.first, let last = host.last {
            header.append(time(first) + " to " + time(last) + " UTC")
            header.append(FigureText.uptime(last.timeIntervalSince(first)))
        }
        let errors = host.errors == 1 ? "1 error" : "\(host.errors) errors"
        header.append("\(host.samples) sample\(host.samples == 1 ? "" : "s"), \(errors)")
        var lines = TerminalText.wrapped(header, width: width, indent: "  ")

        var rows = [["FIGURE", "MIN", "AVG", "MAX", "LAST"]]
        for figure in HostHistorySummary.Figure.allCases {
            let values = host[figure]
            let text = { (value: Double?) in value.map { Self.text($0, of: figure) } ?? "-" }
            rows.append([
                name(figure), text(values.minimum), text(values.mean), text(values.maximum), text(values.last),
            ])
        }
        // The figures' columns share one width, so that the table reads as a grid.
        let nameWidth = max(rows.map { $0[0].count }.max() ?? 0, "errors".count)
        let figureWidth = rows.flatMap { $0.dropFirst() }.map(\.count).max() ?? 0
        for row in rows {
            lines.append(
                ([TerminalText.padded(row[0], to: nameWidth)]
                    + row.dropFirst().map { TerminalText.padded($0, to: figureWidth, right: true) })
                    .joined(separator: "  "))
        }
        var errorRow = TerminalText.padded("errors", to: nameWidth) + "  \(host.errors) of \(host.samples)"
        if let failure = host.lastError {
            errorRow +=
                "; last at " + time(failure.collectedAt) + " (" + failure.kind.rawValue + "): "
                + TerminalText.sanitize(failure.message)
        }
        lines.append(TerminalText.truncate(errorRow, to: width))
        return lines.joined(separator: "\n") + "\n"
    }

    static func name(_ figure: HostHistorySummary.Figure) -> String {
        switch figure {
        case .cpuBusy: "CPU busy"
        case .memoryUsed: "memory used"
        case .load1m: "load 1m"
        case .fullestDisk: "fullest disk"
        case .networkReceive: "net received"
        case .networkTransmit: "net sent"
        }
    }

    static func text(_ value: Double, of figure: HostHistorySummary.Figure) -> String {
        switch figure {
        case .cpuBusy, .memoryUsed, .fullestDisk: FigureText.percent(value)
        case .load1m: String(format: "%.2f", value)
        case .networkReceive, .networkTransmit: FigureText.rate(value)
        }
    }

    /// `2026-11-18 11:06:40`, UTC.
    static func time(_ date: Date) -> String {
        TimeText.utc(RFC3339.format(date, precision: .seconds))
    }
}
