/// Reads `free` output (procps 3.2 to 4.x, BusyBox old and new, any `-b/-k/-m/-g/-h/-w`, any
/// locale) into ``MemoryStats``.
///
/// `used_bytes` is the tool's own figure and `definition` names the formula it follows, found by
/// checking the arithmetic of the row rather than trusting a version guess: procps ≥ 4 prints
/// `total-available`, procps 3.3.10–3.3.17 and BusyBox ≥ 1.24 `total-free-buff/cache`. Older
/// tools put `total-free` in the `Mem:` row and the application figure on a `-/+ buffers/cache`
/// (or BusyBox `-/+ buffers`) row; that row's figure is used, as it is the one comparable with
/// the others. When `free -h` rounds too coarsely to tell the formulas apart, `definition` is
/// `null` and a warning says so.
///
/// `free` prints no unit. Unless one is given, it is inferred from the figures themselves: in
/// bytes every figure is a multiple of 1024 (the kernel counts KiB), in KiB a multiple of 4 (it
/// counts 4 KiB or larger pages), and otherwise they are MiB. Inferred units are not warned
/// about, since the rule cannot mistake one for another short of a coincidence across every
/// non-zero figure.
///
/// A figure out of range (`99999999999999999999999`, `infG`) is left out with a warning, and so
/// are the figures computed from it (`used_bytes` and `definition` when `used` is unknown).
public enum FreeParser {
    static let source = "free"

    /// The unit of figures without a suffix: what `-b`, `-k`, `-m` and `-g` select.
    public enum Unit: UInt64, Sendable {
        case bytes = 1
        case kibibytes = 1024
        case mebibytes = 1_048_576
        case gibibytes = 1_073_741_824
    }

    private enum Column { case total, used, free, shared, buffers, cache, buffCache, available }

    /// Header words, lower-cased, of the locales procps is translated into most.
    private static let columnNames: [String: Column] = [
        "total": .total, "gesamt": .total, "totale": .total,
        "used": .used, "benutzt": .used, "utilisé": .used, "usato": .used, "usado": .used,
        "free": .free, "frei": .free, "libre": .free, "libero": .free,
        "shared": .shared, "gemns.": .shared, "partagé": .shared, "condiviso": .shared, "compartido": .shared,
        "buffers": .buffers, "puffer": .buffers, "tampons": .buffers,
        "cache": .cache, "cached": .cache,
        "buff/cache": .buffCache, "puffer/cache": .buffCache, "tamp/cache": .buffCache,
        "available": .available, "verfügbar": .available, "disponible": .available, "disponibile": .available,
    ]

    /// A figure as printed and how far from the truth its rounding may be, both in bytes.
    struct Figure {
        var bytes: UInt64
        var slack: Double
    }

    /// A row label: `Mem:`, `Swap:`, translated ones, and Chinese ones ending in a full-width colon (`内存：`).
    private static func isLabel(_ field: Substring) -> Bool {
        field.hasSuffix(":") || field.hasSuffix("：")
    }

    /// A label and the figure it touches, apart: procps pads labels to a fixed width, which a long
    /// translated label fills (`Speicher:25276502016` under de_DE).
    private static func splitLabel(_ field: Substring) -> [Substring] {
        guard let colon = field.firstIndex(where: { $0 == ":" || $0 == "：" }) else { return [field] }
        let rest = field[field.index(after: colon)...]
        guard let first = rest.first, first.isASCII, first.isNumber else { return [field] }
        return [field[...colon], rest]
    }

    public static func parse(_ text: String, unit: Unit? = nil) throws(ParseError) -> Parsed<MemoryStats> {
        var header: [Substring]?
        var rows: [(label: String, values: [Substring], line: Int)] = []
        for (index, line) in TextScanning.lines(text).enumerated() {
            let fields = TextScanning.fields(line).flatMap(splitLabel)
            if fields.isEmpty { continue }
            if header == nil, !isLabel(fields[0]), fields.count >= 3 {
                header = fields
                continue
            }
            guard let labelEnd = fields.lastIndex(where: isLabel) else { continue }
            let label = fields[...labelEnd].joined(separator: " ")
            rows.append((label, Array(fields[(labelEnd + 1)...]), index + 1))
        }
        guard let memRow = rows.first(where: { !$0.label.hasPrefix("-/+") }) else {
            throw .unexpected(source: source, "no `Mem:` line", expected: "`free`", text: text)
        }
        guard let header else {
            throw .unexpected(source: source, "no `total used free …` header", expected: "`free`", text: text)
        }
        var warnings: [String] = []
        var columns = header.map { columnNames[$0.lowercased()] }
        if columns.contains(where: { $0 == nil }) || columns.count != memRow.values.count {
            columns = try fallbackColumns(count: memRow.values.count, line: memRow.line)
            warnings.append("unknown `free` header `\(header.joined(separator: " "))`: read in procps column order")
        }
        let allTokens = rows.flatMap(\.values)
        // `-h` output; `nan` or an out-of-range `99999P` alone says nothing of the others' unit.
        let scaled = allTokens.contains { $0.last?.isLetter == true && TextScanning.readSize($0)?.value != nil }
        let multiplier = scaled ? 1 : (unit ?? inferUnit(allTokens)).rawValue

        /// The row's figures; one out of range is `nil`, with a warning.
        func figures(_ row: (label: String, values: [Substring], line: Int)) throws(ParseError) -> [Figure?] {
            var result: [Figure?] = []
            for token in row.values {
                switch Self.figure(token, multiplier: multiplier) {
                case .figure(let figure): result.append(figure)
                case .outOfRange:
                    warnings.append(TextScanning.outOfRangeWarning("a figure of the `\(row.label)` row", token))
                    result.append(nil)
                case nil:
                    throw ParseError(
                        source: source, message: "`\(token)` in the `\(row.label)` row is not a size", line: row.line)
                }
            }
            return result
        }
        let mem = try figures(memRow)
        func value(_ column: Column) -> Figure? {
            columns.firstIndex(of: column).flatMap { $0 < mem.count ? mem[$0] : nil }
        }
        guard let total = value(.total), let used = value(.used), let free = value(.free) else {
            guard mem.contains(where: { $0 == nil }) else {
                throw ParseError(source: source, message: "the `Mem:` row lacks total, used or free", line: memRow.line)
            }
            // A figure out of range: the others as read, nothing computed from the unknown one.
            return Parsed(
                MemoryStats(
                    totalBytes: value(.total)?.bytes, availableBytes: value(.available)?.bytes,
                    freeBytes: value(.free)?.bytes, buffersBytes: value(.buffers)?.bytes,
                    cachedBytes: (value(.cache) ?? value(.buffCache))?.bytes),
                warnings: warnings)
        }
        var stats = MemoryStats(
            totalBytes: total.bytes, availableBytes: value(.available)?.bytes, freeBytes: free.bytes,
            buffersBytes: value(.buffers)?.bytes, cachedBytes: value(.cache)?.bytes)
        if let buffCache = value(.buffCache) {
            stats.cachedBytes = buffCache.bytes
            warnings.append("free printed one buff/cache column: cached_bytes includes buffers (`free -w` splits them)")
        }

        let swapRows = rows.drop(while: { $0.line <= memRow.line }).filter {
            !$0.label.hasPrefix("-/+") && $0.values.count == 3 && !["Low:", "High:", "Total:"].contains($0.label)
        }
        if let swapRow = swapRows.first {
            let swap = try figures(swapRow)
            stats.swapTotalBytes = swap[0]?.bytes
            stats.swapUsedBytes = swap[1]?.bytes
        }

        if let adjusted = rows.first(where: { $0.label.hasPrefix("-/+") }) {
            let figures = try figures(adjusted)
            guard figures.count == 2 else {
                throw ParseError(
                    source: source, message: "the `\(adjusted.label)` row should hold used and free",
                    line: adjusted.line)
            }
            stats.usedBytes = figures[0]?.bytes
            if stats.usedBytes != nil {
                stats.definition =
                    adjusted.label.contains("cache")
                    ? MemoryStats.Definition.totalMinusFreeBuffersCached : MemoryStats.Definition.totalMinusFreeBuffers
            }
        } else {
            stats.usedBytes = used.bytes
            let cache: Figure? =
                value(.buffCache)
                ?? value(.cache).flatMap { cache in
                    UInt64.checkedSum(cache.bytes, value(.buffers)?.bytes ?? 0).map {
                        Figure(bytes: $0, slack: cache.slack + (value(.buffers)?.slack ?? 0))
                    }
                }
            let fitting = fittingFormulas(
                total: total, used: used, free: free, cache: cache, available: value(.available))
            if fitting.count == 1 || (fitting.count > 1 && !scaled) {
                stats.definition = fitting[0]
            } else if fitting.isEmpty {
                warnings.append("free's used column matches no known formula: definition unknown")
            } else {
                warnings.append(
                    "free's figures are rounded too coarsely to tell which formula its used column follows "
                        + "(\(fitting.joined(separator: " or "))): use `free -b`")
            }
        }
        if let usedBytes = stats.usedBytes, total.bytes > 0 {
            stats.usedPercent = Double(usedBytes) / Double(total.bytes) * 100
        }
        return Parsed(stats, warnings: warnings)
    }

    /// The formulas whose result agrees with `used` within the rounding of the figures, best
    /// fit first.
    static func fittingFormulas(total: Figure, used: Figure, free: Figure, cache: Figure?, available: Figure?)
        -> [String]
    {
        var candidates: [(name: String, error: Double, slack: Double)] = []
        func consider(_ name: String, _ terms: [Figure]) {
            let figure = Double(total.bytes) - terms.reduce(0) { $0 + Double($1.bytes) }
            let slack = total.slack + used.slack + terms.reduce(0) { $0 + $1.slack }
            candidates.append((name, abs(figure - Double(used.bytes)), slack))
        }
        if let available { consider(MemoryStats.Definition.totalMinusAvailable, [available]) }
        if let cache { consider(MemoryStats.Definition.totalMinusFreeBuffCache, [free, cache]) }
        consider(MemoryStats.Definition.totalMinusFree, [free])
        return candidates.filter { $0.error <= $0.slack }.sorted { $0.error < $1.error }.map(\.name)
    }

    private static func fallbackColumns(count: Int, line: Int) throws(ParseError) -> [Column?] {
        switch count {
        case 6: return [.total, .used, .free, .shared, .buffCache, .available]
        case 7: return [.total, .used, .free, .shared, .buffers, .cache, .available]
        case 5: return [.total, .used, .free, .shared, .buffers]
        default:
            throw ParseError(
                source: source, message: "a `Mem:` row of \(count) figures matches no known `free` layout", line: line)
        }
    }

    /// Bytes if every non-zero figure is a multiple of 1024, KiB if of 4, else MiB.
    static func inferUnit(_ tokens: [Substring]) -> Unit {
        let numbers = tokens.compactMap { UInt64($0) }.filter { $0 != 0 }
        guard !numbers.isEmpty else { return .kibibytes }
        if numbers.allSatisfy({ $0 % 1024 == 0 }) { return .bytes }
        if numbers.allSatisfy({ $0 % 4 == 0 }) { return .kibibytes }
        return .mebibytes
    }

    /// A figure read, or one out of range.
    private enum Reading {
        case figure(Figure)
        case outOfRange
    }

    /// A plain figure in `multiplier` units, or a `-h` one with its suffix (`8.6Mi`, `0B`, `1,8G`);
    /// `nil` for a token that is no size.
    private static func figure(_ token: Substring, multiplier: UInt64) -> Reading? {
        if let plain = UInt64(token) {
            // Integer division in free truncates: the truth lies up to one unit above.
            guard let bytes = plain.checkedMultiplied(by: multiplier) else { return .outOfRange }
            return .figure(Figure(bytes: bytes, slack: multiplier == 1 ? 0 : Double(multiplier)))
        }
        let bytes: UInt64
        switch TextScanning.readSize(token) {
        case .value(let value): bytes = value
        case .outOfRange: return .outOfRange
        case nil: return nil
        }
        var digits = token.prefix(while: { $0.isNumber || $0 == "." || $0 == "," })
        let suffixScale = digits.isEmpty ? 1 : Double(bytes) / max(TextScanning.localizedDouble(digits) ?? 1, 1e-9)
        var step = 1.0
        if let separator = digits.firstIndex(where: { $0 == "." || $0 == "," }) {
            digits = digits[digits.index(after: separator)...]
            step = pow10(-digits.count)
        }
        // Whether free rounds or truncates, the truth lies within one step of the last digit.
        return .figure(Figure(bytes: bytes, slack: step * suffixScale))
    }

    private static func pow10(_ exponent: Int) -> Double {
        var result = 1.0
        for _ in 0..<abs(exponent) { result *= 10 }
        return exponent < 0 ? 1 / result : result
    }
}
