import Foundation
public import HostStats
import HostscopeCore

/// The snapshot as a person reads it on a terminal: a summary, then disks, network and top
/// processes as aligned columns. Every string from the host is sanitised for the terminal.
public enum SnapshotTable {
    public static func render(_ record: SnapshotRecord, width: Int = 120) -> String {
        switch record {
        case .failure(let failure):
            return
                "\(TerminalText.sanitize(failure.host))  ERROR (\(failure.kind.rawValue)): \(TerminalText.sanitize(failure.message))\n"
        case .snapshot(let snapshot):
            return render(snapshot, width: width)
        }
    }

    static func render(_ snapshot: Snapshot, width: Int) -> String {
        var lines: [String] = []
        var header = TerminalText.sanitize(snapshot.host)
        if let os = snapshot.os {
            header += "  " + TerminalText.sanitize(os.name ?? os.family)
            if let kernel = os.kernel { header += " · kernel " + TerminalText.sanitize(kernel) }
            if let arch = os.arch { header += " " + TerminalText.sanitize(arch) }
        }
        header += " · up " + FigureText.uptime(snapshot.uptimeSeconds)
        if let load = snapshot.load {
            header += String(format: " · load %.2f %.2f %.2f", load.one, load.five, load.fifteen)
        }
        lines.append(header)

        if let cpu = snapshot.cpu {
            var line = "CPU   " + FigureText.percent(cpu.busyPercent) + " busy"
            if cpu.busyPercent != nil {
                // macOS reports no iowait or steal: leave them out rather than show a false 0.0.
                let shares = [
                    ("user", cpu.userPercent), ("system", cpu.systemPercent), ("iowait", cpu.iowaitPercent),
                    ("steal", cpu.stealPercent),
                ].compactMap { name, value in value.map { name + " " + String(format: "%.1f", $0) } }
                if !shares.isEmpty { line += " (" + shares.joined(separator: ", ") + ")" }
            }
            if let cores = cpu.cores { line += " · \(cores) core\(cores == 1 ? "" : "s")" }
            if let sample = cpu.sampleMs { line += String(format: " · over %.0f ms", sample) }
            lines.append(line)
        }
        if let memory = snapshot.memory {
            var line = "MEM   " + FigureText.bytes(memory.usedBytes) + " used of " + FigureText.bytes(memory.totalBytes)
            line += " (" + FigureText.percent(memory.usedPercent) + ")"
            line += " · available " + FigureText.bytes(memory.availableBytes)
            if let swapTotal = memory.swapTotalBytes {
                line += " · swap " + FigureText.bytes(memory.swapUsedBytes) + " of " + FigureText.bytes(swapTotal)
            }
            lines.append(line)
        }

        if !snapshot.disks.isEmpty {
            lines.append("")
            var rows = [["MOUNT", "FILESYSTEM", "TYPE", "SIZE", "USED", "AVAIL", "USE%", "READ", "WRITE"]]
            for disk in snapshot.disks {
                rows.append([
                    TerminalText.sanitize(disk.mount), TerminalText.sanitize(disk.filesystem),
                    TerminalText.sanitize(disk.type ?? "-"), FigureText.bytes(disk.sizeBytes),
                    FigureText.bytes(disk.usedBytes), FigureText.bytes(disk.availableBytes),
                    FigureText.percent(disk.usedPercent), FigureText.rate(disk.readBytesPerSecond),
                    FigureText.rate(disk.writeBytesPerSecond),
                ])
            }
            lines += columns(rows, rightAligned: [3, 4, 5, 6, 7, 8], width: width, flexible: 1)
        }
        if !snapshot.network.isEmpty {
            lines.append("")
            var rows = [["INTERFACE", "RX", "TX", "RX TOTAL", "TX TOTAL", "ERRORS", "DROPPED"]]
            for interface in snapshot.network {
                let errors = (interface.rxErrors ?? 0) + (interface.txErrors ?? 0)
                let dropped = (interface.rxDropped ?? 0) + (interface.txDropped ?? 0)
                rows.append([
                    TerminalText.sanitize(interface.interface), FigureText.rate(interface.rxBytesPerSecond),
                    FigureText.rate(interface.txBytesPerSecond), FigureText.bytes(interface.rxBytes),
                    FigureText.bytes(interface.txBytes), String(errors), String(dropped),
                ])
            }
            lines += columns(rows, rightAligned: [1, 2, 3, 4, 5, 6], width: width, flexible: 0)
        }
        if !snapshot.processes.isEmpty {
            lines.append("")
            var rows = [["PID", "USER", "CPU%", "MEM%", "RSS", "COMMAND"]]
            for process in snapshot.processes {
                rows.append([
                    String(process.pid), TerminalText.sanitize(process.user ?? "-"),
                    process.cpuPercent.map { String(format: "%.1f", $0) } ?? "-",
                    process.memoryPercent.map { String(format: "%.1f", $0) } ?? "-",
                    FigureText.bytes(process.rssBytes), TerminalText.sanitize(process.command),
                ])
            }
            lines += columns(rows, rightAligned: [0, 2, 3, 4], width: width, flexible: 5)
        }
        if !snapshot.warnings.isEmpty {
            lines.append("")
            for warning in snapshot.warnings { lines.append("warning: " + TerminalText.sanitize(warning)) }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Aligns rows into columns two spaces apart; the `flexible` column is cut so the line fits
    /// `width`.
    static func columns(_ rows: [[String]], rightAligned: Set<Int>, width: Int, flexible: Int) -> [String] {
        guard let first = rows.first else { return [] }
        var widths = first.indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        let total = widths.reduce(0, +) + 2 * (widths.count - 1)
        if total > width, widths.indices.contains(flexible) {
            widths[flexible] = max(first[flexible].count, widths[flexible] - (total - width))
        }
        return rows.map { row in
            row.indices.map { column in
                var cell = TerminalText.truncate(row[column], to: widths[column])
                let padding = String(repeating: " ", count: max(0, widths[column] - cell.count))
                if rightAligned.contains(column) {
                    cell = padding + cell
                } else if column < row.count - 1 {
                    cell += padding
                }
                return cell
            }.joined(separator: "  ")
        }
    }
}
