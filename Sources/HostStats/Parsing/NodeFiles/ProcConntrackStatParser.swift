/// Reads `/proc/net/stat/nf_conntrack`: a header naming the columns, then a line of hexadecimal counters
/// per CPU. node_exporter's conntrack collector exports the sums over the CPUs of eight columns
/// (``fields``); they are found by the header's names, so a kernel that renamed or added others
/// (`searched` became `clashres` in Linux 5.x) reads the same.
public enum ProcConntrackStatParser {
    static let source = "/proc/net/stat/nf_conntrack"

    /// The columns node_exporter exports, as it names them (`node_nf_conntrack_stat_FIELD`).
    public static let fields = [
        "found", "invalid", "ignore", "insert", "insert_failed", "drop", "early_drop", "search_restart",
    ]

    /// The sum over the CPUs of each column of ``fields`` the header has, in that order; a sum that
    /// would overflow 64 bits is left out.
    public static func parse(_ text: String) throws(ParseError) -> [KernelFigure] {
        let lines = TextScanning.lines(text).filter { !$0.isEmpty }
        guard let header = lines.first.map(TextScanning.fields), header.first == "entries" else {
            throw .unexpected(
                source: source, "no header starting with `entries`", expected: "`cat \(source)`", text: text)
        }
        var sums = [UInt64?](repeating: 0, count: header.count)
        for (index, line) in lines.dropFirst().enumerated() {
            let values = TextScanning.fields(line).map { UInt64($0, radix: 16) }
            guard values.count == header.count, !values.contains(nil) else {
                throw ParseError(
                    source: source, message: "expected \(header.count) hexadecimal columns, as the header names",
                    line: index + 2)
            }
            for (column, value) in values.enumerated() {
                guard let sum = sums[column], let value else { continue }
                let (added, overflow) = sum.addingReportingOverflow(value)
                sums[column] = overflow ? nil : added
            }
        }
        guard lines.count > 1 else {
            throw .unexpected(source: source, "no CPU line", expected: "`cat \(source)`", text: text)
        }
        return fields.compactMap { field in
            guard let column = header.firstIndex(of: Substring(field)), let sum = sums[column] else { return nil }
            return KernelFigure(field, Double(sum))
        }
    }
}
