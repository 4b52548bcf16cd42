/// Reads `/proc/diskstats` into ``DiskIOCounters``.
///
/// The file has no header; its columns are fixed by the kernel's ABI (Documentation/admin-guide/
/// iostats.rst): 14 fields per line, 18 from 4.18 (discards), 20 from 5.5 (flushes). Kernels
/// before 2.6.25 printed partitions with only 7 fields (reads, sectors read, writes, sectors
/// written).
public enum ProcDiskStatsParser {
    static let source = "/proc/diskstats"

    public static func parse(_ text: String) throws(ParseError) -> [DiskIOCounters] {
        var devices: [DiskIOCounters] = []
        for (index, line) in TextScanning.lines(text).enumerated() {
            let fields = TextScanning.fields(line)
            if fields.isEmpty { continue }
            guard fields.count == 7 || fields.count >= 14, let major = TextScanning.counter(fields[0]).map(Int.init),
                let minor = TextScanning.counter(fields[1]).map(Int.init) else {
                throw .unexpected(
                    source: source, "`\(line.trimmingBlanks().prefix(40))` is not a diskstats line",
                    expected: "`cat /proc/diskstats`", text: text, line: index + 1)
            }
            var numbers: [UInt64] = []
            for field in fields.dropFirst(3) {
                guard let value = TextScanning.counter(field) else {
                    throw ParseError(source: source, message: "`\(field)` is not a counter", line: index + 1)
                }
                numbers.append(value)
            }
            let device = String(fields[2])
            if numbers.count == 4 {
                devices.append(
                    DiskIOCounters(
                        major: major, minor: minor, device: device, readsCompleted: numbers[0], sectorsRead: numbers[1],
                        writesCompleted: numbers[2], sectorsWritten: numbers[3]))
                continue
            }
            func optional(_ index: Int) -> UInt64? { index < numbers.count ? numbers[index] : nil }
            devices.append(
                DiskIOCounters(
                    major: major, minor: minor, device: device, readsCompleted: numbers[0], readsMerged: numbers[1],
                    sectorsRead: numbers[2], readMilliseconds: numbers[3], writesCompleted: numbers[4],
                    writesMerged: numbers[5], sectorsWritten: numbers[6], writeMilliseconds: numbers[7],
                    inFlight: numbers[8], ioMilliseconds: numbers[9], weightedIOMilliseconds: numbers[10],
                    discardsCompleted: optional(11), discardsMerged: optional(12), sectorsDiscarded: optional(13),
                    discardMilliseconds: optional(14), flushesCompleted: optional(15), flushMilliseconds: optional(16)))
        }
        guard !devices.isEmpty else {
            throw .unexpected(source: source, "no device line", expected: "`cat /proc/diskstats`", text: text)
        }
        return devices
    }

    /// The snapshot part for `hostscope parse proc-diskstats`: a `devices` section with the
    /// since-boot byte and request counters; rates stay `null` because one read has no interval.
    public static func part(_ text: String) throws(ParseError) -> SnapshotPart {
        let devices = try parse(text).map {
            BlockDeviceStats(
                device: $0.device, readBytes: $0.readBytes, writeBytes: $0.writtenBytes, reads: $0.readsCompleted,
                writes: $0.writesCompleted)
        }
        return SnapshotPart(
            devices: devices,
            warnings: [
                "/proc/diskstats holds since-boot counters: per-second rates need two reads and the time between them"
            ])
    }
}
