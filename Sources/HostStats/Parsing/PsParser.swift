/// Reads `ps` output into ``ProcessStats``: procps `-eo` with any column set, BusyBox
/// (`PID USER COMMAND`, `PID USER TIME COMMAND`, `-o …` with scaled sizes such as `44m`), and
/// macOS/BSD (`aux`, `-ef`, `-o`).
///
/// Columns are found by header name. The last text column (`COMMAND`, `ARGS`, `CMD`) is the
/// rest of the line as written; a text column before it (procps prints `comm` under the same
/// `COMMAND` header, and a process may name itself `evil) R 1 (x`) takes the fewest words after
/// which the following columns still have their shapes. `command` is the argument list when
/// the output has one, else the short name; BusyBox's `{comm}` prefix, shown when a process's
/// name differs from its argv[0], is removed.
///
/// `cpu_percent` is what ps prints: on Linux a process's CPU time over its whole lifetime, on
/// macOS a decaying recent average; neither is a sampled window, and a warning says so.
///
/// An RSS or parent PID too large for hostscope's figures (`99999999999999999999999`, `inf`) is
/// left out (`null`) with a warning; the row is kept.
public enum PsParser {
    static let source = "ps"

    private enum Field { case pid, ppid, user, uid, cpu, memory, rss, vsz, state, text, number, word }

    private static func field(_ header: Substring) -> Field {
        switch header.uppercased() {
        case "PID": .pid
        case "PPID": .ppid
        case "USER", "RUSER", "UNAME": .user
        case "UID", "RUID": .uid
        case "%CPU", "PCPU", "CPU": .cpu
        case "%MEM", "PMEM": .memory
        case "RSS", "RSZ", "RES", "MEM": .rss
        case "VSZ", "VSIZE", "VIRT": .vsz
        case "STAT", "S": .state
        case "COMMAND", "CMD", "ARGS", "COMM", "UCOMM", "UCMD", "BEFEHL", "COMMANDE", "COMANDO": .text
        case "NI", "PRI", "C", "PGID", "SID", "TPGID", "PSR", "NLWP", "THCNT", "SZ", "%CPU)": .number
        default: .word
        }
    }

    public static func parse(_ text: String) throws(ParseError) -> Parsed<[ProcessStats]> {
        let lines = TextScanning.lines(text)
        guard
            let headerIndex = lines.firstIndex(where: { line in
                TextScanning.fields(line).contains { field($0) == .pid }
            })
        else {
            if let complaint = lines.first(where: { $0.hasPrefix("ps:") || $0.contains("ps: ") }) {
                throw ParseError(source: source, message: "ps failed: \(complaint.trimmingBlanks())")
            }
            throw .unexpected(source: source, "no header with a `PID` column", expected: "`ps`", text: text)
        }
        var warnings: [String] = []
        let processes = try table(
            header: lines[headerIndex], rows: lines[(headerIndex + 1)...], firstLine: headerIndex + 2,
            warnings: &warnings)
        guard !processes.isEmpty else {
            throw .unexpected(source: source, "a header but no process rows", expected: "`ps`", text: text)
        }
        if TextScanning.fields(lines[headerIndex]).contains(where: { field($0) == .cpu }) {
            warnings.append("ps %CPU is not a sampled share: on Linux it is CPU time over each process's lifetime")
        }
        return Parsed(processes, warnings: warnings)
    }

    /// The rows under a process-table header (also `top`'s), columns found by header name; figures
    /// out of range are left out and named in `warnings`.
    static func table(
        header: Substring, rows: ArraySlice<Substring>, firstLine: Int, warnings: inout [String]
    ) throws(ParseError) -> [ProcessStats] {
        let headers = TextScanning.fields(header)
        let fields = headers.map(field)
        var processes: [ProcessStats] = []
        for (offset, line) in rows.enumerated() {
            if line.trimmingBlanks().isEmpty { continue }
            let number = firstLine + offset
            guard let values = split(line, fields: fields) else {
                throw ParseError(
                    source: source,
                    message: "the row does not fit the columns \(headers.joined(separator: " ")): "
                        + "`\(line.trimmingBlanks().prefix(60))`",
                    line: number)
            }
            processes.append(try process(values, fields: fields, line: number, warnings: &warnings))
        }
        return processes
    }

    private static func process(
        _ values: [Substring], fields: [Field], line: Int, warnings: inout [String]
    ) throws(ParseError) -> ProcessStats {
        func value(_ kind: Field) -> Substring? {
            fields.firstIndex(of: kind).map { values[$0] }
        }
        guard let pidText = value(.pid), let pid = processID(pidText) else {
            throw ParseError(source: source, message: "`\(value(.pid) ?? "")` is not a PID", line: line)
        }
        // The last text column is the argument list when there are two (procps `comm,args`).
        let textColumns = fields.indices.filter { fields[$0] == .text }
        var command = textColumns.last.map { String(values[$0]) } ?? ""
        if command.hasPrefix("{"), let close = command.firstIndex(of: "}") {
            let rest = command[command.index(after: close)...].drop(while: { $0 == " " })
            if !rest.isEmpty { command = String(rest) }
        }
        var process = ProcessStats(pid: pid, command: command)
        if let ppid = value(.ppid), ppid != "-" {
            process.ppid = processID(ppid)
            if process.ppid == nil { warnings.append(TextScanning.outOfRangeWarning("the PPID of PID \(pid)", ppid)) }
        }
        process.user = (value(.user) ?? value(.uid)).map(String.init)
        process.cpuPercent = value(.cpu).flatMap(percent)
        process.memoryPercent = value(.memory).flatMap(percent)
        if let rss = value(.rss), rss != "-" {
            switch TextScanning.readSize(rss, unit: 1024) {
            case .value(let bytes): process.rssBytes = bytes
            case .outOfRange: warnings.append(TextScanning.outOfRangeWarning("the RSS of PID \(pid)", rss))
            case nil: break
            }
        }
        return process
    }

    /// The row cut into one value per column, or `nil` when no cut fits the column shapes.
    private static func split(_ line: Substring, fields: [Field]) -> [Substring]? {
        let tokens = TextScanning.fieldRanges(line)
        var result: [Substring] = []
        // (column, token) pairs known not to fit: without them, a header with several text
        // columns and a long row took time exponential in the row's words.
        var failed: Set<Int> = []
        func fill(column: Int, token: Int) -> Bool {
            let key = column * (tokens.count + 1) + token
            if failed.contains(key) { return false }
            if fillUnmemoized(column: column, token: token) { return true }
            failed.insert(key)
            return false
        }
        func fillUnmemoized(column: Int, token: Int) -> Bool {
            if column == fields.count { return token == tokens.count }
            if column == fields.count - 1, fields[column] == .text {
                // The rest of the line as written, inner spacing kept; empty for a blank command.
                result.append(token < tokens.count ? line[tokens[token].lowerBound...].trimmingBlanks() : "")
                return true
            }
            if fields[column] == .text {
                for count in 1...max(1, tokens.count - token) where token + count <= tokens.count {
                    let value = line[tokens[token].lowerBound..<tokens[token + count - 1].upperBound]
                    result.append(value)
                    if fill(column: column + 1, token: token + count) { return true }
                    result.removeLast()
                }
                return false
            }
            guard token < tokens.count, accepts(fields[column], line[tokens[token]]) else { return false }
            result.append(line[tokens[token]])
            if fill(column: column + 1, token: token + 1) { return true }
            result.removeLast()
            return false
        }
        return fill(column: 0, token: 0) ? result : nil
    }

    /// `123`, or macOS top's `123*` (a process it marks).
    private static func processID(_ token: Substring) -> Int? {
        Int(token.hasSuffix("*") ? token.dropLast() : token)
    }

    /// Digits, however many: a parent PID's shape, in range or not.
    private static func isDigits(_ token: Substring) -> Bool {
        let digits = token.hasSuffix("*") ? token.dropLast() : token
        return !digits.isEmpty && digits.utf8.allSatisfy { $0 >= 48 && $0 <= 57 }
    }

    /// `12.3`, `12,3` or BusyBox's `12%`.
    private static func percent(_ token: Substring) -> Double? {
        TextScanning.localizedDouble(token.hasSuffix("%") ? token.dropLast() : token)
    }

    private static func accepts(_ field: Field, _ token: Substring) -> Bool {
        switch field {
        case .pid: return processID(token) != nil
        case .ppid: return processID(token) != nil || isDigits(token)
        case .cpu, .memory: return percent(token) != nil
        case .rss, .vsz: return token == "-" || TextScanning.readSize(token, unit: 1024) != nil
        // `rt`: top's priority of a real-time process, under a `PRI` header in some locales (ro_RO).
        case .number: return token == "-" || token == "rt" || Double(token) != nil
        // Linux and BSD state letters and flags (`Ss+`, `S<Ll`, `IW<`, `R+`, `SNs`, `U`, `Z`).
        case .state: return token.count <= 8 && token.allSatisfy { $0.isLetter || "<>+".contains($0) }
        case .user, .uid, .word, .text: return true
        }
    }
}
