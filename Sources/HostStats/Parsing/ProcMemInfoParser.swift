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

    /// The `Key: value [kB]` lines of ``keys``, in bytes (`kB` is KiB here); lines without a unit
    /// are counts, and lines of any other shape are not meminfo's and are left out.
    ///
    /// Reads the UTF-8 bytes: the file has fifty-odd lines and a probe reads it every tick.
    static func fields(_ text: String) -> [String: UInt64] {
        var text = text
        text.makeContiguousUTF8()
        var values: [String: UInt64] = [:]
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
                guard let first = tokens.first, let number = TextScanning.counter(TextScanning.slice(line, first))
                else { return }
                if tokens.count == 2, UnsafeBufferPointer(rebasing: line[tokens[1]]).elementsEqual("kB".utf8) {
                    values[key] = number.multipliedReportingOverflow(by: 1024).partialValue
                } else if tokens.count == 1 {
                    values[key] = number
                }
            }
        }
        return values
    }

    private static let keyBytes = keys.map { (key: $0, bytes: Array($0.utf8)) }
}
