import OrderedJSON

/// Reads `mpstat` (sysstat) output, plain, `-P ALL` or `-o JSON`, into ``CPUStats``.
///
/// Text output is read from the summary rows (`Average:`, `Durchschn.:`, `Moyenne :`, …),
/// which cover the whole run; a row is a summary row when what precedes its CPU column is not
/// a clock time. Columns are mapped by header name, right-anchored from `CPU`, so a label or an
/// `AM`/`PM` token in front never shifts them. `%guest` and `%gnice` are added to user and nice,
/// as `/proc/stat` counts them, so the shares sum to 100 like hostscope's other CPU figures.
///
/// `mpstat` without an interval prints one report of averages since boot and no summary rows;
/// such output yields the core count only, with a warning. `-o JSON` output has no summary, so
/// its last statistics entry is used (with an interval, that is the last interval).
public enum MpstatParser {
    static let source = "mpstat"

    private static let usr = ["%usr", "%user"]
    private static let nice = ["%nice"]
    private static let sys = ["%sys", "%system"]
    private static let iowait = ["%iowait"]
    private static let irq = ["%irq"]
    private static let soft = ["%soft"]
    private static let steal = ["%steal"]
    private static let guest = ["%guest"]
    private static let gnice = ["%gnice"]
    private static let idle = ["%idle"]

    public static func parse(_ text: String) throws(ParseError) -> Parsed<CPUStats> {
        if text.drop(while: { $0 == " " || $0 == "\n" || $0 == "\t" }).hasPrefix("{") {
            return try parseJSON(text)
        }
        var header: [Substring] = []
        var reports: [[Row]] = [[]]
        var summary: [Row] = []
        var bannerCores: Int?
        var firstHeaderTime: Int?
        var lastRowTime: Int?
        for (index, line) in TextScanning.lines(text).enumerated() {
            let fields = TextScanning.fields(line)
            if fields.isEmpty { continue }
            if bannerCores == nil, let cores = Self.bannerCores(fields) {
                bannerCores = cores
                continue
            }
            if let cpuIndex = fields.firstIndex(of: "CPU"), fields.contains(where: { idle.contains(String($0)) }) {
                header = Array(fields[cpuIndex...])
                if firstHeaderTime == nil { firstHeaderTime = clockSeconds(fields[..<cpuIndex]) }
                if !reports[reports.count - 1].isEmpty { reports.append([]) }
                continue
            }
            guard !header.isEmpty, fields.count > header.count else { continue }
            let prefix = fields[..<(fields.count - header.count)]
            let values = fields[(fields.count - header.count)...]
            guard let row = try Row(header: header, values: Array(values), line: index + 1) else {
                // A later section (`-I` interrupts, …) with its own columns ends the CPU table.
                header = []
                continue
            }
            if let time = clockSeconds(prefix) {
                lastRowTime = time
                reports[reports.count - 1].append(row)
            } else {
                summary.append(row)
            }
        }
        guard !header.isEmpty || !summary.isEmpty || reports.contains(where: { !$0.isEmpty }) else {
            throw .unexpected(source: source, "no `CPU … %idle` header", expected: "`mpstat`", text: text)
        }
        var warnings: [String] = []
        let rows: [Row]
        if !summary.isEmpty {
            rows = summary
        } else if let last = reports.last(where: { !$0.isEmpty }), reports.filter({ !$0.isEmpty }).count > 1 {
            rows = last
            warnings.append("no summary rows (output cut short?): using the last report")
        } else if let only = reports.first(where: { !$0.isEmpty }) {
            let cores = bannerCores ?? (only.filter { $0.cpu != "all" }.count).nonZero
            return Parsed(
                CPUStats(cores: cores),
                warnings: [
                    "mpstat printed one report and no summary: that is mpstat without an interval, whose figures "
                        + "are averages since boot, not current use; run `mpstat -P ALL 1 1`"
                ] + (only.first?.warnings ?? []))
        } else {
            throw .unexpected(source: source, "a header but no data rows", expected: "`mpstat`", text: text)
        }
        var sampleMs: Double?
        if let start = firstHeaderTime, let end = lastRowTime {
            let seconds = end >= start ? end - start : end + 86_400 - start
            if seconds > 0 { sampleMs = Double(seconds) * 1000 }
        }
        warnings.append(contentsOf: rows.first?.warnings ?? [])
        return Parsed(stats(rows, bannerCores: bannerCores, sampleMs: sampleMs), warnings: warnings)
    }

    private static func stats(_ rows: [Row], bannerCores: Int?, sampleMs: Double?) -> CPUStats {
        let cores = rows.compactMap { Int($0.cpu) }
        var stats = CPUStats(cores: bannerCores ?? cores.count.nonZero, sampleMs: sampleMs)
        if let all = rows.first(where: { $0.cpu == "all" }) {
            stats.userPercent = all.user
            stats.nicePercent = all.nice
            stats.systemPercent = all.system
            stats.iowaitPercent = all.iowait
            stats.irqPercent = all.irq
            stats.softirqPercent = all.softirq
            stats.stealPercent = all.steal
            stats.idlePercent = all.idle
            stats.busyPercent = all.busy
            stats.activePercent = (100 - all.idle).rounded(toPlaces: 4)
        }
        stats.perCore = rows.compactMap { row in Int(row.cpu).map { CoreStats(core: $0, busyPercent: row.busy) } }
        return stats
    }

    /// One CPU row, its columns already mapped by name.
    struct Row {
        var cpu: String
        var user: Double
        var nice: Double?
        var system: Double?
        var iowait: Double?
        var irq: Double?
        var softirq: Double?
        var steal: Double?
        var idle: Double
        var warnings: [String] = []

        var busy: Double { (100 - idle - (iowait ?? 0)).rounded(toPlaces: 4) }

        /// `nil` when the header is not a CPU-utilisation header.
        init?(header: [Substring], values: [Substring], line: Int) throws(ParseError) {
            func column(_ names: [String]) throws(ParseError) -> Double? {
                guard let index = header.firstIndex(where: { names.contains(String($0)) }) else { return nil }
                guard let value = TextScanning.localizedDouble(values[index]) else {
                    throw ParseError(
                        source: MpstatParser.source,
                        message: "`\(values[index])` under \(header[index]) is not a number", line: line)
                }
                return value
            }
            guard let user = try column(MpstatParser.usr), let idle = try column(MpstatParser.idle) else { return nil }
            cpu = String(values[0])
            let guest = try column(MpstatParser.guest)
            let gnice = try column(MpstatParser.gnice)
            self.user = user + (guest ?? 0)
            self.idle = idle
            nice = try column(MpstatParser.nice).map { $0 + (gnice ?? 0) }
            system = try column(MpstatParser.sys)
            iowait = try column(MpstatParser.iowait)
            irq = try column(MpstatParser.irq)
            softirq = try column(MpstatParser.soft)
            steal = try column(MpstatParser.steal)
            if guest == nil {
                warnings.append("mpstat without %guest (sysstat before 9): columns read by name, guest time unknown")
            }
        }
    }

    /// `(2 CPU)` of the banner line.
    private static func bannerCores(_ fields: [Substring]) -> Int? {
        guard fields.count >= 2, fields[fields.count - 1] == "CPU)" || fields[fields.count - 1] == "CPUs)",
            fields[fields.count - 2].hasPrefix("(")
        else { return nil }
        return Int(fields[fields.count - 2].dropFirst())
    }

    /// Seconds after midnight of `HH:MM:SS [AM|PM]` (or `HH.MM.SS` as fi_FI writes it, `07時24分00秒` as
    /// ja_JP does, `07시 24분 01초` as ko_KR does, `kl. 07.24 +0000` as nb_NO does, to the minute), or
    /// `nil` when the tokens are a label.
    static func clockSeconds(_ tokens: ArraySlice<Substring>) -> Int? {
        // A time zone's `+0000` is no part of the clock.
        let text = tokens.filter { !(($0.hasPrefix("+") || $0.hasPrefix("-")) && $0.count == 5) }.joined(separator: " ")
        let groups = text.split(whereSeparator: { !($0.isASCII && $0.isNumber) })
        guard groups.count == 3 || groups.count == 2, groups.allSatisfy({ $0.count <= 2 }) else { return nil }
        let parts = groups.map { Int($0) ?? -1 }
        let (hours, minutes, seconds) = (parts[0], parts[1], parts.count == 3 ? parts[2] : 0)
        guard (0..<24).contains(hours), (0..<60).contains(minutes), (0..<61).contains(seconds) else { return nil }
        var hour = hours
        if tokens.count > 1 {
            let marker = tokens[tokens.startIndex + 1].uppercased()
            if marker == "PM" && hour < 12 { hour += 12 }
            if marker == "AM" && hour == 12 { hour = 0 }
        }
        return hour * 3600 + minutes * 60 + seconds
    }

    private static func parseJSON(_ text: String) throws(ParseError) -> Parsed<CPUStats> {
        let json: JSONValue
        do {
            json = try JSONParser.parse(text)
        } catch {
            throw ParseError(source: source, message: "`-o JSON` output is not valid JSON (\(error.description))")
        }
        guard let host = json["sysstat"]?["hosts"]?[0], let statistics = host["statistics"]?.arrayValue else {
            throw .unexpected(
                source: source, "no `sysstat.hosts[0].statistics`", expected: "`mpstat -o JSON`", text: text)
        }
        guard let loads = statistics.last(where: { $0["cpu-load"] != nil })?["cpu-load"]?.arrayValue else {
            throw ParseError(source: source, message: "`-o JSON` output has no `cpu-load` statistics")
        }
        var rows: [Row] = []
        for load in loads {
            guard let cpu = load["cpu"]?.stringValue ?? load["cpu"]?.intValue.map(String.init) else { continue }
            var header: [Substring] = ["CPU"]
            var values: [Substring] = [Substring(cpu)]
            for (key, value) in load.objectValue ?? JSONObject() where key != "cpu" {
                guard let number = value.doubleValue else { continue }
                header.append(Substring("%" + key))
                values.append(Substring(String(number)))
            }
            if let row = try Row(header: header, values: values, line: 0) { rows.append(row) }
        }
        guard !rows.isEmpty else { throw ParseError(source: source, message: "`cpu-load` holds no CPU rows") }
        return Parsed(
            stats(rows, bannerCores: host["number-of-cpus"]?.intValue, sampleMs: nil),
            warnings: rows.first?.warnings ?? [])
    }
}

extension Int {
    /// `nil` for zero: a count of nothing found is no count.
    var nonZero: Int? { self == 0 ? nil : self }
}
