/// Reading shared by the kernel files of ``NodeFigures``: numbers that may overflow, and files of
/// `name value` lines.
enum KernelFigureLines {
    /// A figure token: its value, or nil with a warning when it is all digits but passes 2^64
    /// (a newer kernel's wider counter, a corrupted read); `nil` without a warning when it is not a
    /// number at all.
    static func counter(_ token: Substring, _ what: @autoclosure () -> String, warnings: inout [String]) -> UInt64? {
        switch TextScanning.readCounter(token) {
        case .value(let value): return value
        case .outOfRange:
            warnings.append(TextScanning.outOfRangeWarning(what(), String(token)))
            return nil
        case nil: return nil
        }
    }

    /// `name value` lines (`/proc/vmstat`, `/proc/net/snmp6`) whose name `keep` accepts, in file
    /// order; lines of another shape are skipped, as a newer kernel may add them.
    static func pairs(
        _ text: String, source: String, keep: (Substring) -> Bool, warnings: inout [String]
    ) -> [KernelFigure] {
        var figures: [KernelFigure] = []
        for line in TextScanning.lines(text) {
            let fields = TextScanning.fields(line)
            guard fields.count == 2, keep(fields[0]) else { continue }
            if let value = counter(fields[1], "\(source) \(fields[0])", warnings: &warnings) {
                figures.append(KernelFigure(String(fields[0]), Double(value)))
            }
        }
        return figures
    }

    /// `figures` with each name once, its first figure kept: a garbled capture that repeats a line would
    /// otherwise give a duplicate series (and a duplicate JSON key). Each dropped repeat is a warning.
    static func firstOfEachName(_ figures: [KernelFigure], source: String, warnings: inout [String]) -> [KernelFigure] {
        var names: Set<String> = []
        return figures.filter { figure in
            if names.insert(figure.name).inserted { return true }
            warnings.append("\(source): \(figure.name) appears more than once; the first is kept")
            return false
        }
    }

    /// The single number of a one-value file (`entropy_avail`, `nf_conntrack_count`).
    static func single(_ text: String, source: String) throws(ParseError) -> UInt64 {
        let fields = words(text)
        guard fields.count == 1, let value = TextScanning.counter(fields[0]) else {
            throw ParseError(source: source, message: "expected one whole number, got `\(text.prefix(40))`")
        }
        return value
    }

    /// The words of a whole file: blanks, tabs and newlines all separate (`file-nr` is tab-separated).
    static func words(_ text: String) -> [Substring] {
        text.split { $0 == " " || $0 == "\t" || $0 == "\n" }
    }
}
