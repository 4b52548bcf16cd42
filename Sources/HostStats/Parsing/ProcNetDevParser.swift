/// Reads `/proc/net/dev` into per-interface counters.
///
/// Columns are found by name in the second header line (`face |bytes packets errs drop …|bytes
/// …`), whose `|` separators split the receive group from the transmit group. Each data line is
/// split on its first `:` because old kernels glue the first counter to the name (`eth0:123`).
public enum ProcNetDevParser {
    static let source = "/proc/net/dev"

    public static func parse(_ text: String) throws(ParseError) -> [NetworkInterfaceStats] {
        var receive: [Substring] = []
        var transmit: [Substring] = []
        var interfaces: [NetworkInterfaceStats] = []
        for (index, line) in TextScanning.lines(text).enumerated() {
            let utf8 = line.utf8
            if utf8.contains(UInt8(ascii: "|")) {
                let groups = utf8.split(separator: UInt8(ascii: "|"), omittingEmptySubsequences: false).map(Substring.init)
                if groups.count == 3, groups[1].contains("bytes") {
                    receive = TextScanning.fields(groups[1])
                    transmit = TextScanning.fields(groups[2])
                }
                continue
            }
            guard let colon = utf8.firstIndex(of: UInt8(ascii: ":")) else { continue }
            guard !receive.isEmpty else {
                throw .unexpected(
                    source: source, "no `face |bytes packets …` header line", expected: "`cat /proc/net/dev`",
                    text: text, line: index + 1)
            }
            let name = String(line[..<colon].trimmingBlanks())
            let values = TextScanning.fields(Substring(utf8[utf8.index(after: colon)...]))
            guard values.count == receive.count + transmit.count else {
                throw ParseError(
                    source: source,
                    message: "\(name) has \(values.count) counters, the header names \(receive.count + transmit.count)",
                    line: index + 1)
            }
            func counter(_ group: [Substring], _ offset: Int, _ column: String) throws(ParseError) -> UInt64? {
                guard let position = group.firstIndex(of: column[...]) else { return nil }
                guard let value = TextScanning.counter(values[offset + position]) else {
                    throw ParseError(
                        source: source, message: "`\(values[offset + position])` is not a counter", line: index + 1)
                }
                return value
            }
            let tx = receive.count
            interfaces.append(
                NetworkInterfaceStats(
                    interface: name, rxBytes: try counter(receive, 0, "bytes"),
                    txBytes: try counter(transmit, tx, "bytes"),
                    rxErrors: try counter(receive, 0, "errs"), txErrors: try counter(transmit, tx, "errs"),
                    rxDropped: try counter(receive, 0, "drop"), txDropped: try counter(transmit, tx, "drop")))
        }
        guard !interfaces.isEmpty else {
            throw .unexpected(source: source, "no interface line", expected: "`cat /proc/net/dev`", text: text)
        }
        return interfaces
    }
}
