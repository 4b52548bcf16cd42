/// A GNU `df --output=…` table, whose columns come in any order and any selection: read by its
/// header's column names, not by the fixed shapes ``DfParser`` matches.
///
/// GNU df left-aligns its text columns (source, type, file, mount point) and right-aligns its
/// figures, padding each column to its widest cell. A row is split by the kind of each column: a
/// figure column takes one token that reads as a size, count or percentage; the type takes one
/// word; a text column takes one or more words, since sources, files and mount points may hold
/// spaces. When two text columns meet (`--output=source,target`), the split is the one whose
/// second cell starts where that column's header starts, counted in bytes (the C locale pads by
/// bytes) or in display columns (a UTF-8 locale pads by width).
///
/// Only the C locale's (English) column names are recognised; a translated `--output` header is
/// left to ``DfParser``'s fixed shapes.
struct DfOutputTable {
    enum Column: Equatable {
        case source, fstype, itotal, iused, iavail, ipcent, size, used, avail, pcent, file, target

        /// Cells that may hold spaces.
        var isText: Bool { self == .source || self == .file || self == .target }
        /// Left-aligned cells (text and the type); figures are right-aligned.
        var isLeftAligned: Bool { isText || self == .fstype }
    }

    private struct HeaderColumn {
        var column: Column
        /// Where the label starts and ends, in bytes and in display columns.
        var start: (bytes: Int, width: Int)
        var end: (bytes: Int, width: Int)
    }

    private let columns: [HeaderColumn]
    /// Bytes per unit of a plain number in the size columns; `nil` for `Size` (human-readable).
    private let blockBytes: UInt64?

    /// The table a header line announces, when every word of it is a GNU `--output` column name.
    init?(header line: Substring) {
        let tokens = TextScanning.fieldRanges(line)
        guard !tokens.isEmpty else { return nil }
        var columns: [HeaderColumn] = []
        var blockBytes: UInt64?
        var index = 0
        while index < tokens.count {
            let word = line[tokens[index]]
            var range = tokens[index]
            let column: Column
            switch word {
            case "Filesystem": column = .source
            case "Type": column = .fstype
            case "Inodes": column = .itotal
            case "IUsed": column = .iused
            case "IFree": column = .iavail
            case "IUse%": column = .ipcent
            case "Size": column = .size
            case "Used": column = .used
            case "Avail", "Available": column = .avail
            case "Use%", "Capacity": column = .pcent
            case "File": column = .file
            case "Mounted":
                guard index + 1 < tokens.count, line[tokens[index + 1]] == "on" else { return nil }
                index += 1
                range = range.lowerBound..<tokens[index].upperBound
                column = .target
            default:
                // `1K-blocks`, `1B-blocks`, `1M-blocks`, `1024-blocks`.
                guard word.hasSuffix("-blocks"), let size = TextScanning.scaledSize(word.dropLast(7)), size > 0 else {
                    return nil
                }
                blockBytes = size
                column = .size
            }
            guard !columns.contains(where: { $0.column == column }) else { return nil }
            columns.append(
                HeaderColumn(
                    column: column, start: Self.offset(of: range.lowerBound, in: line),
                    end: Self.offset(of: range.upperBound, in: line)))
            index += 1
        }
        guard columns.count >= 2 else { return nil }
        self.columns = columns
        self.blockBytes = blockBytes
    }

    /// The columns, in order.
    var order: [Column] { columns.map(\.column) }

    /// Whether the table holds only inode figures (it then fills the inodes of a size table).
    var isInodesOnly: Bool {
        order.contains { [.itotal, .iused, .iavail].contains($0) }
            && !order.contains { [.size, .used, .avail].contains($0) }
    }

    /// Whether the columns are one of the fixed shapes that plain `df -kP`, `-kPT`, `-hT` and `-iP`
    /// print (and BusyBox `df -i`, whose inode columns are named `Inodes Used Available Use%`),
    /// which ``DfParser`` reads by their figures, in every locale.
    var isClassicShape: Bool {
        var rest = order[...]
        guard rest.popFirst() == .source else { return false }
        if rest.first == .fstype { rest = rest.dropFirst() }
        return [
            [.size, .used, .avail, .pcent, .target], [.itotal, .iused, .iavail, .ipcent, .target],
            [.itotal, .used, .avail, .pcent, .target],
        ].contains(Array(rest))
    }

    /// Checks that rows can be told apart and keyed: a mount point is needed.
    func validate(line number: Int) throws(ParseError) {
        guard order.contains(.target) else {
            throw ParseError(
                source: DfParser.source,
                message: "this `df --output` table has no `Mounted on` column, which rows are told apart by: "
                    + "add `target` to --output",
                line: number)
        }
    }

    /// The row in `line`, or `nil` when its words do not fit the columns; figures out of range are
    /// left out and named in `warnings`.
    func row(_ line: Substring, line number: Int, warnings: inout [String]) throws(ParseError) -> DiskStats? {
        let tokens = TextScanning.fieldRanges(line)
        var split = RowSplit(tokens: tokens, line: line)
        guard let cells = assign(&split, column: 0, token: 0) else { return nil }
        var disk = DiskStats(filesystem: "", mount: "")
        var values: [Column: Substring] = [:]
        for (column, range) in zip(order, cells) { values[column] = line[range] }
        func size(_ column: Column) throws(ParseError) -> UInt64? {
            guard let token = values[column] else { return nil }
            return try DfParser.size(token, blockBytes: blockBytes, line: number, warnings: &warnings)
        }
        func count(_ column: Column) throws(ParseError) -> UInt64? {
            guard let token = values[column] else { return nil }
            return try DfParser.count(token, line: number, warnings: &warnings)
        }
        disk.filesystem = values[.source].map(String.init) ?? ""
        disk.mount = values[.target].map(String.init) ?? ""
        disk.type = values[.fstype].map(String.init)
        disk.sizeBytes = try size(.size)
        disk.usedBytes = try size(.used)
        disk.availableBytes = try size(.avail)
        disk.usedPercent = DiskStats.usedPercent(used: disk.usedBytes, available: disk.availableBytes)
        if disk.usedPercent == nil, let percent = values[.pcent], percent != "-" {
            // Without both used and available figures, df's own rounded percentage is all there is.
            disk.usedPercent = Double(percent.dropLast())
        }
        let total = try count(.itotal)
        let used = try count(.iused)
        let free = try count(.iavail)
        disk.inodesTotal = total ?? used.flatMap { used in free.flatMap { UInt64.checkedSum(used, $0) } }
        disk.inodesUsed = used ?? total.flatMap { total in free.map { total >= $0 ? total - $0 : 0 } }
        return disk
    }

    /// One row's tokens with where each starts and ends (in bytes and display columns), measured
    /// once, and the (column, token) pairs already known not to fit: without them a row of many
    /// words (a broken or hostile line) took time cubic in its length.
    private struct RowSplit {
        let tokens: [Range<Substring.Index>]
        let line: Substring
        let starts: [(bytes: Int, width: Int)]
        let ends: [(bytes: Int, width: Int)]
        var failed: Set<Int> = []

        init(tokens: [Range<Substring.Index>], line: Substring) {
            self.tokens = tokens
            self.line = line
            var starts: [(bytes: Int, width: Int)] = []
            var ends: [(bytes: Int, width: Int)] = []
            starts.reserveCapacity(tokens.count)
            ends.reserveCapacity(tokens.count)
            var position = (bytes: 0, width: 0, index: line.startIndex)
            func advance(to index: Substring.Index) -> (bytes: Int, width: Int) {
                for scalar in line.unicodeScalars[position.index..<index] {
                    position.bytes += UTF8.width(scalar)
                    position.width += DfOutputTable.isWide(scalar) ? 2 : 1
                }
                position.index = index
                return (position.bytes, position.width)
            }
            for token in tokens {
                starts.append(advance(to: token.lowerBound))
                ends.append(advance(to: token.upperBound))
            }
            self.starts = starts
            self.ends = ends
        }
    }

    /// Token ranges per column from `column` on, or `nil` when the tokens from `token` on do not fit.
    private func assign(_ split: inout RowSplit, column: Int, token: Int) -> [Range<Substring.Index>]? {
        let key = column * (split.tokens.count + 1) + token
        if split.failed.contains(key) { return nil }
        let result = assignUnmemoized(&split, column: column, token: token)
        if result == nil { split.failed.insert(key) }
        return result
    }

    private func assignUnmemoized(_ split: inout RowSplit, column: Int, token: Int) -> [Range<Substring.Index>]? {
        let tokens = split.tokens
        guard column < columns.count else { return token == tokens.count ? [] : nil }
        let remaining = columns.count - column - 1
        let kind = columns[column].column
        guard kind.isText else {
            guard token < tokens.count, Self.accepts(kind, split.line[tokens[token]]),
                let rest = assign(&split, column: column + 1, token: token + 1)
            else { return nil }
            return [tokens[token]] + rest
        }
        // A text cell takes at least one word and leaves at least one for each later column.
        let most = tokens.count - token - remaining
        guard most >= 1 else { return nil }
        if remaining == 0 { return [tokens[token].lowerBound..<tokens[tokens.count - 1].upperBound] }
        // Splits closest to where the next column's header sits come first.
        let next = columns[column + 1]
        let distances = (1...most).map { taken in (distance(token: token + taken, to: next, in: split), taken) }
        for (_, taken) in distances.sorted(by: <) {
            if let rest = assign(&split, column: column + 1, token: token + taken) {
                return [tokens[token].lowerBound..<tokens[token + taken - 1].upperBound] + rest
            }
        }
        return nil
    }

    /// How far token `index` lies from its column's header: by its start for a left-aligned column,
    /// its end for a right-aligned one; the nearer of the byte and display-column measures.
    private func distance(token index: Int, to header: HeaderColumn, in split: RowSplit) -> Int {
        let (edge, target) =
            header.column.isLeftAligned ? (split.starts[index], header.start) : (split.ends[index], header.end)
        return min(abs(edge.bytes - target.bytes), abs(edge.width - target.width))
    }

    private static func accepts(_ column: Column, _ token: Substring) -> Bool {
        switch column {
        case .source, .file, .target, .fstype: return true
        case .pcent, .ipcent: return DfParser.Kind.percent.accepts(token)
        // Inode counts are scaled too under `-h` (`16M`), so they read as sizes.
        case .itotal, .iused, .iavail, .size, .used, .avail: return DfParser.Kind.size.accepts(token)
        }
    }

    /// The position of `index` in `line`, in bytes and in display columns (East Asian wide
    /// characters take two).
    private static func offset(of index: Substring.Index, in line: Substring) -> (bytes: Int, width: Int) {
        let prefix = line.unicodeScalars[..<index]
        var width = 0
        for scalar in prefix { width += isWide(scalar) ? 2 : 1 }
        return (line.utf8.distance(from: line.startIndex, to: index), width)
    }

    fileprivate static func isWide(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF,
            0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x1F300...0x1F64F,
            0x1F900...0x1F9FF, 0x20000...0x3FFFD:
            return true
        default:
            return false
        }
    }
}
