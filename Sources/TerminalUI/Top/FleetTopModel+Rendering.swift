import Alerting
public import Foundation
import HostStats
public import HostscopeCore
import ValueFormats

/// Drawing `hostscope top`: the fleet list and a host's detail, as exactly `height` lines of `width` columns.
extension FleetTopModel {
    /// The screen as plain lines (what a terminal without colour shows); for tests and goldens.
    public mutating func plainLines(width: Int, height: Int, now: Date) -> [String] {
        lines(width: width, height: height, now: now).map { $0.line.plain }
    }

    /// The whole screen, drawn from the top left corner over what was there.
    public mutating func screen(width: Int, height: Int, now: Date, colours: Bool) -> TerminalOutput {
        var output = TerminalOutput.home
        let drawn = lines(width: width, height: height, now: now)
        for (index, row) in drawn.enumerated() {
            output += row.line.output(colours: colours, highlighted: row.highlighted)
            if index < drawn.count - 1 { output += TerminalOutput("\r\n") }
        }
        return output
    }

    mutating func lines(width: Int, height: Int, now: Date) -> [(line: StyledLine, highlighted: Bool)] {
        let width = max(width, 40)
        let height = max(height, 6)
        var body: [(line: StyledLine, highlighted: Bool)]
        switch screen {
        case .fleet: body = fleetLines(width: width, height: height, now: now)
        case .detail(let host): body = detailLines(host, width: width, height: height, now: now)
        case .alerts: body = alertLines(width: width, now: now).map { ($0, false) }
        }
        body = Array(body.prefix(height - 1))
        while body.count < height - 1 { body.append((StyledLine(), false)) }
        body.append((footer(), false))
        return body.map { ($0.line.fitted(to: width), $0.highlighted) }
    }

    // MARK: - Fleet

    /// Column widths for a screen `width` wide: the sparklines take what is left after the figures.
    struct FleetColumns {
        var name: Int
        var spark: Int

        init(width: Int, names: [String]) {
            // marker 2, state 5, cpu 6, mem 6, load 6, disk 5, net 10, age 5, with a space after each.
            let fixed = 2 + 6 + 7 + 7 + 7 + 6 + 11 + 5
            let longest = max(4, names.map(\.count).max() ?? 4)
            name = min(max(8, longest), width >= 120 ? 28 : 16)
            let left = width - fixed - name - 1
            spark = max(0, min(30, (left - 2) / 2))
        }
    }

    private mutating func fleetLines(width: Int, height: Int, now: Date) -> [(line: StyledLine, highlighted: Bool)] {
        let visible = visibleHosts
        let columns = FleetColumns(width: width, names: visible)
        var lines: [(line: StyledLine, highlighted: Bool)] = [(header(now: now), false)]
        var headings = StyledLine()
        headings.column("", 1)
        headings.column("HOST", columns.name, .bold)
        headings.column("STATE", 5, .bold)
        headings.column("CPU%", 6, .bold, right: true)
        if columns.spark > 0 { headings.column("cpu", columns.spark, .dim) }
        headings.column("MEM%", 6, .bold, right: true)
        if columns.spark > 0 { headings.column("mem", columns.spark, .dim) }
        headings.column("LOAD", 6, .bold, right: true)
        headings.column("DISK%", 5, .bold, right: true)
        headings.column("NET/s", 10, .bold, right: true)
        headings.column("AGE", 5, .bold, right: true)
        lines.append((headings, false))
        if visible.isEmpty {
            lines.append((StyledLine(filter.isEmpty ? "no hosts" : "no host matches \"\(filter)\"", .dim), false))
            return lines
        }
        // Rows left for hosts (an expanded error takes the lines its sentence needs).
        let expandedErrors = visible.filter(expanded.contains).reduce(into: [String: [String]]()) { errors, name in
            guard let state = host(name)?.state, state.phase != .up, let error = Self.errorText(state) else { return }
            errors[name] = TerminalText.wordWrapped(error, width: width - 4).map { "    " + $0 }
        }
        let rows = height - 3 - expandedErrors.values.map(\.count).reduce(0, +)
        scrollToSelection(rows: rows)
        for name in visible.dropFirst(firstRow) {
            guard let host = host(name) else { continue }
            lines.append((fleetRow(host, columns: columns, now: now), name == selected))
            for row in expandedErrors[name] ?? [] { lines.append((StyledLine(row, .red), false)) }
        }
        return lines
    }

    /// A host's last failure as `kind: sentence`, without the host name the sentence starts with (the row or the
    /// title already shows it).
    static func errorText(_ state: HostWatchState) -> String? {
        guard let error = state.lastError else { return nil }
        guard let colon = error.range(of: ": ") else { return error }
        let message = error[colon.upperBound...]
        let named = state.host + ": "
        return message.hasPrefix(named) ? String(error[..<colon.upperBound]) + message.dropFirst(named.count) : error
    }

    private func header(now: Date) -> StyledLine {
        let states = order.compactMap { host($0)?.state }
        let up = states.filter { $0.phase == .up }.count
        let failing = states.filter { $0.phase != .up && $0.phase != .connecting }.count
        let connecting = states.count - up - failing
        var line = StyledLine(title, .bold)
        line.add(" · \(states.count) host\(states.count == 1 ? "" : "s") · ")
        line.add("\(up) up", up > 0 ? .green : nil)
        line.add(" · ")
        line.add("\(failing) failing", failing > 0 ? .red : nil)
        if connecting > 0 { line.add(" · \(connecting) connecting") }
        if !firing.isEmpty { line.add(" · \(firing.count) firing", .red) }
        line.add(" · every \(DurationText.format(interval))")
        if sort != .name { line.add(" · sorted by \(sort.rawValue)") }
        if !filter.isEmpty && !editingFilter { line.add(" · filter \"\(filter)\"") }
        line.add(" · " + clock(now))
        return line
    }

    private func fleetRow(_ host: Host, columns: FleetColumns, now: Date) -> StyledLine {
        let state = host.state
        let current = state.phase == .up
        // A failing host's last figures stay, dimmed: they are as old as the AGE column says.
        let stale: TerminalOutput.Style? = current ? nil : .dim
        let snapshot = host.snapshot
        var line = StyledLine()
        line.column(host.state.host == selected ? ">" : "", 1)
        line.column(state.host, columns.name)
        // A host with a firing alert is marked after its state: `up!`, `fail!`.
        let mark = firing.values.contains { $0.host == state.host } ? "!" : ""
        switch state.phase {
        case .up: line.column("up" + mark, 5, mark.isEmpty ? .green : .red)
        case .connecting: line.column("conn" + mark, 5, mark.isEmpty ? .dim : .red)
        case .failing: line.column("fail" + mark, 5, .red)
        case .backingOff: line.column("wait" + mark, 5, .red)
        }
        let cpu = snapshot?.cpu?.busyPercent
        line.column(Self.percent(cpu), 6, stale ?? Self.threshold(cpu), right: true)
        if columns.spark > 0 {
            line.column(Self.sparkline(host.cpuHistory, width: columns.spark), columns.spark, stale ?? .cyan)
        }
        let memory = snapshot?.memory?.usedPercent
        line.column(Self.percent(memory), 6, stale ?? Self.threshold(memory), right: true)
        if columns.spark > 0 {
            line.column(Self.sparkline(host.memoryHistory, width: columns.spark), columns.spark, stale ?? .cyan)
        }
        line.column(snapshot?.load.map { String(format: "%.2f", $0.one) } ?? "-", 6, stale, right: true)
        let disk = snapshot?.fullestDiskUsedPercent
        line.column(disk.map { String(format: "%.0f%%", $0) } ?? "-", 5, stale ?? Self.threshold(disk), right: true)
        line.column(snapshot.flatMap(Self.networkRate).map(Self.compactBytes) ?? "-", 10, stale, right: true)
        let age = snapshot.map { Self.age(now.timeIntervalSince($0.collectedAt)) } ?? "-"
        line.column(age, 5, current ? .dim : .yellow, right: true)
        if !current, let error = Self.errorText(state), !expanded.contains(state.host) {
            line.add(error, .red)
        }
        return line
    }

    // MARK: - Detail

    private func detailLines(
        _ name: String, width: Int, height: Int, now: Date
    ) -> [(line: StyledLine, highlighted: Bool)] {
        guard let host = host(name) else { return [(StyledLine("\(name) left the watch"), false)] }
        var lines: [StyledLine] = []
        var title = StyledLine(name, .bold)
        let snapshot = host.snapshot
        if let os = snapshot?.os {
            title.add(" · " + [os.name ?? os.family, os.kernel].compactMap { $0 }.joined(separator: " "))
        }
        if let uptime = snapshot?.uptimeSeconds { title.add(" · up " + FigureText.uptime(uptime)) }
        if let load = snapshot?.load {
            title.add(String(format: " · load %.2f %.2f %.2f", load.one, load.five, load.fifteen))
        }
        if let snapshot {
            title.add(
                " · \(clock(snapshot.collectedAt)) (\(Self.age(now.timeIntervalSince(snapshot.collectedAt))) ago)",
                host.state.phase == .up ? .dim : .yellow)
        }
        lines.append(title)
        if !host.state.labels.isEmpty {
            // The fleet file's labels, wrapped rather than cut: they are what the host is filtered by.
            let text = Self.labelText(host.state.labels)
            for (index, row) in TerminalText.wordWrapped(text, width: width - 7, indent: "").enumerated() {
                var line = StyledLine(index == 0 ? "labels " : "       ", .bold)
                line.add(row, .dim)
                lines.append(line)
            }
        }
        if host.state.phase != .up, let error = Self.errorText(host.state) {
            for row in TerminalText.wordWrapped(error, width: width, indent: "  ") {
                lines.append(StyledLine(row, .red))
            }
        }
        for alert in firingAlerts(of: name) {
            var line = StyledLine("! " + alert.name, .red)
            line.add(" (\(alert.severity))" + (alert.subject.isEmpty ? "" : " \(alert.subject)"))
            if let summary = Self.summary(alert) { line.add(": " + summary) }
            lines.append(line)
        }
        guard let snapshot else {
            lines.append(StyledLine("no snapshot yet", .dim))
            return lines.map { ($0, false) }
        }
        lines.append(contentsOf: cpuLines(snapshot, history: host.cpuHistory, width: width))
        lines.append(contentsOf: memoryLines(snapshot, width: width))
        if let node = snapshot.node, !node.pressure.isEmpty {
            // The snapshot table's PSI line, without its label's padding: `PSI cpu 12.3% some · io …`.
            var parts = SnapshotTable.pressureParts(node)
            parts[0] = String(parts[0].dropFirst("PSI   ".count))
            var line = StyledLine("PSI ", .bold)
            line.add(parts.joined(separator: "  "))
            lines.append(line)
        }
        // Filesystems and interfaces share the screen with the processes: each table gets at most a quarter.
        let share = max(3, (height - lines.count) / 4)
        let disks = ShownDevices.disks(snapshot.disks, all: showsAllDevices)
        let interfaces = ShownDevices.interfaces(snapshot.network, all: showsAllDevices)
        lines.append(contentsOf: Self.limited(diskLines(disks, width: width), to: share, noun: "filesystem"))
        lines.append(contentsOf: Self.limited(interfaceLines(interfaces, width: width), to: share, noun: "interface"))
        let room = max(0, height - 1 - lines.count)
        lines.append(contentsOf: processLines(snapshot, width: width, rows: room))
        return lines.map { ($0, false) }
    }

    /// A heading and its rows cut to `count` lines, the last saying how many rows are not shown.
    static func limited(_ table: [StyledLine], to count: Int, noun: String) -> [StyledLine] {
        guard table.count > count, count >= 2 else { return table }
        let hidden = table.count - count + 1
        return Array(table.prefix(count - 1)) + [StyledLine("… \(hidden) more \(noun)\(hidden == 1 ? "" : "s")", .dim)]
    }

    private func cpuLines(_ snapshot: Snapshot, history: [Double], width: Int) -> [StyledLine] {
        guard let cpu = snapshot.cpu else { return [StyledLine("CPU  -", .bold)] }
        var line = StyledLine("CPU ", .bold)
        line.add(FigureText.percent(cpu.busyPercent), Self.threshold(cpu.busyPercent))
        line.add(" busy")
        for (label, value) in [
            ("usr", cpu.userPercent), ("sys", cpu.systemPercent), ("iowait", cpu.iowaitPercent),
            ("steal", cpu.stealPercent),
        ] {
            if let value { line.add("  \(label) " + String(format: "%.1f", value)) }
        }
        if let cores = cpu.cores { line.add("  \(cores) core\(cores == 1 ? "" : "s")") }
        let spark = width - line.width - 2
        if spark > 4 {
            line.add("  ")
            line.add(Self.sparkline(history, width: min(spark, 40)), .cyan)
        }
        var lines = [line]
        // Per-core bars, as many to a line as fit.
        let cell = 18
        let perLine = max(1, width / cell)
        var row = StyledLine()
        for (index, core) in cpu.perCore.enumerated() {
            if index > 0, index % perLine == 0 {
                lines.append(row)
                row = StyledLine()
            }
            let label = String(format: "%3d ", core.core)
            row.add(label, .dim)
            row.add(Self.bar(core.busyPercent, width: 7), Self.threshold(core.busyPercent))
            row.add(Self.percent(core.busyPercent).leftPadded(to: 6) + " ")
        }
        if !row.runs.isEmpty { lines.append(row) }
        return lines
    }

    private func memoryLines(_ snapshot: Snapshot, width: Int) -> [StyledLine] {
        guard let memory = snapshot.memory else { return [StyledLine("Mem  -", .bold)] }
        var line = StyledLine("Mem ", .bold)
        line.add(FigureText.percent(memory.usedPercent), Self.threshold(memory.usedPercent))
        line.add("  used \(FigureText.bytes(memory.usedBytes)) of \(FigureText.bytes(memory.totalBytes))")
        line.add("  avail \(FigureText.bytes(memory.availableBytes))")
        var parts: [String] = []
        if let buffers = memory.buffersBytes { parts.append("buffers \(FigureText.bytes(buffers))") }
        if let cached = memory.cachedBytes { parts.append("cached \(FigureText.bytes(cached))") }
        if let free = memory.freeBytes { parts.append("free \(FigureText.bytes(free))") }
        if let total = memory.swapTotalBytes, total > 0 {
            parts.append("swap \(FigureText.bytes(memory.swapUsedBytes)) of \(FigureText.bytes(total))")
        }
        let breakdown = parts.joined(separator: "  ")
        guard !breakdown.isEmpty else { return [line] }
        // The breakdown goes on a line of its own where one line would be cut.
        if line.width + 2 + breakdown.count <= width {
            line.add("  " + breakdown)
            return [line]
        }
        return [line, StyledLine("    " + breakdown)]
    }

    private func diskLines(_ disks: [DiskStats], width: Int) -> [StyledLine] {
        guard !disks.isEmpty else { return [] }
        let mountWidth = max(10, min(30, width - 60))
        var heading = StyledLine()
        heading.column("MOUNT", mountWidth, .bold)
        heading.column("TYPE", 6, .bold)
        heading.column("SIZE", 9, .bold, right: true)
        heading.column("USED", 9, .bold, right: true)
        heading.column("AVAIL", 9, .bold, right: true)
        heading.column("USE%", 5, .bold, right: true)
        heading.column("INODE%", 6, .bold, right: true)
        var lines = [heading]
        for disk in disks {
            var line = StyledLine()
            line.column(disk.mount, mountWidth)
            line.column(disk.type ?? "-", 6)
            line.column(FigureText.bytes(disk.sizeBytes), 9, right: true)
            line.column(FigureText.bytes(disk.usedBytes), 9, right: true)
            line.column(FigureText.bytes(disk.availableBytes), 9, right: true)
            line.column(
                disk.usedPercent.map { String(format: "%.0f%%", $0) } ?? "-", 5, Self.threshold(disk.usedPercent),
                right: true)
            let inodes: Double? =
                if let total = disk.inodesTotal, let used = disk.inodesUsed, total > 0 {
                    Double(used) / Double(total) * 100
                } else { nil }
            line.column(inodes.map { String(format: "%.0f%%", $0) } ?? "-", 6, Self.threshold(inodes), right: true)
            lines.append(line)
        }
        return lines
    }

    private func interfaceLines(_ interfaces: [NetworkInterfaceStats], width: Int) -> [StyledLine] {
        guard !interfaces.isEmpty else { return [] }
        var heading = StyledLine()
        heading.column("INTERFACE", 14, .bold)
        heading.column("RX/s", 11, .bold, right: true)
        heading.column("TX/s", 11, .bold, right: true)
        heading.column("RX ERR", 7, .bold, right: true)
        heading.column("TX ERR", 7, .bold, right: true)
        heading.column("DROP", 7, .bold, right: true)
        var lines = [heading]
        for interface in interfaces {
            var line = StyledLine()
            line.column(interface.interface, 14)
            line.column(interface.rxBytesPerSecond.map(Self.compactBytes) ?? "-", 11, right: true)
            line.column(interface.txBytesPerSecond.map(Self.compactBytes) ?? "-", 11, right: true)
            for count in [interface.rxErrors, interface.txErrors] {
                line.column(count.map(String.init) ?? "-", 7, (count ?? 0) > 0 ? .red : nil, right: true)
            }
            let dropped = (interface.rxDropped ?? 0) + (interface.txDropped ?? 0)
            let known = interface.rxDropped != nil || interface.txDropped != nil
            line.column(known ? String(dropped) : "-", 7, dropped > 0 ? .yellow : nil, right: true)
            lines.append(line)
        }
        return lines
    }

    private func processLines(_ snapshot: Snapshot, width: Int, rows: Int) -> [StyledLine] {
        guard rows >= 2, !snapshot.processes.isEmpty else { return [] }
        var heading = StyledLine()
        heading.column("PID", 7, .bold, right: true)
        heading.column("USER", 10, .bold)
        heading.column("CPU%", 6, processSort == .cpu ? .underline : .bold, right: true)
        heading.column("MEM%", 6, processSort == .memory ? .underline : .bold, right: true)
        heading.column("RSS", 9, .bold, right: true)
        heading.add("COMMAND", .bold)
        let sorted: [ProcessStats] =
            switch processSort {
            case .cpu: snapshot.processes.sorted { ($0.cpuPercent ?? -1) > ($1.cpuPercent ?? -1) }
            case .memory: snapshot.processes.sorted { ($0.memoryPercent ?? -1) > ($1.memoryPercent ?? -1) }
            case .pid: snapshot.processes.sorted { $0.pid < $1.pid }
            }
        var lines = [heading]
        for process in sorted.prefix(rows - 1) {
            var line = StyledLine()
            line.column(String(process.pid), 7, right: true)
            line.column(process.user ?? "-", 10)
            line.column(process.cpuPercent.map { String(format: "%.1f", $0) } ?? "-", 6, right: true)
            line.column(process.memoryPercent.map { String(format: "%.1f", $0) } ?? "-", 6, right: true)
            line.column(FigureText.bytes(process.rssBytes), 9, right: true)
            line.add(process.command)
            lines.append(line)
        }
        return lines
    }

    // MARK: - Footer and figures

    // MARK: - Alerts

    /// The firing alerts of every host, oldest first: host, name, severity, device, since when, summary.
    private func alertLines(width: Int, now: Date) -> [StyledLine] {
        let alerts = firingAlerts()
        var title = StyledLine("Firing alerts", .bold)
        title.add(" · \(alerts.count) · " + clock(now))
        var lines = [title]
        guard !alerts.isEmpty else {
            lines.append(StyledLine("no firing alerts", .dim))
            return lines
        }
        let hostWidth = min(24, max(4, alerts.map(\.host.count).max() ?? 4))
        let nameWidth = min(32, max(5, alerts.map(\.name.count).max() ?? 5))
        var headings = StyledLine()
        headings.column("HOST", hostWidth, .bold)
        headings.column("ALERT", nameWidth, .bold)
        headings.column("SEVERITY", 8, .bold)
        headings.column("SINCE", 8, .bold)
        headings.add("SUMMARY", .bold)
        lines.append(headings)
        for alert in alerts {
            var line = StyledLine()
            line.column(alert.host, hostWidth)
            line.column(alert.name, nameWidth, .red)
            line.column(alert.severity, 8, alert.severity == "critical" ? .red : .yellow)
            line.column(clock(alert.firedAt ?? alert.activeAt), 8)
            let subject = alert.subject.isEmpty ? "" : alert.subject + ": "
            line.add(subject + (Self.summary(alert) ?? ""))
            lines.append(line)
        }
        return lines
    }

    /// An alert's `summary` annotation (else its `description`) on one line (``StyledLine`` escapes the rest).
    static func summary(_ alert: ActiveAlert) -> String? {
        guard let text = alert.annotations["summary"] ?? alert.annotations["description"] else { return nil }
        return text.split(whereSeparator: \.isNewline).joined(separator: " ")
    }

    private func footer() -> StyledLine {
        if editingFilter {
            var line = StyledLine("/", .bold)
            line.add(filter + "_")
            line.add("   Enter keep · Esc clear", .dim)
            return line
        }
        switch screen {
        case .fleet:
            var line = StyledLine()
            for (key, action) in [
                ("q", "quit"), ("↑↓", "select"), ("Enter", "detail"), ("/", "filter"), ("s", "sort:\(sort.rawValue)"),
                ("e", "error"), ("a", "alerts"),
            ] {
                line.add(key, .bold)
                line.add(" \(action)  ")
            }
            return line
        case .detail:
            var line = StyledLine()
            for (key, action) in [
                ("Esc", "back"), ("s", "sort:\(processSort.rawValue)"), ("a", "alerts"), ("q", "quit"),
            ] {
                line.add(key, .bold)
                line.add(" \(action)  ")
            }
            return line
        case .alerts:
            var line = StyledLine()
            for (key, action) in [("Esc", "back"), ("q", "quit")] {
                line.add(key, .bold)
                line.add(" \(action)  ")
            }
            return line
        }
    }

    /// Green below 60 %, yellow below 85 %, red from there.
    static func threshold(_ percent: Double?) -> TerminalOutput.Style? {
        guard let percent else { return nil }
        return percent < 60 ? .green : percent < 85 ? .yellow : .red
    }

    static func percent(_ value: Double?) -> String {
        value.map { String(format: "%.1f", $0) } ?? "-"
    }

    /// The last `width` samples (0–100) as block characters, right-aligned.
    static func sparkline(_ values: [Double], width: Int) -> String {
        Sparkline.render(values, width: width)
    }

    /// A bar of `width` cells filled to `percent`.
    static func bar(_ percent: Double?, width: Int) -> String {
        let filled = Int(((percent ?? 0) / 100 * Double(width)).rounded())
        let count = min(max(filled, 0), width)
        return String(repeating: "■", count: count) + String(repeating: "·", count: width - count)
    }

    /// `1.2M`, `340K`, `12B`: a rate short enough for a narrow column.
    static func compactBytes(_ value: Double) -> String {
        let units = ["B", "K", "M", "G", "T"]
        var scaled = value
        var unit = 0
        while scaled >= 1024 && unit < units.count - 1 {
            scaled /= 1024
            unit += 1
        }
        return unit == 0 || scaled >= 100
            ? "\(Int(scaled.rounded()))\(units[unit])" : String(format: "%.1f%@", scaled, units[unit])
    }

    /// `3s`, `12m`, `2h`, `4d`.
    static func age(_ seconds: TimeInterval) -> String {
        let total = max(0, Int(seconds))
        if total < 60 { return "\(total)s" }
        if total < 3600 { return "\(total / 60)m" }
        if total < 86_400 { return "\(total / 3600)h" }
        return "\(total / 86_400)d"
    }

    /// `HH:MM:SS` in the model's time zone.
    func clock(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = calendar.dateComponents([.hour, .minute, .second], from: date)
        return String(format: "%02d:%02d:%02d", parts.hour ?? 0, parts.minute ?? 0, parts.second ?? 0)
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
