/// One entry of the `hostscope parse TOOL` registry: a tool's name, what it reads, and the
/// function turning its output into the snapshot sections it yields.
public struct ToolParser: Sendable {
    /// The name typed after `hostscope parse`.
    public var name: String
    /// One line for `--help`: which command's output this reads.
    public var summary: String
    /// Turns the tool's output into snapshot sections; figures that are no finite number are left
    /// out with a warning (``SnapshotPart/leaveOutNonFiniteFigures()``).
    public var parse: @Sendable (String) throws(ParseError) -> SnapshotPart

    public init(name: String, summary: String, parse: @escaping @Sendable (String) throws(ParseError) -> SnapshotPart) {
        self.name = name
        self.summary = summary
        self.parse = { (text: String) throws(ParseError) in
            var part = try parse(text)
            part.leaveOutNonFiniteFigures()
            return part
        }
    }

    /// The parser registered under `name`, if any.
    public static func named(_ name: String) -> ToolParser? {
        all.first { $0.name == name }
    }

    /// Every registered parser, in the order `--help` lists them.
    public static let all: [ToolParser] = [
        ToolParser(
            name: "mpstat",
            summary: "sysstat mpstat [-P ALL] [-o JSON] INTERVAL COUNT: CPU shares from the summary rows"
        ) {
            (text: String) throws(ParseError) in
            let parsed = try MpstatParser.parse(text)
            return SnapshotPart(cpu: parsed.value, warnings: parsed.warnings)
        },
        ToolParser(name: "free", summary: "free [-b|-k|-m|-h] [-w]: memory and swap, procps or BusyBox, any locale") {
            (text: String) throws(ParseError) in
            let parsed = try FreeParser.parse(text)
            return SnapshotPart(memory: parsed.value, warnings: parsed.warnings)
        },
        ToolParser(name: "df", summary: "df [-kP|-hT|-PT -B1|-i]: filesystems; GNU, BusyBox or macOS") {
            (text: String) throws(ParseError) in
            let parsed = try DfParser.parse(text)
            return SnapshotPart(disks: parsed.value, warnings: parsed.warnings)
        },
        ToolParser(name: "ps", summary: "ps -eo …, ps aux, BusyBox ps: processes by header name") {
            (text: String) throws(ParseError) in
            let parsed = try PsParser.parse(text)
            return SnapshotPart(processes: parsed.value, warnings: parsed.warnings)
        },
        ToolParser(
            name: "iostat",
            summary: "iostat (sysstat -x/-dk, or macOS -c/-od) INTERVAL COUNT: per-device rates, CPU, last report"
        ) {
            (text: String) throws(ParseError) in
            if isMacIostat(text) { return try MacIostatParser.parse(text).value }
            let parsed = try IostatParser.parse(text)
            return SnapshotPart(cpu: parsed.value.cpu, devices: parsed.value.devices, warnings: parsed.warnings)
        },
        ToolParser(
            name: "top", summary: "top -b -n N (procps, BusyBox) or macOS top -l N: load, CPU, memory, processes"
        ) {
            (text: String) throws(ParseError) in
            if isMacTop(text) { return try MacTopParser.parse(text).value }
            return try TopParser.parse(text).value
        },
        ToolParser(name: "uptime", summary: "uptime: seconds up and load averages (Linux, BusyBox, macOS, SunOS)") {
            (text: String) throws(ParseError) in
            let uptime = try UptimeParser.parse(text)
            var warnings: [String] = []
            if uptime.seconds == nil { warnings.append("this uptime format gives no duration") }
            return SnapshotPart(uptimeSeconds: uptime.seconds, load: uptime.load, warnings: warnings)
        },
        ToolParser(name: "vm_stat", summary: "macOS vm_stat [; sysctl hw.memsize]: memory from page counts") {
            (text: String) throws(ParseError) in
            var warnings: [String] = []
            let memory = try VmStatParser.parse(text, warnings: &warnings)
            return SnapshotPart(memory: memory, warnings: warnings)
        },
        ToolParser(
            name: "sysctl", summary: "sysctl hw.memsize hw.ncpu vm.swapusage vm.loadavg kern.boottime (macOS, FreeBSD)"
        ) {
            (text: String) throws(ParseError) in try SysctlParser.part(text)
        },
        ToolParser(name: "sw_vers", summary: "macOS sw_vers: the product name and version (macOS 14.4.1)") {
            (text: String) throws(ParseError) in SnapshotPart(os: try SwVersParser.parse(text))
        },
        ToolParser(
            name: "netstat", summary: "netstat -ib[n][d] (macOS, FreeBSD): per-interface counters from <Link#N> rows"
        ) {
            (text: String) throws(ParseError) in
            let parsed = try NetstatParser.parse(text)
            return SnapshotPart(network: parsed.value, warnings: parsed.warnings)
        },
        ToolParser(name: "ip", summary: "ip -s link: per-interface byte, error and drop counters") {
            (text: String) throws(ParseError) in
            var warnings: [String] = []
            let network = try IPLinkParser.parse(text, warnings: &warnings)
            return SnapshotPart(network: network, warnings: warnings)
        },
        ToolParser(name: "proc-stat", summary: "/proc/stat; two concatenated reads give CPU percentages") {
            (text: String) throws(ParseError) in try ProcStatParser.part(text)
        },
        ToolParser(name: "proc-meminfo", summary: "/proc/meminfo: memory and swap, used = total - available") {
            (text: String) throws(ParseError) in
            var warnings: [String] = []
            let memory = try ProcMemInfoParser.parse(text, warnings: &warnings)
            return SnapshotPart(memory: memory, warnings: warnings)
        },
        ToolParser(name: "proc-net-dev", summary: "/proc/net/dev: per-interface byte, error and drop counters") {
            (text: String) throws(ParseError) in SnapshotPart(network: try ProcNetDevParser.parse(text))
        },
        ToolParser(name: "proc-diskstats", summary: "/proc/diskstats: per-device I/O counters since boot") {
            (text: String) throws(ParseError) in try ProcDiskStatsParser.part(text)
        },
        ToolParser(name: "proc-loadavg", summary: "/proc/loadavg: 1, 5 and 15 minute load") {
            (text: String) throws(ParseError) in SnapshotPart(load: try ProcLoadAvgParser.parse(text))
        },
        ToolParser(name: "proc-uptime", summary: "/proc/uptime: seconds since boot") {
            (text: String) throws(ParseError) in SnapshotPart(uptimeSeconds: try ProcUptimeParser.parse(text))
        },
        ToolParser(name: "proc-pid-stat", summary: "cat /proc/[0-9]*/stat: pid, ppid, name and RSS of each process") {
            (text: String) throws(ParseError) in try ProcPidStatParser.part(text)
        },
        ToolParser(name: "os-release", summary: "cat /etc/os-release; uname -snrm: operating system, kernel, arch") {
            (text: String) throws(ParseError) in SnapshotPart(os: try OSReleaseParser.parse(text))
        },
    ]

    /// macOS top's summary lines, which procps and BusyBox never print.
    static func isMacTop(_ text: String) -> Bool {
        TextScanning.lines(text).prefix(40).contains { $0.hasPrefix("PhysMem:") || $0.hasPrefix("CPU usage:") }
    }

    /// macOS iostat's group header (`disk0 … cpu`), where sysstat prints `Device` and `avg-cpu:`.
    static func isMacIostat(_ text: String) -> Bool {
        let lines = TextScanning.lines(text).prefix(10)
        return !lines.contains { $0.hasPrefix("Device") || $0.hasPrefix("avg-cpu:") }
            && lines.contains { TextScanning.fields($0).contains { $0.hasPrefix("disk") || $0 == "cpu" } }
    }
}
