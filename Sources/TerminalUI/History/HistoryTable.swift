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
        // What is left of the line draws each figure's course over the range.
        let trendWidth = min(FigureSummary.trendCapacity, width - nameWidth - 4 * (figureWidth + 2) - 2)
        for (index, row) in rows.enumerated() {
            var line =
                ([TerminalText.padded(row[0], to: nameWidth)]
                + row.dropFirst().map { TerminalText.padded($0, to: figureWidth, right: true) })
                .joined(separator: "  ")
            if trendWidth >= 8, HostHistorySummary.Figure.allCases.contains(where: { host[$0].count > 1 }) {
                line +=
                    "  "
                    + (index == 0
                        ? "TREND"
                        : trend(
                            host[HostHistorySummary.Figure.allCases[index - 1]],
                            of: HostHistorySummary.Figure.allCases[index - 1], width: trendWidth))
            }
            lines.append(line)
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

    /// A figure's course as a sparkline: shares on their 0–100 scale, other figures from 0 to their greatest.
    static func trend(_ summary: FigureSummary, of figure: HostHistorySummary.Figure, width: Int) -> String {
        let values = summary.trend
        let shown = Array(values.suffix(width))
        switch figure {
        case .cpuBusy, .memoryUsed, .fullestDisk:
            return Sparkline.render(shown, width: shown.count)
        case .load1m, .networkReceive, .networkTransmit:
            return Sparkline.render(shown, width: shown.count, lowest: 0, highest: shown.max() ?? 0)
        }
    }

    /// Steps of `history --step` on a terminal: per host, a line for each step with its samples, errors and the
    /// mean of each figure; hosts a blank line apart.
    public static func render(steps: [HistoryStep], length: Duration, width: Int) -> String {
        guard !steps.isEmpty else { return "no records in that range\n" }
        var byHost: [String: [HistoryStep]] = [:]
        for step in steps { byHost[step.host, default: []].append(step) }
        return byHost.keys.sorted().map { host in
            let rows = byHost[host]!.sorted { $0.start < $1.start }
            var lines = [
                TerminalText.sanitize(host) + "  \(rows.count) step\(rows.count == 1 ? "" : "s") of "
                    + DurationText.format(length)
            ]
            var table = [["START (UTC)", "SAMPLES", "ERRORS", "CPU", "MEM", "LOAD", "DISK", "RX", "TX"]]
            for step in rows {
                let summary = step.summary
                let mean = { (figure: HostHistorySummary.Figure) in
                    summary[figure].mean.map { text($0, of: figure) } ?? "-"
                }
                table.append(
                    [time(step.start), String(summary.samples), String(summary.errors)]
                        + HostHistorySummary.Figure.allCases.map(mean))
            }
            lines += SnapshotTable.columns(table, rightAligned: Set(1..<9), width: width, flexible: 0)
            return lines.joined(separator: "\n") + "\n"
        }.joined(separator: "\n")
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
