/// Reads `/proc/meminfo` into ``MemoryStats``.
///
/// `used = MemTotal − MemAvailable` (`total-available`). Kernels before 3.14 have no
/// `MemAvailable`; for them `used = total − free − buffers − cache` as procps 3.3.10–3.3.17 did,
/// and `definition` says `total-free-buff/cache`. `cached_bytes` is `Cached + SReclaimable`,
/// the cache of `free -w`.
public enum ProcMemInfoParser {
    static let source = "/proc/meminfo"

    public static func parse(_ text: String) throws(ParseError) -> MemoryStats {
        let values = fields(text)
        guard let total = values["MemTotal"] else {
            throw .unexpected(source: source, "no `MemTotal:` line", expected: "`cat /proc/meminfo`", text: text)
        }
        guard let free = values["MemFree"] else {
            throw .unexpected(source: source, "no `MemFree:` line", expected: "`cat /proc/meminfo`", text: text)
        }
        let buffers = values["Buffers"]
        let cached = values["Cached"].map { $0 + (values["SReclaimable"] ?? 0) }
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
            let reclaimable = free + (buffers ?? 0) + (cached ?? 0)
            // procps falls back to total − free when the caches exceed what is not free.
            stats.usedBytes = total >= reclaimable ? total - reclaimable : (total >= free ? total - free : 0)
            stats.definition = MemoryStats.Definition.totalMinusFreeBuffCache
        }
        if let used = stats.usedBytes, total > 0 { stats.usedPercent = Double(used) / Double(total) * 100 }
        return stats
    }

    /// The lines read; the other fifty-odd are skipped before their numbers are read.
    static let keys = [
        "MemTotal", "MemFree", "MemAvailable", "Buffers", "Cached", "SReclaimable", "SwapTotal", "SwapFree",
    ]

    static let keyInitials = Set(keys.compactMap(\.utf8.first))

    /// The `Key: value [kB]` lines of ``keys``, in bytes (`kB` is KiB here); lines without a unit
    /// are counts, and lines of any other shape are not meminfo's and are left out.
    static func fields(_ text: String) -> [String: UInt64] {
        var values: [String: UInt64] = [:]
        for line in TextScanning.lines(text) {
            let utf8 = line.utf8
            guard let colon = utf8.firstIndex(of: UInt8(ascii: ":")) else { continue }
            let name = Substring(utf8[..<colon]).trimmingBlanks()
            // Most of meminfo's lines are skipped here, on the first byte, before any compare.
            guard let initial = name.utf8.first, keyInitials.contains(initial),
                let key = keys.first(where: { name == $0 })
            else { continue }
            let rest = TextScanning.fields(Substring(utf8[utf8.index(after: colon)...]))
            guard let first = rest.first, let number = TextScanning.counter(first) else { continue }
            if rest.count == 2, rest[1] == "kB" {
                values[key] = number.multipliedReportingOverflow(by: 1024).partialValue
            } else if rest.count == 1 {
                values[key] = number
            }
        }
        return values
    }
}
