/// Reads `/proc/PID/stat` lines, one per process, as `cat /proc/[0-9]*/stat` prints them.
///
/// `comm` sits between the first `(` and the **last** `)`: a process may name itself
/// `evil) R 1 (x`, and even put a newline in its name, so a line that has not reached its
/// closing `)` and the fields after it is joined with the next one.
public enum ProcPidStatParser {
    static let source = "/proc/PID/stat"
    /// Fields after `comm`, up to and including `rss` (field 24 of proc(5)).
    static let minimumTail = 22

    public static func parse(_ text: String) throws(ParseError) -> [ProcessSample] {
        var samples: [ProcessSample] = []
        var pending: Substring?
        var pendingLine = 0
        for (index, line) in TextScanning.lines(text).enumerated() {
            let record: Substring
            if let head = pending {
                record = Substring(String(head) + "\n" + String(line))
            } else {
                if line.trimmingBlanks().isEmpty { continue }
                record = line
                pendingLine = index + 1
            }
            switch try sample(record, line: pendingLine) {
            case .some(let parsed):
                samples.append(parsed)
                pending = nil
            case .none:
                pending = record
            }
        }
        if pending != nil {
            throw ParseError(
                source: source, message: "truncated line: no `)` closing the process name", line: pendingLine)
        }
        guard !samples.isEmpty else {
            throw .unexpected(source: source, "no process line", expected: "`cat /proc/[0-9]*/stat`", text: text)
        }
        return samples
    }

    /// The sample in `record`, or `nil` when the record may continue on the next line.
    private static func sample(_ record: Substring, line: Int) throws(ParseError) -> ProcessSample? {
        guard let open = record.firstIndex(of: "("), let pid = Int(record[..<open].trimmingBlanks()) else {
            throw .unexpected(
                source: source, "`\(record.prefix(40))` does not start with `PID (`", expected: "`cat /proc/PID/stat`",
                text: String(record), line: line)
        }
        guard let close = record.lastIndex(of: ")") else { return nil }
        let tail = TextScanning.fields(record[record.index(after: close)...])
        guard tail.count >= minimumTail else { return nil }
        func number(_ index: Int, _ name: String) throws(ParseError) -> UInt64 {
            guard let value = UInt64(tail[index]) else {
                throw ParseError(
                    source: source, message: "\(name) `\(tail[index])` of pid \(pid) is not a number", line: line)
            }
            return value
        }
        // Offsets in `tail` are proc(5) field numbers minus 3 (pid, comm, then state at 3).
        guard let ppid = Int(tail[1]) else {
            throw ParseError(source: source, message: "ppid `\(tail[1])` of pid \(pid) is not a number", line: line)
        }
        return ProcessSample(
            pid: pid, comm: String(record[record.index(after: open)..<close]), state: String(tail[0]), ppid: ppid,
            cpuTicks: try number(11, "utime") + number(12, "stime"), rssPages: try number(21, "rss"),
            startTimeTicks: try number(19, "starttime"), virtualBytes: try number(20, "vsize"))
    }

    /// The snapshot part for `hostscope parse proc-pid-stat`: one process per line with its
    /// name (`comm`) as command and `rss_bytes` at 4096-byte pages; CPU shares stay `null`
    /// because one read holds only lifetime totals. Both facts are stated in the warnings.
    public static func part(_ text: String) throws(ParseError) -> SnapshotPart {
        let processes = try parse(text).map {
            ProcessStats(pid: $0.pid, ppid: $0.ppid, rssBytes: $0.rssPages &* 4096, command: $0.comm)
        }
        return SnapshotPart(
            processes: processes,
            warnings: [
                "rss_bytes assume 4096-byte pages (check `getconf PAGESIZE` on the host)",
                "one /proc/PID/stat read holds lifetime CPU ticks only: cpu_percent needs two reads",
            ])
    }
}
