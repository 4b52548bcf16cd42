/// Reads macOS/BSD `iostat` (`iostat -c 2`, `iostat -od 3 2`, …) into per-disk rates, CPU
/// shares and load averages.
///
/// The first header line names column groups (`disk0 … cpu … load average`), the second the
/// columns (`KB/t tps MB/s`, or `sps tps msps` with `-o`; `us sy id`; `1m 5m 15m`). The first
/// data line covers the time since boot, so the last line is used, and a lone line yields names
/// only, with a warning. macOS does not split reads from writes: throughput goes to
/// `bytes_per_second` (MB/s × 2^20, or sectors/s × 512).
public enum MacIostatParser {
    static let source = "iostat"

    public static func parse(_ text: String) throws(ParseError) -> Parsed<SnapshotPart> {
        let lines = TextScanning.lines(text).filter { !$0.trimmingBlanks().isEmpty }
        guard
            let groupIndex = lines.firstIndex(where: { line in
                TextScanning.fields(line).contains { $0.hasPrefix("disk") || $0 == "cpu" }
            }), groupIndex + 1 < lines.count
        else {
            throw .unexpected(source: source, "no `disk0 … cpu` header", expected: "macOS `iostat`", text: text)
        }
        var groups = TextScanning.fields(lines[groupIndex]).map(String.init)
        if let load = groups.firstIndex(of: "load"), load + 1 < groups.count, groups[load + 1] == "average" {
            groups.replaceSubrange(load...(load + 1), with: ["load average"])
        }
        let columns = TextScanning.fields(lines[groupIndex + 1]).map(String.init)
        guard columns.count == groups.count * 3 else {
            throw ParseError(
                source: source, message: "\(columns.count) columns under \(groups.count) groups: expected 3 each",
                line: groupIndex + 2)
        }
        let rows = lines[(groupIndex + 2)...].filter {
            TextScanning.fields($0).allSatisfy { TextScanning.localizedDouble($0) != nil }
        }
        guard let last = rows.last else {
            throw ParseError(source: source, message: "a header but no figures")
        }
        let values = TextScanning.fields(last).compactMap { TextScanning.localizedDouble($0) }
        guard values.count == columns.count else {
            throw ParseError(
                source: source, message: "a line of \(values.count) figures under \(columns.count) columns")
        }
        var report = SnapshotPart(devices: [])
        var warnings: [String] = []
        let sinceBoot = rows.count < 2
        if sinceBoot {
            warnings.append(
                "iostat printed one line, which covers the time since boot: figures need a second (`iostat -c 2`)")
        }
        for (group, name) in groups.enumerated() {
            var figures: [String: Double] = [:]
            for column in 0..<3 { figures[columns[group * 3 + column]] = values[group * 3 + column] }
            if name.hasPrefix("disk") {
                var device = BlockDeviceStats(device: name)
                if !sinceBoot {
                    device.bytesPerSecond = figures["MB/s"].map { $0 * 1_048_576 } ?? figures["sps"].map { $0 * 512 }
                    device.transfersPerSecond = figures["tps"]
                }
                report.devices?.append(device)
            } else if name == "cpu", let idle = figures["id"] {
                report.cpu =
                    sinceBoot
                    ? CPUStats()
                    : CPUStats(
                        busyPercent: 100 - idle, activePercent: 100 - idle, userPercent: figures["us"],
                        systemPercent: figures["sy"], idlePercent: idle)
            } else if name == "load average", let one = figures["1m"], let five = figures["5m"],
                let fifteen = figures["15m"]
            {
                // Load averages are current whichever line they come from.
                report.load = LoadAverage(one: one, five: five, fifteen: fifteen)
            }
        }
        report.warnings = warnings
        return Parsed(report, warnings: warnings)
    }
}
