/// Reads BSD/macOS `netstat -i -b [-n] [-d]` into per-interface counters.
///
/// netstat prints one row per address of each interface; only the `<Link#N>` rows carry the
/// interface's own counters, and the Address column of some is empty (`lo0`), so each row is read
/// from its right: the numeric columns named by the header, then whatever address precedes them.
/// Names are cut to 5 characters by older releases (`bridg`), and a trailing `*` marks an
/// interface that is down; two links whose cut names collide are told apart by their link
/// number (`vmnet#8`). Without `-b` there are no byte counters, which a warning says.
public enum NetstatParser {
    static let source = "netstat"

    public static func parse(_ text: String) throws(ParseError) -> Parsed<[NetworkInterfaceStats]> {
        let lines = TextScanning.lines(text)
        guard
            let headerIndex = lines.firstIndex(where: { line in
                let fields = TextScanning.fields(line)
                return fields.first == "Name" && fields.contains("Mtu") && fields.contains("Ipkts")
            })
        else {
            throw .unexpected(
                source: source, "no `Name Mtu Network Address Ipkts …` header", expected: "`netstat -ib`", text: text)
        }
        let header = TextScanning.fields(lines[headerIndex])
        guard let firstCounter = header.firstIndex(of: "Ipkts") else {
            throw ParseError(source: source, message: "header without Ipkts")
        }
        let counters = Array(header[firstCounter...])
        var warnings: [String] = []
        var interfaces: [(link: Int, stats: NetworkInterfaceStats)] = []
        for (offset, line) in lines[(headerIndex + 1)...].enumerated() {
            let fields = TextScanning.fields(line)
            guard fields.count >= 3 + counters.count, fields[2].hasPrefix("<Link#"),
                let link = Int(fields[2].dropFirst("<Link#".count).dropLast())
            else { continue }
            var values: [String: UInt64] = [:]
            for (name, value) in zip(counters, fields.suffix(counters.count)) {
                switch TextScanning.readCounter(value) {
                case .value(let number): values[String(name)] = number
                case .outOfRange:
                    warnings.append(TextScanning.outOfRangeWarning("netstat \(name) of \(fields[0])", value))
                case nil:
                    throw ParseError(
                        source: source, message: "`\(value)` under \(name) is not a counter",
                        line: headerIndex + offset + 2)
                }
            }
            var name = fields[0]
            if name.hasSuffix("*") { name = name.dropLast() }
            interfaces.append(
                (
                    link,
                    NetworkInterfaceStats(
                        interface: String(name), rxBytes: values["Ibytes"], txBytes: values["Obytes"],
                        rxErrors: values["Ierrs"],
                        txErrors: values["Oerrs"], rxDropped: values["Idrop"], txDropped: values["Drop"])
                ))
        }
        guard !interfaces.isEmpty else {
            throw ParseError(source: source, message: "no `<Link#N>` row: expected the output of `netstat -ib`")
        }
        if !counters.contains("Ibytes") { warnings.append("netstat without -b prints no byte counters") }
        var seen: [String: Int] = [:]
        for (name, count) in interfaces.reduce(into: [String: Int](), { $0[$1.stats.interface, default: 0] += 1 }) {
            seen[name] = count
        }
        let result = interfaces.map { entry -> NetworkInterfaceStats in
            var stats = entry.stats
            if seen[stats.interface, default: 0] > 1 { stats.interface += "#\(entry.link)" }
            return stats
        }
        if result.count != Set(interfaces.map(\.stats.interface)).count {
            warnings.append("netstat cut some interface names short: links with the same cut name are suffixed with #N")
        }
        return Parsed(result, warnings: warnings)
    }
}
