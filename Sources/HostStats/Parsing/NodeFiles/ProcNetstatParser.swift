/// Reads `/proc/net/netstat` and `/proc/net/snmp` (pairs of lines, `Tcp: RtoAlgorithm RtoMin …`
/// then `Tcp: 1 200 …`) and `/proc/net/snmp6` (`Udp6InDatagrams 12` lines), naming each figure
/// `Protocol_Field` as node_exporter's netstat collector does, and keeping its default selection
/// (``isDefaultField(_:)``).
public enum ProcNetstatParser {
    /// A file of header and value line pairs (`/proc/net/netstat`, `/proc/net/snmp`).
    public static func parse(_ text: String, source: String = "/proc/net/netstat") throws(ParseError) -> Parsed<
        [KernelFigure]
    > {
        var figures: [KernelFigure] = []
        var warnings: [String] = []
        var header: (protocolName: Substring, names: [Substring], line: Int)?
        for (index, line) in TextScanning.lines(text).enumerated() where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let protocolName = line[..<colon]
            let fields = TextScanning.fields(line[line.index(after: colon)...])
            guard let names = header, names.protocolName == protocolName else {
                header = (protocolName, fields, index + 1)
                continue
            }
            header = nil
            guard fields.count == names.names.count else {
                throw ParseError(
                    source: source,
                    message: "`\(protocolName)` has \(fields.count) values, its header line names \(names.names.count)",
                    line: index + 1)
            }
            for (name, token) in zip(names.names, fields) {
                let key = "\(protocolName)_\(name)"
                guard isDefaultField(key) else { continue }
                // Tcp's MaxConn is -1 ("no limit"): the one signed figure.
                if token.hasPrefix("-"), let value = Int64(token) {
                    figures.append(KernelFigure(key, Double(value)))
                } else if let value = KernelFigureLines.counter(token, "\(source) \(key)", warnings: &warnings) {
                    figures.append(KernelFigure(key, Double(value)))
                }
            }
        }
        figures = KernelFigureLines.firstOfEachName(figures, source: source, warnings: &warnings)
        guard !figures.isEmpty || !warnings.isEmpty || text.contains(":") else {
            throw .unexpected(source: source, "no `Protocol: Field …` line", expected: "`cat \(source)`", text: text)
        }
        return Parsed(figures, warnings: warnings)
    }

    /// `/proc/net/snmp6`: `Ip6InOctets 1234` lines; the protocol is the name up to its `6`.
    public static func parseSNMP6(_ text: String) throws(ParseError) -> Parsed<[KernelFigure]> {
        var warnings: [String] = []
        var figures: [KernelFigure] = []
        for line in TextScanning.lines(text) {
            let fields = TextScanning.fields(line)
            guard fields.count == 2, let six = fields[0].firstIndex(of: "6") else { continue }
            let key = "\(fields[0][...six])_\(fields[0][fields[0].index(after: six)...])"
            guard isDefaultField(key) else { continue }
            if let value = KernelFigureLines.counter(fields[1], "/proc/net/snmp6 \(key)", warnings: &warnings) {
                figures.append(KernelFigure(key, Double(value)))
            }
        }
        return Parsed(
            KernelFigureLines.firstOfEachName(figures, source: "/proc/net/snmp6", warnings: &warnings),
            warnings: warnings)
    }

    /// node_exporter's default `--collector.netstat.fields`:
    /// `^(.*_(InErrors|InErrs)|Ip_Forwarding|Ip(6|Ext)_(InOctets|OutOctets)|Icmp6?_(InMsgs|OutMsgs)|`
    /// `TcpExt_(Listen.*|Syncookies.*|TCPSynRetrans|TCPTimeouts)|Tcp_(ActiveOpens|InSegs|OutSegs|OutRsts|`
    /// `PassiveOpens|RetransSegs|CurrEstab)|Udp6?_(InDatagrams|OutDatagrams|NoPorts|RcvbufErrors|SndbufErrors))$`.
    public static func isDefaultField(_ key: String) -> Bool {
        guard let underscore = key.firstIndex(of: "_") else { return false }
        let protocolName = key[..<underscore]
        let field = key[key.index(after: underscore)...]
        if key.hasSuffix("_InErrors") || key.hasSuffix("_InErrs") { return true }
        switch protocolName {
        case "Ip": return field == "Forwarding"
        case "Ip6", "IpExt": return field == "InOctets" || field == "OutOctets"
        case "Icmp", "Icmp6": return field == "InMsgs" || field == "OutMsgs"
        case "TcpExt":
            return field.hasPrefix("Listen") || field.hasPrefix("Syncookies") || field == "TCPSynRetrans"
                || field == "TCPTimeouts"
        case "Tcp":
            return ["ActiveOpens", "InSegs", "OutSegs", "OutRsts", "PassiveOpens", "RetransSegs", "CurrEstab"]
                .contains(field)
        case "Udp", "Udp6":
            return ["InDatagrams", "OutDatagrams", "NoPorts", "RcvbufErrors", "SndbufErrors"].contains(field)
        default: return false
        }
    }
}
