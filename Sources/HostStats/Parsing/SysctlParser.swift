/// Reads `sysctl` lines (`key: value`, or `key = value` as `sysctl -a` printed on older BSDs) of
/// the keys hostscope uses on macOS and FreeBSD.
///
/// `vm.swapusage` reads `total = 3072.00M  used = 2513.50M  free = 558.50M  (encrypted)`;
/// `vm.loadavg` reads `{ 2.57 2.41 2.24 }`; `kern.boottime` reads `{ sec = 1592836479, usec = … }`.
/// FreeBSD memory comes from `hw.physmem` and the `vm.stats.vm.v_*_count` page counts:
/// `used = total − (free + inactive + laundry)` pages (`total-free-inactive-laundry`).
public enum SysctlParser {
    static let source = "sysctl"

    /// The figures of the keys that were present.
    public struct Values: Sendable, Equatable {
        public var memoryBytes: UInt64?
        public var logicalCPUs: Int?
        public var pageSize: UInt64?
        public var swapTotalBytes: UInt64?
        public var swapUsedBytes: UInt64?
        /// `kern.boottime` in seconds since the Unix epoch; uptime needs the current time too.
        public var bootTime: Int64?
        public var load: LoadAverage?
        public var memory: MemoryStats?
        public var osRelease: String?
        public var productVersion: String?
        /// `kern.ostype`, e.g. `Darwin`, `FreeBSD`.
        public var osType: String?
        /// Figures left out because they are out of range.
        public var warnings: [String] = []
    }

    public static func parse(_ text: String) throws(ParseError) -> Values {
        var raw: [String: Substring] = [:]
        for line in TextScanning.lines(text) {
            let trimmed = line.trimmingBlanks()
            guard let separator = trimmed.firstIndex(where: { $0 == ":" || $0 == "=" }) else { continue }
            let key = trimmed[..<separator].trimmingBlanks()
            guard key.contains("."), !key.contains(" ") else { continue }
            raw[String(key)] = trimmed[trimmed.index(after: separator)...].trimmingBlanks()
        }
        guard !raw.isEmpty else {
            throw .unexpected(
                source: source, "no `key: value` line", expected: "`sysctl hw.memsize hw.ncpu …`", text: text)
        }
        var values = Values()
        values.memoryBytes = (raw["hw.memsize"] ?? raw["hw.physmem"]).flatMap { UInt64($0) }
        values.logicalCPUs = (raw["hw.logicalcpu"] ?? raw["hw.ncpu"]).flatMap { Int($0) }
        values.pageSize = (raw["hw.pagesize"] ?? raw["vm.pagesize"] ?? raw["vm.stats.vm.v_page_size"]).flatMap {
            UInt64($0)
        }
        values.osRelease = raw["kern.osrelease"].map(String.init)
        values.productVersion = raw["kern.osproductversion"].map(String.init)
        values.osType = raw["kern.ostype"].map(String.init)
        if let swap = raw["vm.swapusage"] {
            let fields = TextScanning.fields(swap)
            func figure(_ name: String) -> UInt64? {
                guard let index = fields.firstIndex(of: Substring(name)), index + 2 < fields.count else { return nil }
                return TextScanning.scaledSize(fields[index + 2])
            }
            values.swapTotalBytes = figure("total")
            values.swapUsedBytes = figure("used")
        }
        if let load = raw["vm.loadavg"] {
            let numbers = TextScanning.fields(load).compactMap { TextScanning.localizedDouble($0) }
            if numbers.count >= 3 { values.load = LoadAverage(one: numbers[0], five: numbers[1], fifteen: numbers[2]) }
        }
        if let boot = raw["kern.boottime"] {
            let fields = TextScanning.fields(boot)
            if let sec = fields.firstIndex(of: "sec"), sec + 2 < fields.count {
                values.bootTime = Int64(fields[sec + 2].filter(\.isNumber))
            } else if let first = fields.first {
                values.bootTime = Int64(first.filter(\.isNumber))
            }
        }
        if let total = values.memoryBytes {
            var memory = MemoryStats(
                totalBytes: total, swapTotalBytes: values.swapTotalBytes, swapUsedBytes: values.swapUsedBytes)
            if let size = values.pageSize, let free = raw["vm.stats.vm.v_free_count"].flatMap({ UInt64($0) }),
                let inactive = raw["vm.stats.vm.v_inactive_count"].flatMap({ UInt64($0) })
            {
                let laundry = raw["vm.stats.vm.v_laundry_count"].flatMap { UInt64($0) } ?? 0
                memory.freeBytes = free.checkedMultiplied(by: size)
                if let idle = UInt64.checkedSum(free, inactive, laundry)?.checkedMultiplied(by: size) {
                    let used = total >= idle ? total - idle : 0
                    memory.availableBytes = idle
                    memory.usedBytes = used
                    memory.usedPercent = total > 0 ? Double(used) / Double(total) * 100 : nil
                    memory.definition = MemoryStats.Definition.totalMinusFreeInactiveLaundry
                } else {
                    values.warnings.append(
                        "sysctl free, inactive and laundry pages in bytes are out of range: left out (null)")
                }
            }
            values.memory = memory
        }
        return values
    }

    /// The snapshot part for `hostscope parse sysctl`: memory (total, swap, and on FreeBSD the
    /// page-count figures), the core count, load, and the OS release. `kern.boottime` is an
    /// instant, not an uptime; turning it into one needs the current time, which a parser does
    /// not read, so it is reported in a warning.
    public static func part(_ text: String) throws(ParseError) -> SnapshotPart {
        let values = try parse(text)
        var part = SnapshotPart(load: values.load, memory: values.memory, warnings: values.warnings)
        if let cores = values.logicalCPUs { part.cpu = CPUStats(cores: cores) }
        if let family = values.osType?.lowercased() ?? (values.productVersion == nil ? nil : "darwin") {
            part.os = OSInfo(
                family: family, name: values.productVersion.map { "macOS \($0)" }, kernel: values.osRelease)
        }
        if let boot = values.bootTime {
            part.warnings.append("kern.boottime is \(boot) (seconds since 1970): uptime is the current time minus it")
        }
        if part.memory == nil && part.cpu == nil && part.load == nil && part.os == nil {
            throw ParseError(
                source: source, message: "none of hw.memsize, hw.physmem, hw.ncpu, vm.loadavg, kern.osrelease found")
        }
        return part
    }
}
