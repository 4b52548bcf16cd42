/// Reads `/proc/loadavg` (`1.00 0.33 0.13 2/101 7631`) into a ``LoadAverage``.
public enum ProcLoadAvgParser {
    static let source = "/proc/loadavg"

    public static func parse(_ text: String) throws(ParseError) -> LoadAverage {
        let fields = TextScanning.lines(text).first.map(TextScanning.fields) ?? []
        guard fields.count >= 3, let one = Double(fields[0]), let five = Double(fields[1]),
            let fifteen = Double(fields[2])
        else {
            throw .unexpected(source: source, "no three load figures", expected: "`cat /proc/loadavg`", text: text)
        }
        return LoadAverage(one: one, five: five, fifteen: fifteen)
    }
}
