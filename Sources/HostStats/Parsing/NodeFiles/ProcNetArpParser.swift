/// Reads `/proc/net/arp` into the count of entries per device (its last column), as node_exporter's
/// arp collector reports them.
public enum ProcNetArpParser {
    static let source = "/proc/net/arp"

    public static func parse(_ text: String) throws(ParseError) -> [KernelFigure] {
        var counts: [(String, Int)] = []
        var sawHeader = false
        for (index, line) in TextScanning.lines(text).enumerated() where !line.isEmpty {
            let fields = TextScanning.fields(line)
            if fields.first == "IP" {
                sawHeader = true
                continue
            }
            guard fields.count >= 6, let device = fields.last else {
                throw ParseError(source: source, message: "expected six columns ending in the device", line: index + 1)
            }
            if let position = counts.firstIndex(where: { $0.0 == device }) {
                counts[position].1 += 1
            } else {
                counts.append((String(device), 1))
            }
        }
        guard sawHeader else {
            throw .unexpected(
                source: source, "no `IP address HW type …` header", expected: "`cat \(source)`", text: text)
        }
        return counts.map { KernelFigure($0.0, Double($0.1)) }
    }
}
