/// Reads `/proc/meminfo` into ``MemoryStats``.
///
/// `used = MemTotal − MemAvailable` (`total-available`). Kernels before 3.14 have no
/// `MemAvailable`; for them `used = total − free − buffers − cache` as procps 3.3.10–3.3.17 did,
/// and `definition` says `total-free-buff/cache`. `cached_bytes` is `Cached + SReclaimable`,
/// the cache of `free -w`. A figure whose bytes exceed 2^64 (or a sum of them) is left out with a
/// warning.
public enum ProcMemInfoParser {
    static let source = "/proc/meminfo"

    /// The memory section, warnings left out (see ``parse(_:warnings:)``).
    public static func parse(_ text: String) throws(ParseError) -> MemoryStats {
        var warnings: [String] = []
        return try parse(text, warnings: &warnings)
    }

    /// The memory section; figures out of range are left out and named in `warnings`.
    public static func parse(_ text: String, warnings: inout [String]) throws(ParseError) -> MemoryStats {
        let (values, outOfRange) = fields(text, warnings: &warnings)
        guard let total = values["MemTotal"], let free = values["MemFree"] else {
            if outOfRange.contains("MemTotal") || outOfRange.contains("MemFree") {
                // Nothing is computed from an unknown total or free figure; the rest is as read.
                return MemoryStats(
                    totalBytes: values["MemTotal"], availableBytes: values["MemAvailable"],
                    freeBytes: values["MemFree"],
                    buffersBytes: values["Buffers"], swapTotalBytes: values["SwapTotal"])
            }
            let missing = values["MemTotal"] == nil ? "MemTotal" : "MemFree"
            throw .unexpected(source: source, "no `\(missing):` line", expected: "`cat /proc/meminfo`", text: text)
        }
        let buffers = values["Buffers"]
        let cached = values["Cached"].flatMap { cached in
            let sum = UInt64.checkedSum(cached, values["SReclaimable"] ?? 0)
            if sum == nil { warnings.append("/proc/meminfo Cached + SReclaimable is out of range: left out (null)") }
            return sum
        }
        var stats = MemoryStats(
            totalBytes: total, availableBytes: values["MemAvailable"], freeBytes: free, buffersBytes: buffers,
            cachedBytes: cached, swapTotalBytes: values["SwapTotal"])
        if let swapTotal = values["SwapTotal"], let swapFree = values["SwapFree"] {
            stats.swapUsedBytes = swapTotal >= swapFree ? swapTotal - swapFree : 0
        }
        if let available = values["MemAvailable"] {
            stats.usedBytes = total >= available ? total - available : 0
            stats.definition = MemoryStats.Definition.totalMinusAvailable
        } else {
            if let reclaimable = UInt64.checkedSum(free, buffers ?? 0, cached ?? 0) {
                // procps falls back to total − free when the caches exceed what is not free.
                stats.usedBytes = total >= reclaimable ? total - reclaimable : (total >= free ? total - free : 0)
                stats.definition = MemoryStats.Definition.totalMinusFreeBuffCache
            }
        }
        if let used = stats.usedBytes, total > 0 { stats.usedPercent = Double(used) / Double(total) * 100 }
        return stats
    }

    /// The lines read; the other fifty-odd are skipped before their numbers are read.
    static let keys = [
        "MemTotal", "MemFree", "MemAvailable", "Buffers", "Cached", "SReclaimable", "SwapTotal", "SwapFree",
    ]

    /// The `Key: value [kB]` lines of ``keys``, in bytes (`kB` is KiB here); lines without a unit
    /// are counts, and lines of any other shape are not meminfo's and are left out.
    ///
    /// Reads the UTF-8 bytes: the file has fifty-odd lines and a probe reads it every tick.
    /// The keys whose figures are out of range are left out of the values, returned apart and named in
    /// `warnings`.
    static func fields(_ text: String, warnings: inout [String]) -> (values: [String: UInt64], outOfRange: Set<String>)
    {
        var text = text
        text.makeContiguousUTF8()
        var values: [String: UInt64] = [:]
        var outOfRange: Set<String> = []
        var outOfRangeWarnings: [String] = []
        text.utf8.withContiguousStorageIfAvailable { buffer in
            TextScanning.forEachLine(in: buffer) { start, end in
                let line = UnsafeBufferPointer(rebasing: buffer[start..<end])
                guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return }
                let name = TextScanning.slice(line, TextScanning.trimmingBlanks(line, 0..<colon))
                guard let key = keyBytes.first(where: { $0.bytes.elementsEqual(name) })?.key else { return }
                // The rest: a number, then optionally `kB`.
                var tokens: [Range<Int>] = []
                var index = colon + 1
                while index < line.count, tokens.count < 3 {
                    while index < line.count, line[index] == UInt8(ascii: " ") || line[index] == UInt8(ascii: "\t") {
                        index += 1
                    }
                    let tokenStart = index
                    while index < line.count, line[index] != UInt8(ascii: " "), line[index] != UInt8(ascii: "\t") {
                        index += 1
                    }
                    if index > tokenStart { tokens.append(tokenStart..<index) }
                }
                guard let first = tokens.first else { return }
                let digits = TextScanning.slice(line, first)
                guard let number = TextScanning.counter(digits) else {
                    if !digits.isEmpty, digits.allSatisfy({ $0 >= 48 && $0 <= 57 }) {
                        outOfRange.insert(key)
                        outOfRangeWarnings.append(
                            TextScanning.outOfRangeWarning("/proc/meminfo \(key)", TextScanning.text(digits)))
                    }
                    return
                }
                if tokens.count == 2, UnsafeBufferPointer(rebasing: line[tokens[1]]).elementsEqual("kB".utf8) {
                    if let bytes = number.checkedMultiplied(by: 1024) {
                        values[key] = bytes
                    } else {
                        outOfRange.insert(key)
                        outOfRangeWarnings.append(
                            TextScanning.outOfRangeWarning(
                                "/proc/meminfo \(key) in bytes", TextScanning.text(digits) + " kB"))
                    }
                } else if tokens.count == 1 {
                    values[key] = number
                }
            }
        }
        warnings += outOfRangeWarnings
        return (values, outOfRange)
    }

    private static let keyBytes = keys.map { (key: $0, bytes: Array($0.utf8)) }
}
