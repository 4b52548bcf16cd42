import Foundation
public import HostStats
import HostscopeCore

/// The snapshot as a person reads it on a terminal: a summary, then disks, network and top
/// processes as aligned columns. Every string from the host is sanitised for the terminal.
public enum SnapshotTable {
    /// The record as a block of lines; pseudo filesystems and virtual interfaces only with `all`
    /// (``ShownDevices``).
    public static func render(_ record: SnapshotRecord, width: Int = 120, all: Bool = false) -> String {
        switch record {
        case .failure(let failure):
            return
                "\(TerminalText.sanitize(failure.host))  ERROR (\(failure.kind.rawValue)): \(TerminalText.sanitize(failure.message))\n"
        case .snapshot(let snapshot):
            return render(snapshot, width: width, all: all)
        }
    }

    static func render(_ snapshot: Snapshot, width: Int, all: Bool = false) -> String {
        var lines: [String] = []
        var system = TerminalText.sanitize(snapshot.host)
        var header: [String] = []
        if let os = snapshot.os {
            system += "  " + TerminalText.sanitize(os.name ?? os.family)
            var kernel: [String] = []
            if let name = os.kernel { kernel.append("kernel " + TerminalText.sanitize(name)) }
            if let arch = os.arch { kernel.append(TerminalText.sanitize(arch)) }
            header.append(system)
            if !kernel.isEmpty { header.append(kernel.joined(separator: " ")) }
        } else {
            header.append(system)
        }
        header.append("up " + FigureText.uptime(snapshot.uptimeSeconds))
        if let load = snapshot.load {
            header.append(String(format: "load %.2f %.2f %.2f", load.one, load.five, load.fifteen))
        }
        lines += TerminalText.wrapped(header, width: width, indent: "  ")

        if let cpu = snapshot.cpu {
            // No window (`--sample 0`): one read, so no busy share; say why rather than show `- busy`.
            var busy =
                cpu.busyPercent == nil && cpu.sampleMs == nil
                ? "CPU   busy not measured (one read, no sampling window)"
                : "CPU   " + FigureText.percent(cpu.busyPercent) + " busy"
            if cpu.busyPercent != nil {
                // macOS reports no iowait or steal: leave them out rather than show a false 0.0.
                let shares = [
                    ("user", cpu.userPercent), ("system", cpu.systemPercent), ("iowait", cpu.iowaitPercent),
                    ("steal", cpu.stealPercent),
                ].compactMap { name, value in value.map { name + " " + String(format: "%.1f", $0) } }
                if !shares.isEmpty { busy += " (" + shares.joined(separator: ", ") + ")" }
            }
            var parts = [busy]
            if let cores = cpu.cores { parts.append("\(cores) core\(cores == 1 ? "" : "s")") }
            if let sample = cpu.sampleMs { parts.append(String(format: "over %.0f ms", sample)) }
            lines += TerminalText.wrapped(parts, width: width, indent: "      ")
        }
        if let memory = snapshot.memory {
            var parts = [
                "MEM   " + FigureText.bytes(memory.usedBytes) + " used of " + FigureText.bytes(memory.totalBytes) + " ("
                    + FigureText.percent(memory.usedPercent) + ")",
                "available " + FigureText.bytes(memory.availableBytes),
            ]
            if let swapTotal = memory.swapTotalBytes {
                parts.append("swap " + FigureText.bytes(memory.swapUsedBytes) + " of " + FigureText.bytes(swapTotal))
            }
            lines += TerminalText.wrapped(parts, width: width, indent: "      ")
        }
        if let node = snapshot.node, !node.pressure.isEmpty {
            lines += TerminalText.wrapped(pressureParts(node), width: width, indent: "      ")
        }

        let disks = ShownDevices.disks(snapshot.disks, all: all)
        let network = ShownDevices.interfaces(snapshot.network, all: all)
        if !disks.isEmpty {
            lines.append("")
            lines += diskTable(disks, width: width)
        }
        if !network.isEmpty {
            lines.append("")
            var rows = [["INTERFACE", "RX", "TX", "RX TOTAL", "TX TOTAL", "ERRORS", "DROPPED"]]
            for interface in network {
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
        if let note = ShownDevices.hiddenNote(
            disks: snapshot.disks.count - disks.count, interfaces: snapshot.network.count - network.count)
        {
            lines.append(note)
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

    /// Several hosts as one line each (CPU, memory, load, the fullest real filesystem, network rates without
    /// the loopback, uptime), in the order given, then the whole sentence of each host that failed.
    public static func summary(_ records: [SnapshotRecord], width: Int = 120) -> String {
        var rows = [["HOST", "STATE", "CPU%", "MEM%", "LOAD", "DISK%", "RX/s", "TX/s", "UP"]]
        var failures: [String] = []
        for record in records {
            switch record {
            case .snapshot(let snapshot):
                let fullest = ShownDevices.disks(snapshot.disks, all: false).first?.usedPercent
                rows.append([
                    TerminalText.sanitize(snapshot.host), "up", FigureText.percent(snapshot.cpu?.busyPercent),
                    FigureText.percent(snapshot.memory?.usedPercent),
                    snapshot.load.map { String(format: "%.2f", $0.one) } ?? "-", FigureText.percent(fullest),
                    FigureText.humanRate(snapshot.networkReceiveRate),
                    FigureText.humanRate(snapshot.networkTransmitRate), FigureText.uptime(snapshot.uptimeSeconds),
                ])
            case .failure(let failure):
                rows.append(
                    [TerminalText.sanitize(failure.host), failure.kind.rawValue] + Array(repeating: "-", count: 7))
                failures.append(render(record, width: width).trimmingCharacters(in: .newlines))
            }
        }
        var lines = columns(rows, rightAligned: [2, 3, 4, 5, 6, 7, 8], width: width, flexible: 0)
        if !failures.isEmpty { lines += [""] + failures }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `PSI   cpu 12.3% some · io 3.3% some 0.7% full · …` (the kernel's stall shares over the last 10 s) and
    /// the run queue: where a person looks for why a host is slow beyond its CPU share.
    static func pressureParts(_ node: NodeFigures) -> [String] {
        var parts: [String] = []
        for resource in ["cpu", "io", "memory"] {
            let stalls = node.pressure.filter { $0.resource == resource }
            guard !stalls.isEmpty else { continue }
            let shares = stalls.map { String(format: "%.1f%%", $0.avg10) + " " + $0.kind }
            parts.append((parts.isEmpty ? "PSI   " : "") + resource + " " + shares.joined(separator: " "))
        }
        if let activity = node.activity, let running = activity.procsRunning {
            parts.append("\(running) running, \(activity.procsBlocked.map(String.init) ?? "-") blocked")
        }
        return parts
    }

    /// The filesystems, within `width` columns: the figures as `df -h` prints them (`20G`, `148K/s`) when the
    /// binary units (`19.5 GiB`) leave too little room, then the mount point shortened in its middle
    /// (`/var/lib/…/merged`), the filesystem from its start (`…vg0-root`) and the type at its end.
    static func diskTable(_ disks: [DiskStats], width: Int) -> [String] {
        let header = ["MOUNT", "FILESYSTEM", "TYPE", "SIZE", "USED", "AVAIL", "USE%", "READ", "WRITE"]
        let names = disks.map {
            [
                TerminalText.sanitize($0.mount), TerminalText.sanitize($0.filesystem),
                TerminalText.sanitize($0.type ?? "-"),
            ]
        }
        func figures(compact: Bool) -> [[String]] {
            disks.map { disk in
                let size = { (value: UInt64?) in
                    compact ? value.map(FigureText.humanSize) ?? "-" : FigureText.bytes(value)
                }
                let rate = { (value: Double?) in compact ? FigureText.humanRate(value) : FigureText.rate(value) }
                return [
                    size(disk.sizeBytes), size(disk.usedBytes), size(disk.availableBytes),
                    FigureText.percent(disk.usedPercent), rate(disk.readBytesPerSecond), rate(disk.writeBytesPerSecond),
                ]
            }
        }
        func widths(_ rows: [[String]]) -> [Int] {
            (0..<header.count).map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        }
        var rows = zip(names, figures(compact: false)).map { $0 + $1 }
        var columnWidths = widths(rows)
        let separators = 2 * (header.count - 1)
        if columnWidths.reduce(0, +) + separators > width {
            rows = zip(names, figures(compact: true)).map { $0 + $1 }
            columnWidths = widths(rows)
        }
        // What the names may take once the figures have theirs.
        let room = width - separators - columnWidths[3...].reduce(0, +)
        var (mount, filesystem, type) = (columnWidths[0], columnWidths[1], columnWidths[2])
        if mount + filesystem + type > room {
            // Types are short words (ext4, tmpfs, devtmpfs, overlay); a longer one is cut at its end.
            type = max(header[2].count, min(type, 8))
            let names = max(header[0].count + header[1].count, room - type)
            if mount + filesystem > names {
                filesystem = max(header[1].count, min(filesystem, names * 2 / 5))
                mount = max(header[0].count, names - filesystem)
                // A mount column narrower than its share leaves the rest to the filesystem.
                if columnWidths[0] < mount {
                    mount = columnWidths[0]
                    filesystem = max(header[1].count, names - mount)
                }
            }
        }
        columnWidths[0] = mount
        columnWidths[1] = filesystem
        columnWidths[2] = type
        return ([header] + rows).map { row in
            var cells = row
            cells[0] = TerminalText.truncateMiddle(cells[0], to: mount)
            cells[1] = TerminalText.truncateStart(cells[1], to: filesystem)
            cells[2] = TerminalText.truncate(cells[2], to: type)
            return cells.enumerated().map { column, cell in
                TerminalText.padded(cell, to: columnWidths[column], right: column >= 3)
            }.joined(separator: "  ")
        }
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
