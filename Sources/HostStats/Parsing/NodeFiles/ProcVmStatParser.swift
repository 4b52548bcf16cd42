/// Reads `/proc/vmstat`, keeping node_exporter's default fields
/// (`--collector.vmstat.fields`, `^(oom_kill|pgpg|pswp|pg.*fault).*`).
public enum ProcVmStatParser {
    static let source = "/proc/vmstat"

    public static func parse(_ text: String) throws(ParseError) -> Parsed<[KernelFigure]> {
        var warnings: [String] = []
        let figures = KernelFigureLines.firstOfEachName(
            KernelFigureLines.pairs(text, source: source, keep: isDefaultField, warnings: &warnings), source: source,
            warnings: &warnings)
        guard !figures.isEmpty || !warnings.isEmpty || text.contains("nr_free_pages") else {
            throw .unexpected(source: source, "no `name value` line", expected: "`cat /proc/vmstat`", text: text)
        }
        return Parsed(figures, warnings: warnings)
    }

    /// node_exporter's default field selection, `^(oom_kill|pgpg|pswp|pg.*fault).*`.
    public static func isDefaultField(_ name: Substring) -> Bool {
        if name.hasPrefix("oom_kill") || name.hasPrefix("pgpg") || name.hasPrefix("pswp") { return true }
        return name.hasPrefix("pg") && name.dropFirst(2).contains("fault")
    }
}
