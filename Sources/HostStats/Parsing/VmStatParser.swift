/// Reads macOS `vm_stat`, optionally followed by `sysctl hw.memsize` (or `sysctl -n
/// hw.memsize`), into ``MemoryStats``.
///
/// Page counts are multiplied by the page size its header states (4096 on Intel, 16384 on
/// Apple Silicon). The page counts do not add up to the installed memory, so `total_bytes` comes
/// only from `hw.memsize` when it is in the text.
///
/// `used_bytes` is Activity Monitor's "Memory Used": app memory (anonymous pages − purgeable
/// pages) + wired pages + pages occupied by the compressor (`definition`:
/// `app+wired+compressed`). macOS 10.8 and older have no compressor or anonymous counts; there
/// `used = active + wired` (`active+wired`). `cached_bytes` is Activity Monitor's "Cached
/// Files" (file-backed + purgeable pages) where the counts exist; `free_bytes` is `Pages free`;
/// `available_bytes` is `total − used` when the total is known.
public enum VmStatParser {
    static let source = "vm_stat"

    public static func parse(_ text: String) throws(ParseError) -> MemoryStats {
        var pageSize: UInt64?
        var pages: [String: UInt64] = [:]
        var memsize: UInt64?
        for line in TextScanning.lines(text) {
            let trimmed = line.trimmingBlanks()
            if trimmed.hasPrefix("Mach Virtual Memory Statistics") {
                let fields = TextScanning.fields(trimmed)
                if let of = fields.firstIndex(of: "of"), of + 1 < fields.count { pageSize = UInt64(fields[of + 1]) }
                continue
            }
            if trimmed.hasPrefix("hw.memsize:") || trimmed.hasPrefix("hw.memsize =") {
                memsize = TextScanning.fields(trimmed).last.flatMap { UInt64($0) }
                continue
            }
            if let bare = UInt64(trimmed) {
                memsize = bare
                continue
            }
            guard let colon = trimmed.lastIndex(of: ":") else { continue }
            let key = trimmed[..<colon].filter { $0 != "\"" }
            var value = trimmed[trimmed.index(after: colon)...].trimmingBlanks()
            if value.last == "." { value = value.dropLast() }
            if let count = UInt64(value) { pages[key] = count }
        }
        guard let pageSize else {
            throw .unexpected(
                source: source, "no `Mach Virtual Memory Statistics: (page size of N bytes)` header",
                expected: "`vm_stat`", text: text)
        }
        guard let free = pages["Pages free"], let wired = pages["Pages wired down"] else {
            throw ParseError(source: source, message: "vm_stat output lacks `Pages free` or `Pages wired down`")
        }
        func bytes(_ count: UInt64) -> UInt64 { count &* pageSize }
        var stats = MemoryStats(totalBytes: memsize, freeBytes: bytes(free))
        if let anonymous = pages["Anonymous pages"], let compressed = pages["Pages occupied by compressor"] {
            let purgeable = pages["Pages purgeable"] ?? 0
            let app = anonymous >= purgeable ? anonymous - purgeable : 0
            stats.usedBytes = bytes(app + wired + compressed)
            stats.definition = MemoryStats.Definition.macOSAppWiredCompressed
            if let fileBacked = pages["File-backed pages"] { stats.cachedBytes = bytes(fileBacked + purgeable) }
        } else if let active = pages["Pages active"] {
            stats.usedBytes = bytes(active + wired)
            stats.definition = MemoryStats.Definition.activePlusWired
        }
        if let total = memsize, let used = stats.usedBytes, total > 0 {
            stats.availableBytes = total >= used ? total - used : 0
            stats.usedPercent = Double(used) / Double(total) * 100
        }
        return stats
    }
}
