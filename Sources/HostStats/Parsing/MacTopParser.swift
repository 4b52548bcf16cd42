/// Reads macOS `top -l N` output: load, CPU, memory and the process table.
///
/// With several samples (`top -l 2`) the last is used: the first sample's CPU figures are not
/// an interval, so a single sample's figures come with a warning. `PhysMem: 8170M used (2372M
/// wired), 21M unused.` gives `total = used + unused` and `used = total − free` (`total-free`),
/// top's own reckoning, which counts cached files as used. Process rows are read by header name;
/// `COMMAND` may hold spaces, `MEM` carries a `+`/`-` change marker and PIDs may carry `*`.
public enum MacTopParser {
    static let source = "top"

    public static func parse(_ text: String) throws(ParseError) -> Parsed<SnapshotPart> {
        let lines = TextScanning.lines(text)
        let starts = lines.indices.filter { lines[$0].hasPrefix("Processes:") }
        let start = starts.last ?? lines.startIndex
        var part = SnapshotPart()
        var warnings: [String] = []
        var headerIndex: Int?
        for index in lines.indices where index >= start {
            let line = lines[index].trimmingBlanks()
            if line.hasPrefix("Load Avg:") {
                part.load = UptimeParser.load(line)
            } else if line.hasPrefix("CPU usage:") {
                var values: [String: Double] = [:]
                for (label, value) in TopParser.pairs(line.dropFirst("CPU usage:".count)) {
                    values[label] = TextScanning.localizedDouble(value.hasSuffix("%") ? value.dropLast() : value)
                }
                if let idle = values["idle"] {
                    part.cpu = CPUStats(
                        busyPercent: (100 - idle).rounded(toPlaces: 4),
                        activePercent: (100 - idle).rounded(toPlaces: 4),
                        userPercent: values["user"], systemPercent: values["sys"], idlePercent: idle)
                }
            } else if line.hasPrefix("PhysMem:") {
                part.memory = try memory(line, warnings: &warnings)
            } else if TextScanning.fields(line).first == "PID" {
                headerIndex = index
                break
            }
        }
        if let headerIndex {
            let rows = lines[(headerIndex + 1)...].prefix { !$0.hasPrefix("Processes:") }
            part.processes = try PsParser.table(
                header: lines[headerIndex], rows: rows, firstLine: headerIndex + 2, warnings: &warnings)
        }
        guard part.cpu != nil || part.memory != nil || part.load != nil || part.processes != nil else {
            throw .unexpected(
                source: source, "no `CPU usage:`, `PhysMem:` or `Load Avg:` line", expected: "`top -l 1`", text: text)
        }
        if starts.count <= 1, part.cpu != nil {
            warnings.append("top -l 1 reports CPU usage of no real interval: use `top -l 2` and its last sample")
        }
        part.warnings = warnings
        return Parsed(part, warnings: warnings)
    }

    /// The memory section, or `nil` when `used` or `unused` is out of range (named in `warnings`).
    private static func memory(_ line: Substring, warnings: inout [String]) throws(ParseError) -> MemoryStats? {
        var figures: [String: UInt64] = [:]
        var outOfRange = false
        for (label, value) in TopParser.pairs(line.dropFirst("PhysMem:".count)) {
            let name = String(label.split(separator: " ").first ?? "").trimmingCharacters(in: "(),.")
            switch TextScanning.readSize(value) {
            case .value(let bytes): figures[name] = bytes
            case .outOfRange:
                warnings.append(TextScanning.outOfRangeWarning("top's PhysMem `\(name)` figure", value))
                outOfRange = true
            case nil: throw ParseError(source: source, message: "`\(value)` before `\(label)` is not a size")
            }
        }
        guard let used = figures["used"], let unused = figures["unused"] else {
            if outOfRange { return nil }
            throw ParseError(source: source, message: "PhysMem line without `used` and `unused`: `\(line)`")
        }
        guard let total = UInt64.checkedSum(used, unused) else {
            warnings.append("top's PhysMem used + unused is out of range: memory left out (null)")
            return nil
        }
        return MemoryStats(
            totalBytes: total, usedBytes: used, freeBytes: unused,
            usedPercent: total > 0 ? Double(used) / Double(total) * 100 : nil,
            definition: MemoryStats.Definition.totalMinusFree)
    }
}

extension String {
    /// The text without leading and trailing characters of `set`.
    fileprivate func trimmingCharacters(in set: String) -> String {
        String(drop(while: { set.contains($0) }).reversed().drop(while: { set.contains($0) }).reversed())
    }
}
