/// Reads `/proc/net/sockstat` or `sockstat6`: `TCP: inuse 5 orphan 0 tw 2 alloc 8 mem 1` becomes
/// `TCP_inuse 5`, `TCP_orphan 0` …, `sockets: used 120` becomes `sockets_used 120`. `mem` figures
/// are pages, as the kernel counts them.
public enum ProcSockstatParser {
    public static func parse(_ text: String, source: String = "/proc/net/sockstat") throws(ParseError) -> Parsed<
        [KernelFigure]
    > {
        var figures: [KernelFigure] = []
        var warnings: [String] = []
        for (index, line) in TextScanning.lines(text).enumerated() where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let protocolName = line[..<colon]
            let fields = TextScanning.fields(line[line.index(after: colon)...])
            guard fields.count % 2 == 0 else {
                throw ParseError(
                    source: source, message: "`\(protocolName)` has an odd number of fields: expected name value pairs",
                    line: index + 1)
            }
            for pair in stride(from: 0, to: fields.count, by: 2) {
                let name = "\(protocolName)_\(fields[pair])"
                if let value = KernelFigureLines.counter(fields[pair + 1], "\(source) \(name)", warnings: &warnings) {
                    figures.append(KernelFigure(name, Double(value)))
                }
            }
        }
        guard !figures.isEmpty || !warnings.isEmpty else {
            throw .unexpected(
                source: source, "no `PROTOCOL: name value …` line", expected: "`cat \(source)`", text: text)
        }
        return Parsed(
            KernelFigureLines.firstOfEachName(figures, source: source, warnings: &warnings), warnings: warnings)
    }
}
