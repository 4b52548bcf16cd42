/// Reads `df` output into ``DiskStats``: GNU (`-kP`, `-hT`, `-PT -B1`, `-i`, any `N-blocks`
/// unit, translated headers), old coreutils and BusyBox (wrapped lines, duplicate mounts), and
/// macOS (512-byte blocks, inode columns inline), and GNU `df --output=…` tables with their columns
/// in any order (``DfOutputTable``).
///
/// A row is matched from its figures, not from header offsets: the filesystem is the shortest
/// run of words after which come [a type,] three sizes, a percentage [, two inode counts and a
/// percentage] and then the mount point, which is the rest of the line as written. So sources
/// and mount points may hold spaces and any UTF-8. `used_percent` is recomputed as
/// `used / (used + available) × 100`, unrounded, not copied from the tool's rounded column.
///
/// Several tables may be concatenated (`df -kP; df -iP`): an inode table then fills
/// `inodes_total`/`inodes_used` of the size table's mounts. A mount point listed twice (BusyBox
/// shows stacked mounts) is kept once, as GNU df does, with the last-mounted source, and a warning
/// says so unless `reportingStackedMounts` is false. A size or count out of range
/// (`99999999999999999999999`, a block count whose bytes exceed 2^64, `infG`) is left out
/// (`null`) with a warning; the row is kept.
public enum DfParser {
    static let source = "df"

    private struct Layout {
        var hasType: Bool
        /// A translated header naming no type column the parser knows: whether rows carry a type is
        /// told from the rows (``typesFromSources(_:)``).
        var typeUnknown = false
        var inodesOnly: Bool
        var inlineInodes: Bool
        /// Bytes per unit of a suffix-less size; `nil` when sizes are human-readable.
        var blockBytes: UInt64?
        /// A GNU `df --output=…` table in an order or selection the fixed shapes do not cover.
        var outputTable: DfOutputTable? = nil
    }

    public static func parse(_ text: String, reportingStackedMounts: Bool = true) throws(ParseError)
        -> Parsed<[DiskStats]>
    {
        var tables: [(layout: Layout, disks: [DiskStats])] = []
        var warnings: [String] = []
        var pending: String?
        var pendingLine = 0
        let lines = TextScanning.lines(text)
        var index = 0
        while index < lines.count {
            let line = lines[index]
            index += 1
            let trimmed = line.trimmingBlanks()
            if trimmed.isEmpty { continue }
            if trimmed.hasPrefix("df:") || trimmed.contains("/df: ") || trimmed.hasPrefix("df ") {
                warnings.append("df reported: \(trimmed)")
                continue
            }
            if let table = DfOutputTable(header: line), !table.isClassicShape {
                try table.validate(line: index)
                let layout = Layout(
                    hasType: false, inodesOnly: table.isInodesOnly, inlineInodes: false, blockBytes: nil,
                    outputTable: table)
                tables.append((layout, []))
                continue
            }
            if let layout = try header(trimmed, line: index) {
                tables.append((layout, []))
                continue
            }
            guard let layout = tables.last?.layout else { continue }
            if let table = layout.outputTable {
                guard let row = try table.row(line, line: index, warnings: &warnings) else {
                    throw ParseError(
                        source: source,
                        message: "`\(trimmed)` does not fit the columns of its `df --output` header", line: index)
                }
                tables[tables.count - 1].disks.append(row)
                continue
            }
            guard
                var row = try match(
                    line, layout: layout, allowEmptySource: pending != nil, line: index, warnings: &warnings)
            else {
                if let earlier = pending {
                    warnings.append("ignored a line that is no df row: \(earlier)")
                }
                pending = String(trimmed)
                pendingLine = index
                continue
            }
            if row.filesystem.isEmpty, let name = pending { row.filesystem = name }
            pending = nil
            // A mount point wrapped onto its own line (BusyBox, narrow terminals).
            if row.mount.isEmpty, index < lines.count {
                let next = lines[index].trimmingBlanks()
                if next.hasPrefix("/"), TextScanning.fields(next).count == 1 {
                    row.mount = String(next)
                    index += 1
                }
            }
            guard !row.mount.isEmpty else {
                throw ParseError(source: source, message: "row for \(row.filesystem) has no mount point", line: index)
            }
            tables[tables.count - 1].disks.append(row)
        }
        if let name = pending {
            throw ParseError(source: source, message: "truncated output: `\(name)` has no figures", line: pendingLine)
        }
        guard !tables.isEmpty else {
            if let refusal = untranslatedHeaderRefusal(lines) { throw refusal }
            throw .unexpected(source: source, "no `Filesystem … Mounted on` header", expected: "`df`", text: text)
        }
        guard tables.contains(where: { !$0.disks.isEmpty }) else {
            throw .unexpected(source: source, "a header but no filesystem rows", expected: "`df`", text: text)
        }
        for index in tables.indices where tables[index].layout.typeUnknown {
            tables[index].disks = typesFromSources(tables[index].disks)
        }
        let sizeTables = tables.filter { !$0.layout.inodesOnly }
        var stackWarnings: [String] = []
        var disks = deduplicated(sizeTables.flatMap(\.disks), warnings: &stackWarnings)
        let inodeRows = deduplicated(tables.filter { $0.layout.inodesOnly }.flatMap(\.disks), warnings: &stackWarnings)
        if reportingStackedMounts { warnings += stackWarnings }
        if sizeTables.isEmpty {
            disks = inodeRows
        } else {
            let byMount = Dictionary(inodeRows.map { ($0.mount, $0) }, uniquingKeysWith: { _, last in last })
            for position in disks.indices {
                guard let inodes = byMount[disks[position].mount] else { continue }
                disks[position].inodesTotal = inodes.inodesTotal
                disks[position].inodesUsed = inodes.inodesUsed
            }
        }
        return Parsed(disks, warnings: warnings)
    }

    /// The rows of a table whose header did not say whether it has a type column: when every source
    /// read as two words (`devtmpfs devtmpfs`, `/dev/vda ext4`), the second is the type, as `df -T`
    /// prints in every locale.
    private static func typesFromSources(_ disks: [DiskStats]) -> [DiskStats] {
        let split = disks.map { $0.filesystem.split(separator: " ") }
        guard !disks.isEmpty, split.allSatisfy({ $0.count == 2 }) else { return disks }
        return zip(disks, split).map { disk, words in
            var disk = disk
            disk.filesystem = String(words[0])
            disk.type = String(words[1])
            return disk
        }
    }

    private static func deduplicated(_ disks: [DiskStats], warnings: inout [String]) -> [DiskStats] {
        var result: [DiskStats] = []
        var positions: [String: Int] = [:]
        for disk in disks {
            if let position = positions[disk.mount] {
                warnings.append("\(disk.mount) is listed twice (stacked mounts): kept the last, \(disk.filesystem)")
                result[position] = disk
            } else {
                positions[disk.mount] = result.count
                result.append(disk)
            }
        }
        return result
    }

    /// The layout a header line announces, or `nil` when the line is not a df header.
    private static func header(_ line: Substring, line number: Int) throws(ParseError) -> Layout? {
        let words = TextScanning.fields(line)
        // A row holds a percentage and several figures; a header at most one block size standing alone
        // (`bloques de 1024`, `blocs de 1024`).
        guard words.count >= 4,
            !words.contains(where: { $0.hasSuffix("%") && $0.dropLast().first.map { $0.isNumber || $0 == "-" } == true }
            ),
            words.filter({ UInt64($0) != nil }).count <= 1
        else { return nil }
        let lower = words.map { $0.lowercased() }
        // Words only a df header has; `free` and `ps` headers share `available` and `size`.
        let known = [
            "filesystem", "dateisystem", "sys.", "mounted", "eingehängt", "monté", "montado", "iuse%", "verw%",
        ]
        // `1K-blocks`, `1024-blocks`, `1-blocks`, German `1K-Blöcke`: a block size, a dash, a word; a
        // size standing alone (Spanish `bloques de 1K`) or before a word of another script (`1024的块`).
        let hasKnownWord = lower.contains(where: { known.contains($0) })
        let blockSizes = lower.compactMap { word -> UInt64? in
            let size = word.prefix { $0.isASCII && ($0.isNumber || "kmgKMG".contains($0)) }
            let rest = word.dropFirst(size.count)
            guard size.first?.isNumber == true,
                (rest.isEmpty && hasKnownWord) || (rest.first == "-" && rest.dropFirst().allSatisfy(\.isLetter))
                    || rest.first.map({ !$0.isASCII && $0.isLetter }) == true
            else { return nil }
            return TextScanning.scaledSize(Substring(size))
        }
        guard hasKnownWord || !blockSizes.isEmpty else { return nil }
        if lower.contains("inodes") && !blockSizes.isEmpty {
            // A translated GNU `df --output=…` header (English ones go to DfOutputTable): read by the
            // fixed layouts above, its figures would land in the wrong fields.
            throw ParseError(
                source: source,
                message: "sizes and inode counts in one table with translated column names (GNU `df --output=…`) "
                    + "are not read; capture it under LC_ALL=C, or capture `df -kPT` and `df -iP`",
                line: number)
        }
        let inodesOnly = lower.contains("inodes") || (lower.contains("iuse%") && blockSizes.isEmpty)
        var blockBytes = blockSizes.first
        if inodesOnly { blockBytes = 1 }
        let hasType = lower.contains("type") || lower.contains("typ") || lower.contains("tipo")
        return Layout(
            hasType: hasType, typeUnknown: !hasType && !lower.contains("filesystem"),
            inodesOnly: inodesOnly, inlineInodes: lower.contains("iused") && !inodesOnly, blockBytes: blockBytes)
    }

    /// The refusal for df output whose header is in a language the parser does not read: a first
    /// line of words and no figures, over rows holding a percentage. Its plain figures could be
    /// 1K blocks, bytes or inode counts, and guessing would misread them, so the sentence names the
    /// commands to capture instead.
    private static func untranslatedHeaderRefusal(_ lines: [Substring]) -> ParseError? {
        guard let headerIndex = lines.firstIndex(where: { !$0.trimmingBlanks().isEmpty }) else { return nil }
        let words = TextScanning.fields(lines[headerIndex])
        guard words.count >= 3, !words.contains(where: { $0.hasSuffix("%") && Double($0.dropLast()) != nil }),
            lines[(headerIndex + 1)...].contains(where: { line in
                TextScanning.fields(line).contains { $0.hasSuffix("%") && UInt64($0.dropLast()) != nil }
            })
        else { return nil }
        return ParseError(
            source: source,
            message: "the column names `\(lines[headerIndex].trimmingBlanks())` are in a language hostscope does not "
                + "read, so its figures could be blocks, bytes or inode counts; capture `LC_ALL=C df -kPT` for sizes "
                + "(and `LC_ALL=C df -iP` for inodes) instead",
            line: headerIndex + 1)
    }

    /// The row in `line`, or `nil` when it holds no run of figures (a wrapped source name).
    private static func match(
        _ line: Substring, layout: Layout, allowEmptySource: Bool, line number: Int, warnings: inout [String]
    ) throws(ParseError) -> DiskStats? {
        let tokens = TextScanning.fieldRanges(line)
        var kinds: [Kind] = layout.hasType ? [.word] : []
        kinds += [.size, .size, .size, .percent]
        if layout.inlineInodes { kinds += [.count, .count, .percent] }
        let firstStart = allowEmptySource ? 0 : 1
        guard tokens.count >= kinds.count + firstStart else { return nil }
        for start in firstStart...(tokens.count - kinds.count) {
            let candidate = tokens[start..<(start + kinds.count)]
            guard zip(kinds, candidate).allSatisfy({ $0.accepts(line[$1]) }) else { continue }
            let filesystem = start == 0 ? "" : String(line[tokens[0].lowerBound..<tokens[start - 1].upperBound])
            let end = candidate.last!.upperBound
            let mount = String(line[end...].trimmingBlanks())
            var values = candidate.map { line[$0] }
            var disk = DiskStats(filesystem: filesystem, mount: mount)
            if layout.hasType { disk.type = String(values.removeFirst()) }
            func size(_ token: Substring) throws(ParseError) -> UInt64? {
                try Self.size(token, blockBytes: layout.blockBytes, line: number, warnings: &warnings)
            }
            let first = try size(values[0])
            let used = try size(values[1])
            let available = try size(values[2])
            if layout.inodesOnly {
                disk.inodesTotal = first
                disk.inodesUsed = used
            } else {
                disk.sizeBytes = first
                disk.usedBytes = used
                disk.availableBytes = available
                disk.usedPercent = DiskStats.usedPercent(used: used, available: available)
            }
            if layout.inlineInodes {
                let iused = try count(values[4], line: number, warnings: &warnings)
                let ifree = try count(values[5], line: number, warnings: &warnings)
                disk.inodesUsed = iused
                disk.inodesTotal = iused.flatMap { used in ifree.flatMap { UInt64.checkedSum(used, $0) } }
            }
            return disk
        }
        return nil
    }

    /// A size cell in bytes: a plain number of `blockBytes` units (bytes when `nil`), or a size with a
    /// unit suffix (`-h`); `nil` for `-`, and for a size out of range, named in `warnings`.
    static func size(
        _ token: Substring, blockBytes: UInt64?, line number: Int, warnings: inout [String]
    ) throws(ParseError) -> UInt64? {
        if token == "-" { return nil }
        let reading: FigureReading?
        if let plain = UInt64(token) {
            reading = plain.checkedMultiplied(by: blockBytes ?? 1).map(FigureReading.value) ?? .outOfRange
        } else {
            reading = TextScanning.readSize(token)
        }
        switch reading {
        case .value(let bytes): return bytes
        case .outOfRange:
            warnings.append(TextScanning.outOfRangeWarning("df size on line \(number)", token))
            return nil
        case nil: throw ParseError(source: source, message: "`\(token)` is not a size", line: number)
        }
    }

    /// A count cell (inodes): plain digits, or a scaled count under `-h` (`16M`); `nil` for `-`, and
    /// for a count out of range, named in `warnings`.
    static func count(_ token: Substring, line number: Int, warnings: inout [String]) throws(ParseError) -> UInt64? {
        if token == "-" { return nil }
        switch TextScanning.readCounter(token) ?? TextScanning.readSize(token) {
        case .value(let count): return count
        case .outOfRange:
            warnings.append(TextScanning.outOfRangeWarning("df count on line \(number)", token))
            return nil
        case nil: throw ParseError(source: source, message: "`\(token)` is not a count", line: number)
        }
    }

    /// Plain ASCII digits, however many.
    static func isDigits(_ token: Substring) -> Bool {
        !token.isEmpty && token.utf8.allSatisfy { $0 >= 48 && $0 <= 57 }
    }

    /// What a cell may hold.
    enum Kind {
        case word, size, count, percent

        func accepts(_ token: Substring) -> Bool {
            switch self {
            case .word: return true
            case .count: return isDigits(token) || token == "-"
            case .percent: return token == "-" || (token.hasSuffix("%") && UInt64(token.dropLast()) != nil)
            case .size:
                if token == "-" || isDigits(token) { return true }
                guard let first = token.first, first.isNumber, token.last?.isLetter == true else { return false }
                return TextScanning.readSize(token) != nil
            }
        }
    }
}
