import ValueFormats

/// A shell glob (`*.log`, `access.?`, `[0-9]*.gz`) matched against a file name's bytes, as
/// `find -name` matches: `*` any run, `?` one character, `[...]` a set (`!` or `^` negates,
/// `a-z` ranges), `\` quotes the next character. Characters are UTF-8 scalars; a byte that is
/// not valid UTF-8 is a character of its own.
public struct GlobPattern: Sendable, Equatable {
    private enum Token: Sendable, Equatable {
        case literal(UInt32)
        case any
        case anyRun
        case set(negated: Bool, items: [SetItem])
    }

    private enum SetItem: Sendable, Equatable {
        case single(UInt32)
        case range(UInt32, UInt32)
    }

    private let tokens: [Token]
    /// The pattern as given.
    public let text: String

    public init(_ text: String) {
        self.text = text
        let units = Self.units(Array(text.utf8))
        var tokens: [Token] = []
        var index = 0
        while index < units.count {
            let unit = units[index]
            switch unit {
            case 0x2A:  // *
                if tokens.last != .anyRun { tokens.append(.anyRun) }
                index += 1
            case 0x3F:  // ?
                tokens.append(.any)
                index += 1
            case 0x5C where index + 1 < units.count:  // backslash
                tokens.append(.literal(units[index + 1]))
                index += 2
            case 0x5B:  // [
                if let (set, next) = Self.parseSet(units, from: index + 1) {
                    tokens.append(set)
                    index = next
                } else {
                    tokens.append(.literal(unit))
                    index += 1
                }
            default:
                tokens.append(.literal(unit))
                index += 1
            }
        }
        self.tokens = tokens
    }

    /// Whether `name` matches the whole pattern.
    public func matches(_ name: [UInt8]) -> Bool {
        let units = Self.units(name)
        // Iterative matching with one backtrack point for the latest `*` (linear for globs).
        var tokenIndex = 0
        var unitIndex = 0
        var starToken = -1
        var starUnit = 0
        while unitIndex < units.count {
            if tokenIndex < tokens.count, Self.matchesOne(tokens[tokenIndex], units[unitIndex]) {
                tokenIndex += 1
                unitIndex += 1
            } else if tokenIndex < tokens.count, tokens[tokenIndex] == .anyRun {
                starToken = tokenIndex
                starUnit = unitIndex
                tokenIndex += 1
            } else if starToken >= 0 {
                tokenIndex = starToken + 1
                starUnit += 1
                unitIndex = starUnit
            } else {
                return false
            }
        }
        while tokenIndex < tokens.count, tokens[tokenIndex] == .anyRun { tokenIndex += 1 }
        return tokenIndex == tokens.count
    }

    private static func matchesOne(_ token: Token, _ unit: UInt32) -> Bool {
        switch token {
        case .literal(let value): return value == unit
        case .any: return true
        case .anyRun: return false
        case .set(let negated, let items):
            let found = items.contains { item in
                switch item {
                case .single(let value): value == unit
                case .range(let low, let high): low <= unit && unit <= high
                }
            }
            return found != negated
        }
    }

    private static func parseSet(_ units: [UInt32], from start: Int) -> (Token, Int)? {
        var index = start
        var negated = false
        if index < units.count, units[index] == 0x21 || units[index] == 0x5E {
            negated = true
            index += 1
        }
        var items: [SetItem] = []
        var first = true
        while index < units.count {
            var unit = units[index]
            if unit == 0x5D && !first { return (.set(negated: negated, items: items), index + 1) }
            first = false
            if unit == 0x5C, index + 1 < units.count {
                index += 1
                unit = units[index]
            }
            if index + 2 < units.count, units[index + 1] == 0x2D, units[index + 2] != 0x5D {
                items.append(.range(unit, units[index + 2]))
                index += 3
            } else {
                items.append(.single(unit))
                index += 1
            }
        }
        return nil
    }

    /// Scalars of the valid UTF-8 in `bytes`; each invalid byte becomes a value above U+10FFFF.
    private static func units(_ bytes: [UInt8]) -> [UInt32] {
        var units: [UInt32] = []
        units.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if bytes[index] < 0x80 {
                units.append(UInt32(bytes[index]))
                index += 1
                continue
            }
            let length = EscapedText.validSequenceLength(bytes, at: index)
            if length == 0 {
                units.append(0x110000 + UInt32(bytes[index]))
                index += 1
                continue
            }
            var value = UInt32(bytes[index]) & (length == 2 ? 0x1F : length == 3 ? 0x0F : 0x07)
            for offset in 1..<length { value = value << 6 | UInt32(bytes[index + offset] & 0x3F) }
            units.append(value)
            index += length
        }
        return units
    }
}
