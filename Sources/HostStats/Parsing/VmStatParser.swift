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

    /// The memory section, warnings left out (see ``parse(_:warnings:)``).
    public static func parse(_ text: String) throws(ParseError) -> MemoryStats {
        var warnings: [String] = []
        return try parse(text, warnings: &warnings)
    }

    /// The memory section; a page count out of range, or bytes past 2^64, leaves the figures that
    /// need it out (`null`), named in `warnings`.
    public static func parse(_ text: String, warnings: inout [String]) throws(ParseError) -> MemoryStats {
        var pageSize: UInt64?
        var outOfRange: Set<String> = []
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
            switch TextScanning.readCounter(value) {
            case .value(let count): pages[key] = count
            case .outOfRange:
                outOfRange.insert(key)
                warnings.append(TextScanning.outOfRangeWarning("vm_stat `\(key)`", value))
            case nil: break
            }
        }
        guard let pageSize else {
            throw .unexpected(
                source: source, "no `Mach Virtual Memory Statistics: (page size of N bytes)` header",
                expected: "`vm_stat`", text: text)
        }
        guard let free = pages["Pages free"], let wired = pages["Pages wired down"] else {
            if outOfRange.contains("Pages free") || outOfRange.contains("Pages wired down") {
                return MemoryStats(totalBytes: memsize)
            }
            throw ParseError(source: source, message: "vm_stat output lacks `Pages free` or `Pages wired down`")
        }
        /// Bytes of a sum of page counts, or `nil` (with a warning) past 2^64.
        func bytes(_ what: String, _ counts: UInt64...) -> UInt64? {
            var total: UInt64? = 0
            for count in counts { total = total.flatMap { UInt64.checkedSum($0, count) } }
            guard let result = total?.checkedMultiplied(by: pageSize) else {
                warnings.append("vm_stat \(what) in bytes is out of range: left out (null)")
                return nil
            }
            return result
        }
        var stats = MemoryStats(totalBytes: memsize, freeBytes: bytes("free memory", free))
        if outOfRange.contains("Anonymous pages") || outOfRange.contains("Pages occupied by compressor")
            || outOfRange.contains("Pages purgeable") || outOfRange.contains("Pages active")
        {
            // A count the used figure is made of is unknown: no used figure rather than a wrong one.
        } else if let anonymous = pages["Anonymous pages"], let compressed = pages["Pages occupied by compressor"] {
            let purgeable = pages["Pages purgeable"] ?? 0
            let app = anonymous >= purgeable ? anonymous - purgeable : 0
            stats.usedBytes = bytes("used memory", app, wired, compressed)
            if stats.usedBytes != nil { stats.definition = MemoryStats.Definition.macOSAppWiredCompressed }
            if let fileBacked = pages["File-backed pages"] {
                stats.cachedBytes = bytes("cached files", fileBacked, purgeable)
            }
        } else if let active = pages["Pages active"] {
            stats.usedBytes = bytes("used memory", active, wired)
            if stats.usedBytes != nil { stats.definition = MemoryStats.Definition.activePlusWired }
        }
        if let total = memsize, let used = stats.usedBytes, total > 0 {
            stats.availableBytes = total >= used ? total - used : 0
            stats.usedPercent = Double(used) / Double(total) * 100
        }
        return stats
    }
}
