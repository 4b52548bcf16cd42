/// Reads `/proc/stat` into ``CPUCounters``.
///
/// Several reads may be concatenated (`cat /proc/stat; sleep 1; cat /proc/stat`): each
/// aggregate `cpu` line starts a new sample.
public enum ProcStatParser {
    static let source = "/proc/stat"

    /// The first sample in `text`.
    public static func parse(_ text: String) throws(ParseError) -> CPUCounters {
        try parseSamples(text)[0]
    }

    /// Every sample in `text`, in order; never empty.
    public static func parseSamples(_ text: String) throws(ParseError) -> [CPUCounters] {
        var samples: [CPUCounters] = []
        for (index, line) in TextScanning.lines(text).enumerated() {
            guard let first = TextScanning.firstField(line), first.utf8.starts(with: "cpu".utf8) || first == "btime"
            else { continue }
            let fields = TextScanning.fields(line)
            let key = fields[0]
            if key == "cpu" {
                samples.append(CPUCounters(total: try ticks(fields, line: index + 1)))
            } else if key.hasPrefix("cpu"), let core = Int(key.dropFirst(3)) {
                guard !samples.isEmpty else {
                    throw ParseError(
                        source: source, message: "`\(key)` line before the aggregate `cpu` line", line: index + 1)
                }
                samples[samples.count - 1].perCore.append(.init(core: core, ticks: try ticks(fields, line: index + 1)))
            } else if key == "btime", fields.count >= 2, let seconds = Int64(fields[1]), !samples.isEmpty {
                samples[samples.count - 1].bootTime = seconds
            }
        }
        guard !samples.isEmpty else {
            throw .unexpected(source: source, "no `cpu` line", expected: "`cat /proc/stat`", text: text)
        }
        return samples
    }

    private static func ticks(_ fields: [Substring], line: Int) throws(ParseError) -> CPUTicks {
        // user nice system idle are always there; later kernels appended the rest one by one.
        guard fields.count >= 5 else {
            throw ParseError(
                source: source, message: "`\(fields[0])` line has \(fields.count - 1) counters, expected at least 4",
                line: line)
        }
        var values: [UInt64] = []
        for field in fields.dropFirst() {
            guard let value = UInt64(field) else {
                throw ParseError(source: source, message: "`\(field)` is not a tick counter", line: line)
            }
            values.append(value)
        }
        func at(_ index: Int) -> UInt64 { index < values.count ? values[index] : 0 }
        return CPUTicks(
            user: at(0), nice: at(1), system: at(2), idle: at(3), iowait: at(4), irq: at(5), softirq: at(6),
            steal: at(7), guest: at(8), guestNice: at(9))
    }

    /// The snapshot part for `hostscope parse proc-stat`.
    ///
    /// One sample holds only since-boot totals, which are not current utilisation: the part then
    /// gives the core count with every percentage `null` and a warning. Two or more samples give
    /// the utilisation between the last two. Plain `/proc/stat` carries no clock, so `sample_ms`
    /// is derived from the ticks of the window at USER_HZ = 100 (the value on every mainstream
    /// Linux architecture) and the warning says so.
    public static func part(_ text: String) throws(ParseError) -> SnapshotPart {
        let samples = try parseSamples(text)
        let last = samples[samples.count - 1]
        guard samples.count >= 2 else {
            let stats = CPUStats(
                cores: last.perCore.isEmpty ? nil : last.perCore.count,
                perCore: last.perCore.map { CoreStats(core: $0.core, busyPercent: nil) })
            return SnapshotPart(
                cpu: stats,
                warnings: [
                    "one /proc/stat sample holds since-boot totals only: CPU percentages need two samples "
                        + "(e.g. `cat /proc/stat; sleep 1; cat /proc/stat`)"
                ])
        }
        let earlier = samples[samples.count - 2]
        var elapsedMs: Double?
        if let delta = last.total.delta(since: earlier.total) {
            let cores = Double(max(last.perCore.count, 1))
            elapsedMs = Double(delta.total) / cores * 10
        }
        var warnings = [
            "sample_ms estimated from the ticks between the last two samples at 100 ticks per second per CPU"
        ]
        if last.total.delta(since: earlier.total) == nil {
            warnings.append("a /proc/stat counter went backwards between the samples: no CPU figures")
        }
        return SnapshotPart(cpu: CPUStats(from: earlier, to: last, elapsedMs: elapsedMs), warnings: warnings)
    }
}
