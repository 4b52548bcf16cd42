/// Reads every field of `/proc/meminfo`, named as node_exporter's meminfo collector names them:
/// `Active(anon)` becomes `Active_anon`, a figure in `kB` becomes bytes under `NAME_bytes`, a
/// figure without a unit (`HugePages_Total`) stays a count under its own name.
public enum ProcMemInfoFieldsParser {
    static let source = "/proc/meminfo"

    public static func parse(_ text: String) throws(ParseError) -> Parsed<[KernelFigure]> {
        var warnings: [String] = []
        var figures: [KernelFigure] = []
        for line in TextScanning.lines(text) {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let fields = TextScanning.fields(line[line.index(after: colon)...])
            let key = line[..<colon].trimmingBlanks()
            guard !key.isEmpty, fields.count == 1 || (fields.count == 2 && fields[1] == "kB") else { continue }
            guard let number = KernelFigureLines.counter(fields[0], "\(source) \(key)", warnings: &warnings) else {
                continue
            }
            var name = String(key)
            if let open = name.firstIndex(of: "("), name.hasSuffix(")") {
                name = name[..<open] + "_" + name[name.index(after: open)..<name.index(before: name.endIndex)]
            }
            if fields.count == 2 {
                guard let bytes = number.checkedMultiplied(by: 1024) else {
                    warnings.append(TextScanning.outOfRangeWarning("\(source) \(key) in bytes", "\(number) kB"))
                    continue
                }
                figures.append(KernelFigure(name + "_bytes", Double(bytes)))
            } else {
                figures.append(KernelFigure(name, Double(number)))
            }
        }
        guard !figures.isEmpty || !warnings.isEmpty else {
            throw .unexpected(source: source, "no `Key: value kB` line", expected: "`cat /proc/meminfo`", text: text)
        }
        return Parsed(
            KernelFigureLines.firstOfEachName(figures, source: source, warnings: &warnings), warnings: warnings)
    }
}
