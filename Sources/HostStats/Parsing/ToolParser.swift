/// One entry of the `hostscope parse TOOL` registry: a tool's name, what it reads, and the
/// function turning its output into the snapshot sections it yields.
public struct ToolParser: Sendable {
    /// The name typed after `hostscope parse`.
    public var name: String
    /// One line for `--help`: which command's output this reads.
    public var summary: String
    /// Turns the tool's output into snapshot sections.
    public var parse: @Sendable (String) throws(ParseError) -> SnapshotPart

    public init(name: String, summary: String, parse: @escaping @Sendable (String) throws(ParseError) -> SnapshotPart) {
        self.name = name
        self.summary = summary
        self.parse = parse
    }

    /// The parser registered under `name`, if any.
    public static func named(_ name: String) -> ToolParser? {
        all.first { $0.name == name }
    }

    /// Every registered parser, in the order `--help` lists them.
    public static let all: [ToolParser] = [
        ToolParser(name: "proc-stat", summary: "/proc/stat; two concatenated reads give CPU percentages") {
            (text: String) throws(ParseError) in try ProcStatParser.part(text)
        },
        ToolParser(name: "proc-meminfo", summary: "/proc/meminfo: memory and swap, used = total - available") {
            (text: String) throws(ParseError) in SnapshotPart(memory: try ProcMemInfoParser.parse(text))
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
}
