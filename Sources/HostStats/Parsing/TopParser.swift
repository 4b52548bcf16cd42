/// Reads batch `top` output (procps 3.2, 3.3, 4.x in any locale, and BusyBox) into uptime,
/// load, CPU, memory and process sections.
///
/// With several frames (`top -b -n 2 -d 1`) the last is used. The first frame's CPU figures
/// cover only the instant since top started, so a single frame's figures are kept but come with
/// a warning. Summary lines are read as `value label` pairs, whatever their order or language
/// (`0,0 us, 50,0 sy`, `45% usr`, `24105.6 total`); a comma is a separator unless it sits
/// between two digits, which also handles procps gluing `us,100.0 sy`.
///
/// Memory: procps ≥ 3.3 prints `used`, and its formula is identified as for `free` (procps 4:
/// `total-available`; 3.3.x: `total-free-buff/cache`). procps 3.2 and BusyBox print
/// `used = total − free`; for them `used_bytes` is computed as `total − free − buffers − cached`
/// from the figures they print (`total-free-buffers-cached`). A figure out of range
/// (`99999999999999999999999 total`, `inf free`) is left out with a warning, and so is whatever
/// needs it.
public enum TopParser {
    static let source = "top"

    public static func parse(_ text: String) throws(ParseError) -> Parsed<SnapshotPart> {
        let lines = TextScanning.lines(text)
        let starts = lines.indices.filter { isFrameStart(lines[$0]) }
        guard let start = starts.last else {
            throw .unexpected(
                source: source, "no `top - … load average` or BusyBox `Mem:` line", expected: "`top -b -n 1`",
                text: text)
        }
        let frame = lines[start...]
        var part = SnapshotPart()
        var warnings: [String] = []
        var memoryLine: Substring?
        var swapLine: Substring?
        var perCore: [CoreStats] = []
        var headerIndex: Int?
        var afterCPU = false
        for index in frame.indices {
            let line = frame[index]
            let trimmed = line.trimmingBlanks()
            if trimmed.hasPrefix("top - ") || trimmed.hasPrefix("top -") {
                part.uptimeSeconds = UptimeParser.duration(line)
                part.load = UptimeParser.load(line)
            } else if trimmed.lowercased().hasPrefix("load average:") {
                part.load = UptimeParser.load(line)
            } else if let label = label(trimmed), label.lowercased().contains("cpu") || label.hasPrefix("%") {
                // `%Cpu(s)`, and translated ones that keep the `%` (uk_UA `%CПроц.`).
                let figures = pairs(trimmed[trimmed.index(after: trimmed.firstIndex(of: ":")!)...])
                if let core = Int(label.filter(\.isNumber)), !label.contains("(") {
                    perCore.append(CoreStats(core: core, busyPercent: cpuStats(figures, cores: nil)?.busyPercent))
                } else {
                    part.cpu = cpuStats(figures, cores: nil)
                }
                afterCPU = true
            } else if let label = label(trimmed), label.contains("Swap") || label.contains("Échange") {
                swapLine = trimmed
            } else if memoryLine == nil, let label = label(trimmed), !label.contains("Task"), !label.contains("Tâche"),
                trimmed.contains("free") || trimmed.contains("libr") || trimmed.contains("frei")
            {
                memoryLine = trimmed
            } else if afterCPU, label(trimmed) != nil,
                pairs(trimmed[trimmed.index(after: trimmed.firstIndex(of: ":")!)...]).count == 4
            {
                // procps prints memory, then swap, right after the CPU lines, whatever the language of
                // their labels (`MiB RAM :`, `MiB Intercambio:`, `MiB 메모리 :`).
                if memoryLine == nil {
                    memoryLine = trimmed
                } else if swapLine == nil {
                    swapLine = trimmed
                }
            } else if TextScanning.fields(trimmed).first == "PID" {
                headerIndex = index
                break
            }
        }
        if var cpu = part.cpu {
            cpu.perCore = perCore
            if !perCore.isEmpty { cpu.cores = perCore.count }
            part.cpu = cpu
        }
        if let memoryLine {
            part.memory = try memory(memoryLine, swap: swapLine, warnings: &warnings)
            if part.memory == nil { warnings.append("top's memory figures are out of range: memory left out") }
        }
        if let headerIndex {
            let rows = lines[(headerIndex + 1)...].prefix { !isFrameStart($0) }
            part.processes = try PsParser.table(
                header: lines[headerIndex], rows: rows, firstLine: headerIndex + 2, warnings: &warnings)
        }
        if starts.count == 1, part.cpu != nil {
            warnings.append(
                "top's first frame covers only the instant since top started: its CPU figures are a tiny interval "
                    + "(use `top -b -n 2 -d 1`, whose last frame is a real interval)")
        }
        guard part.cpu != nil || part.memory != nil || part.processes != nil else {
            throw ParseError(source: source, message: "a top header but no CPU, memory or process lines")
        }
        part.warnings = warnings
        return Parsed(part, warnings: warnings)
    }

    private static func isFrameStart(_ line: Substring) -> Bool {
        let trimmed = line.trimmingBlanks()
        return (trimmed.hasPrefix("top - ") && trimmed.contains(" up "))
            || (trimmed.hasPrefix("Mem:") && trimmed.contains(" used,") && !trimmed.contains("total"))
    }

    /// The words before the first colon, when the line has one early on.
    private static func label(_ line: Substring) -> Substring? {
        // Long enough for translated labels such as `MiB Intercambio`.
        guard let colon = line.firstIndex(of: ":"), line.distance(from: line.startIndex, to: colon) <= 24 else {
            return nil
        }
        return line[..<colon]
    }

    /// `value label` pairs: `0,0 us, 50,0 sy` → [("us", "0,0"), ("sy", "50,0")].
    static func pairs(_ text: Substring) -> [(label: String, value: Substring)] {
        var separated = ""
        var previous: Character = " "
        let characters = Array(text)
        for (index, character) in characters.enumerated() {
            let next = index + 1 < characters.count ? characters[index + 1] : " "
            if character == "," && !(previous.isNumber && next.isNumber) {
                separated.append(" ")
            } else {
                separated.append(character)
            }
            previous = character
        }
        var result: [(label: String, value: Substring)] = []
        var value: Substring?
        var words: [Substring] = []
        func flush() {
            if let value, !words.isEmpty {
                var label = words.joined(separator: " ")
                while label.hasSuffix(".") { label.removeLast() }
                result.append((label, value))
            }
            words = []
        }
        for token in TextScanning.fields(separated) {
            if token.first?.isNumber == true {
                flush()
                value = token
            } else if value != nil {
                words.append(token)
            }
        }
        flush()
        return result
    }

    private static func cpuStats(_ pairs: [(label: String, value: Substring)], cores: Int?) -> CPUStats? {
        var values: [String: Double] = [:]
        for (label, value) in pairs {
            guard let number = TextScanning.localizedDouble(value.hasSuffix("%") ? value.dropLast() : value) else {
                continue
            }
            values[label] = number
        }
        if values["id"] == nil, values["idle"] == nil, pairs.count == 8, values.count == 8 {
            // Labels in a language not known here (pl_PL `uż, sy, ni, be, io, …`): procps prints the
            // shares in one order in every locale.
            let order = ["us", "sy", "ni", "id", "wa", "hi", "si", "st"]
            values = Dictionary(uniqueKeysWithValues: zip(order, pairs.map { values[$0.label]! }))
        }
        func first(_ names: String...) -> Double? { names.lazy.compactMap { values[$0] }.first }
        guard let idle = first("id", "idle") else { return nil }
        let iowait = first("wa", "io", "iowait")
        return CPUStats(
            cores: cores, busyPercent: (100 - idle - (iowait ?? 0)).rounded(toPlaces: 4),
            activePercent: (100 - idle).rounded(toPlaces: 4),
            userPercent: first("us", "usr", "user"), nicePercent: first("ni", "nic", "nice"),
            systemPercent: first("sy", "sys", "system"), iowaitPercent: iowait, irqPercent: first("hi", "irq"),
            softirqPercent: first("si", "sirq"), stealPercent: first("st", "steal"), idlePercent: idle)
    }

    /// The memory section, or `nil` when a figure it needs (total or used, free) is out of range.
    private static func memory(_ line: Substring, swap: Substring?, warnings: inout [String]) throws(ParseError)
        -> MemoryStats?
    {
        let colon = line.firstIndex(of: ":")!
        let prefix = TextScanning.fields(line[..<colon]).first.map(String.init) ?? ""
        let multiplier: Double? =
            switch prefix {
            // top scales by 1024 whatever the unit's translation says (pt_BR `MB`, ro_RO `Mio`, uk_UA `МіБ`).
            case "KiB", "KB", "Kio", "КіБ", "КиБ": 1024
            case "MiB", "MB", "Mio", "МіБ", "МиБ": 1_048_576
            case "GiB", "GB", "Gio", "ГіБ", "ГиБ": 1_073_741_824
            case "TiB", "TB", "Tio", "ТіБ", "ТиБ": 1_099_511_627_776
            default: nil
            }
        if multiplier == nil, prefix != line[..<colon].trimmingBlanks(), line.contains(",") {
            // A unit word hostscope cannot read: taking the figures as KiB would misread them.
            throw ParseError(
                source: source,
                message: "the memory unit `\(prefix)` of `\(line)` is in a language hostscope does not read; capture "
                    + "`LC_ALL=C top -b -n 1` instead")
        }
        /// Figures by label; those out of range are named in `warnings` and in `outOfRange`.
        func figures(_ text: Substring, outOfRange: inout Set<String>) throws(ParseError) -> [String: FreeParser.Figure]
        {
            var result: [String: FreeParser.Figure] = [:]
            for (label, value) in pairs(text[text.index(after: text.firstIndex(of: ":")!)...]) {
                let figure: FreeParser.Figure?
                if let multiplier, let number = TextScanning.localizedDouble(value) {
                    let decimals = value.split(whereSeparator: { $0 == "." || $0 == "," }).dropFirst().first?.count ?? 0
                    var step = multiplier
                    for _ in 0..<decimals { step /= 10 }
                    figure = TextScanning.wholeNumber(number * multiplier).map {
                        FreeParser.Figure(bytes: $0, slack: step)
                    }
                    if figure == nil {
                        warnings.append(TextScanning.outOfRangeWarning("top's `\(label)` figure", value))
                        outOfRange.insert(canonical(label))
                        continue
                    }
                } else {
                    switch TextScanning.readSize(value, unit: 1024) {
                    case .value(let bytes): figure = FreeParser.Figure(bytes: bytes, slack: 1024)
                    case .outOfRange:
                        warnings.append(TextScanning.outOfRangeWarning("top's `\(label)` figure", value))
                        outOfRange.insert(canonical(label))
                        continue
                    case nil: figure = nil
                    }
                }
                guard let figure else {
                    throw ParseError(source: source, message: "`\(value)` before `\(label)` is not a size")
                }
                result[canonical(label)] = figure
            }
            return result
        }
        /// Figures by label, or by position where the labels are in a language not known here: procps
        /// prints `total, free, used, buff/cache` and `total, free, used. avail Mem` in every locale.
        func figures(_ text: Substring, order: [String], outOfRange: inout Set<String>) throws(ParseError)
            -> [String: FreeParser.Figure]
        {
            let byLabel = try figures(text, outOfRange: &outOfRange)
            let labels = pairs(text[text.index(after: text.firstIndex(of: ":")!)...]).map { canonical($0.label) }
            guard !(labels.contains("total") && labels.contains("free")), labels.count == order.count,
                Set(labels).count == labels.count
            else { return byLabel }
            var byPosition: [String: FreeParser.Figure] = [:]
            for (label, name) in zip(labels, order) {
                if let figure = byLabel[label] { byPosition[name] = figure }
                if outOfRange.remove(label) != nil { outOfRange.insert(name) }
            }
            return byPosition
        }
        var outOfRange: Set<String> = []
        let mem = try figures(line, order: ["total", "free", "used", "buff/cache"], outOfRange: &outOfRange)
        var swapOutOfRange: Set<String> = []
        let swapFigures =
            try swap.map { (text: Substring) throws(ParseError) in
                try figures(text, order: ["total", "free", "used", "available"], outOfRange: &swapOutOfRange)
            } ?? [:]
        var stats = MemoryStats()
        guard let free = mem["free"] else {
            if outOfRange.contains("free") { return nil }
            throw ParseError(source: source, message: "memory line without a `free` figure: `\(line)`")
        }
        // With total out of range, used + free would pass off a made-up total as the host's.
        if outOfRange.contains("total") { return nil }
        let total =
            mem["total"]
            ?? mem["used"].flatMap { used in
                UInt64.checkedSum(used.bytes, free.bytes).map {
                    FreeParser.Figure(bytes: $0, slack: used.slack + free.slack)
                }
            }
        guard let total else {
            if outOfRange.contains("total") || outOfRange.contains("used") || mem["used"] != nil { return nil }
            throw ParseError(source: source, message: "memory line without total or used: `\(line)`")
        }
        stats.totalBytes = total.bytes
        stats.freeBytes = free.bytes
        stats.swapTotalBytes = swapFigures["total"]?.bytes
        stats.swapUsedBytes = swapFigures["used"]?.bytes
        stats.availableBytes = (mem["available"] ?? swapFigures["available"])?.bytes
        if let buffCache = mem["buff/cache"], let used = mem["used"] {
            stats.cachedBytes = buffCache.bytes
            stats.usedBytes = used.bytes
            let fitting = FreeParser.fittingFormulas(
                total: total, used: used, free: free, cache: buffCache,
                available: mem["available"] ?? swapFigures["available"])
            stats.definition = fitting.first
            if fitting.isEmpty { warnings.append("top's used figure matches no known formula: definition unknown") }
        } else if !outOfRange.isDisjoint(with: ["used", "buffers", "cached", "buff/cache"])
            || swapOutOfRange.contains("cached")
        {
            // The used figure, or one it is computed from, is unknown: no figure rather than a wrong one.
            stats.buffersBytes = mem["buffers"]?.bytes
            stats.cachedBytes = (mem["cached"] ?? swapFigures["cached"])?.bytes
        } else {
            let buffers = mem["buffers"]
            let cached = mem["cached"] ?? swapFigures["cached"]
            stats.buffersBytes = buffers?.bytes
            stats.cachedBytes = cached?.bytes
            if let reclaimable = UInt64.checkedSum(free.bytes, buffers?.bytes ?? 0, cached?.bytes ?? 0) {
                stats.usedBytes = total.bytes >= reclaimable ? total.bytes - reclaimable : 0
                stats.definition =
                    buffers != nil && cached != nil
                    ? MemoryStats.Definition.totalMinusFreeBuffersCached : MemoryStats.Definition.totalMinusFree
            }
        }
        if let used = stats.usedBytes, total.bytes > 0 { stats.usedPercent = Double(used) / Double(total.bytes) * 100 }
        return stats
    }

    /// Labels of procps (any locale it ships) and BusyBox, reduced to one vocabulary.
    private static func canonical(_ label: String) -> String {
        let word = label.lowercased()
        if word.hasPrefix("avail") || word.hasPrefix("dispo") || word.hasPrefix("verf") { return "available" }
        if word == "buff/cache" || word.hasSuffix("/cache") { return "buff/cache" }
        if word.hasPrefix("buff") || word.hasPrefix("puffer") { return "buffers" }
        if word.hasPrefix("cache") { return "cached" }
        if word == "total" || word == "gesamt" { return "total" }
        if word == "free" || word == "frei" || word.hasPrefix("libr") { return "free" }
        if word == "used" || word == "benutzt" || word == "util" || word.hasPrefix("utilis") || word == "belegt" {
            return "used"
        }
        return word
    }
}
