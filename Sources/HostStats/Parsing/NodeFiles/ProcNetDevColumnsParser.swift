/// Reads every column of `/proc/net/dev` for each device, named as node_exporter names them
/// (`receive_bytes` … `receive_multicast`, `transmit_bytes` … `transmit_compressed`).
///
/// The names come from the column line (`face |bytes packets …|bytes …`), so a kernel that adds a
/// column adds a figure; a device line whose count of values differs from the header's is an error
/// naming its line.
public enum ProcNetDevColumnsParser {
    static let source = "/proc/net/dev"

    public static func parse(_ text: String) throws(ParseError) -> Parsed<[NetworkDeviceCounters]> {
        var names: [String] = []
        var devices: [NetworkDeviceCounters] = []
        var warnings: [String] = []
        for (index, line) in TextScanning.lines(text).enumerated() {
            if line.contains("|") {
                let groups = line.split(separator: "|", omittingEmptySubsequences: false)
                if groups.count == 3, TextScanning.fields(groups[1]).contains("bytes") {
                    names =
                        TextScanning.fields(groups[1]).map { "receive_\($0)" }
                        + TextScanning.fields(groups[2]).map { "transmit_\($0)" }
                }
                continue
            }
            guard let colon = line.firstIndex(of: ":") else { continue }
            guard !names.isEmpty else {
                throw .unexpected(
                    source: source, "no `face |bytes packets …` header line", expected: "`cat /proc/net/dev`",
                    text: text, line: index + 1)
            }
            let device = String(line[..<colon].trimmingBlanks())
            let values = TextScanning.fields(line[line.index(after: colon)...])
            guard values.count == names.count else {
                throw ParseError(
                    source: source, message: "\(device) has \(values.count) counters, the header names \(names.count)",
                    line: index + 1)
            }
            var counters: [KernelFigure] = []
            for (name, token) in zip(names, values) {
                guard let value = KernelFigureLines.counter(token, "\(source) \(device) \(name)", warnings: &warnings)
                else {
                    if TextScanning.readCounter(token) == nil {
                        throw ParseError(source: source, message: "`\(token)` is not a counter", line: index + 1)
                    }
                    continue
                }
                counters.append(KernelFigure(name, Double(value)))
            }
            devices.append(NetworkDeviceCounters(device: device, counters: counters))
        }
        guard !devices.isEmpty else {
            throw .unexpected(source: source, "no interface line", expected: "`cat /proc/net/dev`", text: text)
        }
        return Parsed(devices, warnings: warnings)
    }
}
