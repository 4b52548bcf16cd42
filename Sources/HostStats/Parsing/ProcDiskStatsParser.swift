/// Reads `/proc/diskstats` into ``DiskIOCounters``.
///
/// The file has no header; its columns are fixed by the kernel's ABI (Documentation/admin-guide/
/// iostats.rst): 14 fields per line, 18 from 4.18 (discards), 20 from 5.5 (flushes). Kernels
/// before 2.6.25 printed partitions with only 7 fields (reads, sectors read, writes, sectors
/// written).
public enum ProcDiskStatsParser {
    static let source = "/proc/diskstats"

    public static func parse(_ text: String) throws(ParseError) -> [DiskIOCounters] {
        let devices = try TextScanning.withUTF8(text) { parse(bytes: $0, text: text) }.get()
        guard !devices.isEmpty else {
            throw .unexpected(source: source, "no device line", expected: "`cat /proc/diskstats`", text: text)
        }
        return devices
    }

    /// Reads the UTF-8 bytes: every probe tick carries the file, a line per disk and partition.
    private static func parse(bytes: UnsafeBufferPointer<UInt8>, text: String) -> Result<[DiskIOCounters], ParseError> {
        var devices: [DiskIOCounters] = []
        var ranges: [Range<Int>] = []
        let failure = TextScanning.forEachLine(of: bytes) { line, lineNumber throws(ParseError) in
            TextScanning.fieldRanges(line, into: &ranges)
            if ranges.isEmpty { return }
            func field(_ index: Int) -> UnsafeBufferPointer<UInt8> { TextScanning.slice(line, ranges[index]) }
            guard ranges.count == 7 || ranges.count >= 14,
                let major = TextScanning.counter(field(0)).flatMap({ Int(exactly: $0) }),
                let minor = TextScanning.counter(field(1)).flatMap({ Int(exactly: $0) })
            else {
                throw .unexpected(
                    source: source,
                    "`\(TextScanning.text(line)[...].trimmingBlanks().prefix(40))` is not a diskstats line",
                    expected: "`cat /proc/diskstats`", text: text, line: lineNumber)
            }
            var numbers = InlineArray<17, UInt64>(repeating: 0)
            for index in 3..<ranges.count {
                guard let value = TextScanning.counter(field(index)) else {
                    throw ParseError(
                        source: source, message: "`\(TextScanning.text(field(index)))` is not a counter",
                        line: lineNumber)
                }
                if index - 3 < 17 { numbers[index - 3] = value }
            }
            let count = ranges.count - 3
            let device = TextScanning.text(field(2))
            if count == 4 {
                devices.append(
                    DiskIOCounters(
                        major: major, minor: minor, device: device, readsCompleted: numbers[0], sectorsRead: numbers[1],
                        writesCompleted: numbers[2], sectorsWritten: numbers[3]))
                return
            }
            func optional(_ index: Int) -> UInt64? { index < count ? numbers[index] : nil }
            devices.append(
                DiskIOCounters(
                    major: major, minor: minor, device: device, readsCompleted: numbers[0], readsMerged: numbers[1],
                    sectorsRead: numbers[2], readMilliseconds: numbers[3], writesCompleted: numbers[4],
                    writesMerged: numbers[5], sectorsWritten: numbers[6], writeMilliseconds: numbers[7],
                    inFlight: numbers[8], ioMilliseconds: numbers[9], weightedIOMilliseconds: numbers[10],
                    discardsCompleted: optional(11), discardsMerged: optional(12), sectorsDiscarded: optional(13),
                    discardMilliseconds: optional(14), flushesCompleted: optional(15), flushMilliseconds: optional(16)))
        }
        if let failure { return .failure(failure) }
        return .success(devices)
    }

    /// The snapshot part for `hostscope parse proc-diskstats`: a `devices` section with the
    /// since-boot byte and request counters; rates stay `null` because one read has no interval.
    public static func part(_ text: String) throws(ParseError) -> SnapshotPart {
        var warnings = [
            "/proc/diskstats holds since-boot counters: per-second rates need two reads and the time between them"
        ]
        let devices = try parse(text).map { counters in
            if counters.readBytes == nil || counters.writtenBytes == nil {
                warnings.append(
                    "\(counters.device): sectors read or written times 512 is out of range: left out (null)")
            }
            return BlockDeviceStats(
                device: counters.device, readBytes: counters.readBytes, writeBytes: counters.writtenBytes,
                reads: counters.readsCompleted, writes: counters.writesCompleted)
        }
        return SnapshotPart(devices: devices, warnings: warnings)
    }
}
