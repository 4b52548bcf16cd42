/// Reads `/proc/net/dev` into per-interface counters.
///
/// Columns are found by name in the second header line (`face |bytes packets errs drop …|bytes
/// …`), whose `|` separators split the receive group from the transmit group. Each data line is
/// split on its first `:` because old kernels glue the first counter to the name (`eth0:123`).
public enum ProcNetDevParser {
    static let source = "/proc/net/dev"

    public static func parse(_ text: String) throws(ParseError) -> [NetworkInterfaceStats] {
        let interfaces = try TextScanning.withUTF8(text) { parse(bytes: $0, text: text) }.get()
        guard !interfaces.isEmpty else {
            throw .unexpected(source: source, "no interface line", expected: "`cat /proc/net/dev`", text: text)
        }
        return interfaces
    }

    /// Where the counters a snapshot keeps sit among a data line's values, from the header.
    private struct Columns {
        var count = 0
        var rxBytes: Int?, txBytes: Int?, rxErrors: Int?, txErrors: Int?, rxDropped: Int?, txDropped: Int?

        init() {}

        init(receive: [Substring], transmit: [Substring]) {
            count = receive.count + transmit.count
            func position(_ group: [Substring], _ column: String, after offset: Int) -> Int? {
                group.firstIndex(of: column[...]).map { $0 + offset }
            }
            rxBytes = position(receive, "bytes", after: 0)
            rxErrors = position(receive, "errs", after: 0)
            rxDropped = position(receive, "drop", after: 0)
            txBytes = position(transmit, "bytes", after: receive.count)
            txErrors = position(transmit, "errs", after: receive.count)
            txDropped = position(transmit, "drop", after: receive.count)
        }
    }

    /// The column line of Linux's /proc/net/dev, and what it says.
    private static let standardHeader = Array(
        " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed"
            .utf8)
    private static let standardColumns = Columns(
        receive: TextScanning.fields("bytes    packets errs drop fifo frame compressed multicast"),
        transmit: TextScanning.fields("bytes    packets errs drop fifo colls carrier compressed"))

    private static func parse(bytes: UnsafeBufferPointer<UInt8>, text: String) -> Result<
        [NetworkInterfaceStats], ParseError
    > {
        var columns = Columns()
        var interfaces: [NetworkInterfaceStats] = []
        var ranges: [Range<Int>] = []
        let failure = TextScanning.forEachLine(of: bytes) { line, lineNumber throws(ParseError) in
            if line.elementsEqual(standardHeader) {
                // Every Linux since 2.6 prints this line: its columns are known without splitting it.
                columns = standardColumns
                return
            }
            if line.starts(with: "Inter-|".utf8) { return }
            if line.contains(UInt8(ascii: "|")) {
                let groups = TextScanning.text(line).utf8.split(
                    separator: UInt8(ascii: "|"), omittingEmptySubsequences: false
                ).map(Substring.init)
                // The column line, not the `Inter-|   Receive …|  Transmit` line above it. (Compared as
                // fields: `Substring.contains` of a string is Foundation's slow locale-aware search.)
                if groups.count == 3 {
                    let receive = TextScanning.fields(groups[1])
                    if receive.contains("bytes") {
                        columns = Columns(receive: receive, transmit: TextScanning.fields(groups[2]))
                    }
                }
                return
            }
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return }
            guard columns.count > 0 else {
                throw .unexpected(
                    source: source, "no `face |bytes packets …` header line", expected: "`cat /proc/net/dev`",
                    text: text, line: lineNumber)
            }
            let name = TextScanning.text(line, TextScanning.trimmingBlanks(line, 0..<colon))
            let values = TextScanning.slice(line, (colon + 1)..<line.count)
            TextScanning.fieldRanges(values, into: &ranges)
            guard ranges.count == columns.count else {
                throw ParseError(
                    source: source, message: "\(name) has \(ranges.count) counters, the header names \(columns.count)",
                    line: lineNumber)
            }
            func counter(_ position: Int?) throws(ParseError) -> UInt64? {
                guard let position else { return nil }
                let field = TextScanning.slice(values, ranges[position])
                guard let value = TextScanning.counter(field) else {
                    throw ParseError(
                        source: source, message: "`\(TextScanning.text(field))` is not a counter", line: lineNumber)
                }
                return value
            }
            interfaces.append(
                NetworkInterfaceStats(
                    interface: name, rxBytes: try counter(columns.rxBytes), txBytes: try counter(columns.txBytes),
                    rxErrors: try counter(columns.rxErrors), txErrors: try counter(columns.txErrors),
                    rxDropped: try counter(columns.rxDropped), txDropped: try counter(columns.txDropped)))
        }
        if let failure { return .failure(failure) }
        return .success(interfaces)
    }
}
