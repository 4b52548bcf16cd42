/// Reads `/proc/uptime` (`411.73 582.08`: seconds up, idle seconds summed over CPUs).
public enum ProcUptimeParser {
    static let source = "/proc/uptime"

    /// Seconds since boot.
    public static func parse(_ text: String) throws(ParseError) -> Double {
        let fields = TextScanning.lines(text).first.map(TextScanning.fields) ?? []
        // `inf` would make every rate of the tick zero: a figure the kernel cannot print is no uptime.
        guard fields.count == 2, let seconds = Double(fields[0]), seconds.isFinite, seconds >= 0,
            Double(fields[1]) != nil
        else {
            throw .unexpected(source: source, "no `SECONDS IDLE` pair", expected: "`cat /proc/uptime`", text: text)
        }
        return seconds
    }
}
