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
    ///
    /// Reads the UTF-8 bytes: a probe tick carries one or two copies of the file, and lines other
    /// than `cpu…` and `btime` (the long `intr` and `softirq` lines) are passed over unsplit.
    public static func parseSamples(_ text: String) throws(ParseError) -> [CPUCounters] {
        let samples = try TextScanning.withUTF8(text) { parseSamples(bytes: $0) }.get()
        guard !samples.isEmpty else {
            throw .unexpected(source: source, "no `cpu` line", expected: "`cat /proc/stat`", text: text)
        }
        return samples
    }

    private static func parseSamples(bytes: UnsafeBufferPointer<UInt8>) -> Result<[CPUCounters], ParseError> {
        var samples: [CPUCounters] = []
        var ranges: [Range<Int>] = []
        let failure = TextScanning.forEachLine(of: bytes) { line, lineNumber throws(ParseError) in
            var first = 0
            while first < line.count, line[first] == UInt8(ascii: " ") || line[first] == UInt8(ascii: "\t") {
                first += 1
            }
            let rest = line.count - first
            let isCPU =
                rest >= 3 && line[first] == UInt8(ascii: "c") && line[first + 1] == UInt8(ascii: "p")
                && line[first + 2] == UInt8(ascii: "u")
            let isBootTime = rest >= 5 && line[first] == UInt8(ascii: "b") && line[first + 1] == UInt8(ascii: "t")
            guard isCPU || isBootTime else { return }
            TextScanning.fieldRanges(line, into: &ranges)
            let key = TextScanning.slice(line, ranges[0])
            if key.count == 3 && isCPU {
                samples.append(CPUCounters(total: try ticks(line, ranges, line: lineNumber)))
            } else if isCPU, let core = TextScanning.counter(TextScanning.slice(key, 3..<key.count)),
                let index = Int(exactly: core)
            {
                guard !samples.isEmpty else {
                    throw ParseError(
                        source: source,
                        message: "`\(TextScanning.text(key))` line before the aggregate `cpu` line", line: lineNumber)
                }
                samples[samples.count - 1].perCore.append(
                    .init(core: index, ticks: try ticks(line, ranges, line: lineNumber)))
            } else if isBootTime, key.elementsEqual("btime".utf8), ranges.count >= 2,
                let seconds = TextScanning.counter(TextScanning.slice(line, ranges[1])),
                let value = Int64(exactly: seconds), !samples.isEmpty
            {
                samples[samples.count - 1].bootTime = value
            }
        }
        if let failure { return .failure(failure) }
        return .success(samples)
    }

    private static func ticks(
        _ line: UnsafeBufferPointer<UInt8>, _ ranges: [Range<Int>], line number: Int
    ) throws(ParseError) -> CPUTicks {
        // user nice system idle are always there; later kernels appended the rest one by one.
        guard ranges.count >= 5 else {
            throw ParseError(
                source: source,
                message:
                    "`\(TextScanning.text(line, ranges[0]))` line has \(ranges.count - 1) counters, expected at least 4",
                line: number)
        }
        var values = InlineArray<10, UInt64>(repeating: 0)
        for index in 1..<ranges.count {
            guard let value = TextScanning.counter(TextScanning.slice(line, ranges[index])) else {
                throw ParseError(
                    source: source, message: "`\(TextScanning.text(line, ranges[index]))` is not a tick counter",
                    line: number)
            }
            if index <= 10 { values[index - 1] = value }
        }
        return CPUTicks(
            user: values[0], nice: values[1], system: values[2], idle: values[3], iowait: values[4], irq: values[5],
            softirq: values[6], steal: values[7], guest: values[8], guestNice: values[9])
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
        var warnings = [
            "sample_ms estimated from the ticks between the last two samples at 100 ticks per second per CPU"
        ]
        if let delta = last.total.delta(since: earlier.total) {
            if let ticks = delta.total {
                elapsedMs = Double(ticks) / Double(max(last.perCore.count, 1)) * 10
            } else {
                warnings.append("the /proc/stat counters add up past 2^64 between the samples: no CPU figures")
            }
        } else {
            warnings.append("a /proc/stat counter went backwards between the samples: no CPU figures")
        }
        return SnapshotPart(cpu: CPUStats(from: earlier, to: last, elapsedMs: elapsedMs), warnings: warnings)
    }
}
