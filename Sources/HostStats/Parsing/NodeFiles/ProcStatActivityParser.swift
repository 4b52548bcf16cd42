/// Reads `/proc/stat`'s lines besides the CPU ticks: `ctxt`, `intr` (its first figure, the total),
/// `processes`, `procs_running` and `procs_blocked`. A line that is missing leaves its figure out.
public enum ProcStatActivityParser {
    static let source = "/proc/stat"

    public static func parse(_ text: String) throws(ParseError) -> Parsed<KernelActivity> {
        var activity = KernelActivity()
        var warnings: [String] = []
        var found = false
        for line in TextScanning.lines(text) {
            guard let space = line.firstIndex(of: " ") else { continue }
            let key = line[..<space]
            guard ["ctxt", "intr", "processes", "procs_running", "procs_blocked"].contains(key) else { continue }
            found = true
            guard let token = TextScanning.fields(line[space...]).first else { continue }
            let value = KernelFigureLines.counter(token, "\(source) \(key)", warnings: &warnings)
            switch key {
            case "ctxt": activity.contextSwitches = value
            case "intr": activity.interrupts = value
            case "processes": activity.forks = value
            case "procs_running": activity.procsRunning = value
            default: activity.procsBlocked = value
            }
        }
        guard found else {
            throw .unexpected(
                source: source, "no `ctxt`, `intr` or `processes` line", expected: "`cat /proc/stat`", text: text)
        }
        return Parsed(activity, warnings: warnings)
    }
}
