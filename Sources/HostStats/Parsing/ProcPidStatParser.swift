#if canImport(Glibc)
    import Glibc
#endif

/// Reads `/proc/PID/stat` lines, one per process, as `cat /proc/[0-9]*/stat` prints them.
///
/// `comm` sits between the first `(` and the **last** `)`: a process may name itself
/// `evil) R 1 (x`, and even put a newline in its name, so a line that has not reached its
/// closing `)` and the fields after it is joined with the next one.
public enum ProcPidStatParser {
    static let source = "/proc/PID/stat"

    /// Where the fields read sit after `comm` (the state and ppid always first, at 0 and 1), and how
    /// many must be there.
    struct Layout {
        var utime: Int, stime: Int, startTime: Int, virtualSize: Int?, rss: Int
        /// Fields after `comm` a complete record has at least.
        var count: Int

        /// The kernel's own line: proc(5) field numbers minus 3, up to and including `rss` (24).
        static let full = Layout(utime: 11, stime: 12, startTime: 19, virtualSize: 20, rss: 21, count: 22)
        /// The probe's short form (``LinuxProcProbe/sampleAwk``): `(comm) state ppid utime stime
        /// starttime rss`, the pid given apart and no virtual size (nothing shows it).
        static let compact = Layout(utime: 2, stime: 3, startTime: 4, virtualSize: nil, rss: 5, count: 6)
    }

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
    ///
    /// Works on the contiguous UTF-8 bytes: a probe reads every process of the host on every
    /// tick, and this runs once per process.
    static func sample(_ record: Substring, line: Int) throws(ParseError) -> ProcessSample? {
        var text = record
        if text.utf8.withContiguousStorageIfAvailable({ _ in true }) == nil {
            var copy = String(record)
            copy.makeContiguousUTF8()
            text = copy[...]
        }
        let outcome = text.utf8.withContiguousStorageIfAvailable { buffer in
            Result { () throws(ParseError) -> ProcessSample? in try sample(bytes: buffer, line: line) }
        }
        guard let outcome else { return nil }
        return try outcome.get()
    }

    /// - Parameter pid: the pid of a record that starts at `(` (the ``Layout/compact`` one); `nil`
    ///   reads it from the record's start.
    static func sample(
        bytes: UnsafeBufferPointer<UInt8>, line: Int, layout: Layout = .full, pid givenPID: Int? = nil
    ) throws(ParseError) -> ProcessSample? {
        func text(_ range: Range<Int>) -> String {
            String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
        }
        guard let base = bytes.baseAddress,
            let openPointer = memchr(base, Int32(UInt8(ascii: "(")), bytes.count)
        else {
            throw .unexpected(
                source: source, "`\(text(0..<min(40, bytes.count)))` does not start with `PID (`",
                expected: "`cat /proc/PID/stat`", text: text(0..<bytes.count), line: line)
        }
        let open = UnsafeRawPointer(openPointer) - UnsafeRawPointer(base)
        let readPID =
            givenPID.map { open == 0 ? $0 : nil }
            ?? decimal(UnsafeBufferPointer(rebasing: bytes[0..<open])).flatMap({ Int(exactly: $0) })
        guard let pid = readPID else {
            throw .unexpected(
                source: source, "`\(text(0..<min(40, bytes.count)))` does not start with `PID (`",
                expected: "`cat /proc/PID/stat`", text: text(0..<bytes.count), line: line)
        }
        // The last ")" (memrchr is a GNU extension Swift's Glibc module leaves out; the fields
        // after comm are ~200 bytes, so a backward walk is short).
        var close = bytes.count - 1
        while close > open && bytes[close] != UInt8(ascii: ")") { close -= 1 }
        guard close > open else { return nil }
        // The fields after comm, as byte ranges; only the first `layout.count` matter. They sit in
        // stack memory: this runs for every process of the host on every tick.
        return try withUnsafeTemporaryAllocation(of: Range<Int>.self, capacity: layout.count) {
            (tail) throws(ParseError) -> ProcessSample? in
            var count = 0
            var start: Int?
            var index = close + 1
            while index < bytes.count && count < layout.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\n") {
                    if let begin = start {
                        tail.initializeElement(at: count, to: begin..<index)
                        count += 1
                        start = nil
                    }
                } else if start == nil {
                    start = index
                }
                index += 1
            }
            if let begin = start, count < layout.count {
                tail.initializeElement(at: count, to: begin..<bytes.count)
                count += 1
            }
            guard count >= layout.count else { return nil }
            func number(_ position: Int, _ name: String) throws(ParseError) -> UInt64 {
                guard let value = decimal(UnsafeBufferPointer(rebasing: bytes[tail[position]])) else {
                    throw ParseError(
                        source: source, message: "\(name) `\(text(tail[position]))` of pid \(pid) is not a number",
                        line: line)
                }
                return value
            }
            // The kernel prints pids below 2^22 and 64-bit tick counts; a file that does not is not read.
            guard let ppid = Int(exactly: try number(1, "ppid")) else {
                throw ParseError(
                    source: source, message: "ppid `\(text(tail[1]))` of pid \(pid) is out of range",
                    line: line)
            }
            guard
                let cpuTicks = UInt64.checkedSum(
                    try number(layout.utime, "utime"), try number(layout.stime, "stime"))
            else {
                throw ParseError(source: source, message: "utime + stime of pid \(pid) is out of range", line: line)
            }
            return ProcessSample(
                pid: pid, comm: text((open + 1)..<close), state: text(tail[0]), ppid: ppid,
                cpuTicks: cpuTicks, rssPages: try number(layout.rss, "rss"),
                startTimeTicks: try number(layout.startTime, "starttime"),
                virtualBytes: try layout.virtualSize.map { (position) throws(ParseError) in
                    try number(position, "vsize")
                })
        }
    }

    /// A non-negative decimal, blanks around it allowed; `nil` for anything else.
    private static func decimal(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64? {
        var value: UInt64 = 0
        var digits = 0
        var trailing = false
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                guard !trailing else { return nil }
                let (times, overflow1) = value.multipliedReportingOverflow(by: 10)
                let (sum, overflow2) = times.addingReportingOverflow(UInt64(byte - 48))
                guard !overflow1, !overflow2 else { return nil }
                value = sum
                digits += 1
            case UInt8(ascii: " "), UInt8(ascii: "\t"):
                if digits > 0 { trailing = true }
            default:
                return nil
            }
        }
        return digits > 0 ? value : nil
    }

    /// The snapshot part for `hostscope parse proc-pid-stat`: one process per line with its
    /// name (`comm`) as command and `rss_bytes` at 4096-byte pages; CPU shares stay `null`
    /// because one read holds only lifetime totals. Both facts are stated in the warnings.
    public static func part(_ text: String) throws(ParseError) -> SnapshotPart {
        var warnings = [
            "rss_bytes assume 4096-byte pages (check `getconf PAGESIZE` on the host)",
            "one /proc/PID/stat read holds lifetime CPU ticks only: cpu_percent needs two reads",
        ]
        let processes = try parse(text).map { sample in
            ProcessStats(
                pid: sample.pid, ppid: sample.ppid,
                rssBytes: rssBytes(sample, pageSize: 4096, warnings: &warnings), command: sample.comm)
        }
        return SnapshotPart(processes: processes, warnings: warnings)
    }

    /// A process's resident bytes: its pages times `pageSize`, or `nil` (named in `warnings`) when
    /// that is out of range.
    public static func rssBytes(_ sample: ProcessSample, pageSize: UInt64, warnings: inout [String]) -> UInt64? {
        guard let bytes = sample.rssPages.checkedMultiplied(by: pageSize) else {
            warnings.append(
                TextScanning.outOfRangeWarning("the RSS of pid \(sample.pid) in pages", String(sample.rssPages)))
            return nil
        }
        return bytes
    }
}
