import Foundation
import ValueFormats

/// RFC 4180 CSV of snapshot records.
///
/// The wide layout has one row per record with a fixed set of host-level columns, so its
/// header never changes mid-file however interfaces and mounts come and go; per-disk and
/// per-interface figures go to the long layout, one row per figure. Unknown values are empty
/// fields. An error record is a wide row with `error` (its kind) and `error_message` filled.
///
/// Figures are written to the precision they mean (``Decimals``): a percentage as `12.35`, a rate as
/// `51234.50`, bytes and counts as integers, so a spreadsheet shows what the host measured rather
/// than the binary tail of a division. JSON keeps the figures unrounded.
public enum SnapshotCSV {
    /// How many decimals each kind of figure keeps in CSV (fixed: `12.50`, `0.00`), rounded to nearest.
    public enum Decimals {
        /// Percentages (0–100): a hundredth of a percent is finer than any sampling interval resolves.
        public static let percent = 2
        /// Rates in bytes per second: a hundredth of a byte per second.
        public static let rate = 2
        /// Load averages, with the two decimals `/proc/loadavg` prints.
        public static let load = 2
        /// Seconds (uptime), with the two decimals `/proc/uptime` prints.
        public static let seconds = 2
        /// Milliseconds (a collection's duration): to the microsecond.
        public static let milliseconds = 3
    }

    /// The wide layout's columns, in order.
    public static let wideColumns: [String] = [
        "timestamp", "host", "error",
        "cpu.busy_percent", "cpu.active_percent", "cpu.user_percent", "cpu.nice_percent", "cpu.system_percent",
        "cpu.iowait_percent", "cpu.irq_percent", "cpu.softirq_percent", "cpu.steal_percent", "cpu.idle_percent",
        "cpu.cores",
        "memory.total_bytes", "memory.used_bytes", "memory.available_bytes", "memory.free_bytes",
        "memory.buffers_bytes", "memory.cached_bytes", "memory.used_percent", "memory.swap_total_bytes",
        "memory.swap_used_bytes",
        "load.1m", "load.5m", "load.15m", "uptime_seconds",
        "disk.max_used_percent", "disk.read_bytes_per_second", "disk.write_bytes_per_second",
        "network.rx_bytes_per_second", "network.tx_bytes_per_second",
        "collector", "duration_ms", "warnings", "error_message", "slot",
    ]

    /// The wide columns before `slot` was added at the end: files written with them are still
    /// appended to, in their own columns.
    public static var wideColumnsWithoutSlot: [String] { Array(wideColumns.dropLast()) }

    /// The long layout's columns.
    public static let longColumns = ["timestamp", "host", "kind", "device", "metric", "value"]

    public static var wideHeader: String { wideColumns.map(field).joined(separator: ",") + "\r\n" }
    public static var wideHeaderWithoutSlot: String {
        wideColumnsWithoutSlot.map(field).joined(separator: ",") + "\r\n"
    }
    public static var longHeader: String { longColumns.joined(separator: ",") + "\r\n" }

    /// One wide row, CRLF-terminated.
    public static func wideRow(_ record: SnapshotRecord) -> String {
        wideRow(record, slotColumn: true)
    }

    /// One wide row, CRLF-terminated; without the `slot` field for a file whose header has none.
    public static func wideRow(_ record: SnapshotRecord, slotColumn: Bool) -> String {
        var values: [String] = []
        values.reserveCapacity(wideColumns.count)
        switch record {
        case .failure(let failure):
            values = [RFC3339.format(failure.collectedAt), failure.host, failure.kind.rawValue]
            values += Array(repeating: "", count: wideColumns.count - 5)
            values.append(failure.message)
        case .snapshot(let snapshot):
            let cpu = snapshot.cpu
            let memory = snapshot.memory
            values = [RFC3339.format(snapshot.collectedAt), snapshot.host, ""]
            values += [
                cpu?.busyPercent, cpu?.activePercent, cpu?.userPercent, cpu?.nicePercent, cpu?.systemPercent,
                cpu?.iowaitPercent, cpu?.irqPercent, cpu?.softirqPercent, cpu?.stealPercent, cpu?.idlePercent,
            ].map(percent)
            values.append(cpu?.cores.map(String.init) ?? "")
            values += [
                memory?.totalBytes, memory?.usedBytes, memory?.availableBytes, memory?.freeBytes,
                memory?.buffersBytes, memory?.cachedBytes,
            ].map(integer)
            values.append(percent(memory?.usedPercent))
            values += [memory?.swapTotalBytes, memory?.swapUsedBytes].map(integer)
            values += [snapshot.load?.one, snapshot.load?.five, snapshot.load?.fifteen].map {
                fixed($0, Decimals.load)
            }
            values.append(fixed(snapshot.uptimeSeconds, Decimals.seconds))
            values.append(percent(snapshot.fullestDiskUsedPercent))
            values += [snapshot.diskReadRate, snapshot.diskWriteRate].map(rate)
            values += [snapshot.networkReceiveRate, snapshot.networkTransmitRate].map(rate)
            values += [
                snapshot.collector, fixed(snapshot.durationMs, Decimals.milliseconds),
                snapshot.warnings.joined(separator: "; "), "",
            ]
        }
        if slotColumn { values.append(record.slot.map { RFC3339.format($0) } ?? "") }
        return values.map(field).joined(separator: ",") + "\r\n"
    }

    /// The long rows of a record: one per disk, interface and core figure. Error records have
    /// no long rows (the wide layout carries them).
    public static func longRows(_ record: SnapshotRecord) -> String {
        guard case .snapshot(let snapshot) = record else { return "" }
        let stamp = RFC3339.format(snapshot.collectedAt)
        var out = ""
        func row(_ kind: String, _ device: String, _ metric: String, _ value: String) {
            guard !value.isEmpty else { return }
            out += [stamp, snapshot.host, kind, device, metric, value].map(field).joined(separator: ",") + "\r\n"
        }
        for disk in snapshot.disks {
            row("disk", disk.mount, "size_bytes", integer(disk.sizeBytes))
            row("disk", disk.mount, "used_bytes", integer(disk.usedBytes))
            row("disk", disk.mount, "available_bytes", integer(disk.availableBytes))
            row("disk", disk.mount, "used_percent", percent(disk.usedPercent))
            row("disk", disk.mount, "inodes_total", integer(disk.inodesTotal))
            row("disk", disk.mount, "inodes_used", integer(disk.inodesUsed))
            row("disk", disk.mount, "read_bytes_per_second", rate(disk.readBytesPerSecond))
            row("disk", disk.mount, "write_bytes_per_second", rate(disk.writeBytesPerSecond))
        }
        for interface in snapshot.network {
            let name = interface.interface
            row("network", name, "rx_bytes", integer(interface.rxBytes))
            row("network", name, "tx_bytes", integer(interface.txBytes))
            row("network", name, "rx_bytes_per_second", rate(interface.rxBytesPerSecond))
            row("network", name, "tx_bytes_per_second", rate(interface.txBytesPerSecond))
            row("network", name, "rx_errors", integer(interface.rxErrors))
            row("network", name, "tx_errors", integer(interface.txErrors))
            row("network", name, "rx_dropped", integer(interface.rxDropped))
            row("network", name, "tx_dropped", integer(interface.txDropped))
        }
        for core in snapshot.cpu?.perCore ?? [] {
            row("cpu", String(core.core), "busy_percent", percent(core.busyPercent))
        }
        return out
    }

    /// Quotes a field when it holds a comma, quote, CR or LF (RFC 4180), doubling quotes.
    public static func field(_ value: String) -> String {
        // By bytes, not Characters: "\r\n" is one Character, equal to neither "\r" nor "\n".
        let special: Set<UInt8> = [UInt8(ascii: ","), UInt8(ascii: "\""), UInt8(ascii: "\n"), UInt8(ascii: "\r")]
        guard value.utf8.contains(where: special.contains) else { return value }
        return "\"" + value.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// `value` with exactly `decimals` decimals, rounded to nearest (`12.35`, `0.00`); empty when unknown or not
    /// finite. A value that rounds to zero is written `0.00`, never `-0.00`.
    public static func fixed(_ value: Double?, _ decimals: Int) -> String {
        guard let value, value.isFinite else { return "" }
        // printf rounds the exact binary value correctly and always writes a point, whatever the locale.
        let text = String(format: "%.*f", decimals, value)
        guard text.hasPrefix("-"),
            text.utf8.allSatisfy({ $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "0") || $0 == UInt8(ascii: ".") })
        else { return text }
        return String(text.dropFirst())
    }

    private static func percent(_ value: Double?) -> String { fixed(value, Decimals.percent) }

    private static func rate(_ value: Double?) -> String { fixed(value, Decimals.rate) }

    private static func integer(_ value: UInt64?) -> String {
        value.map(String.init) ?? ""
    }
}
