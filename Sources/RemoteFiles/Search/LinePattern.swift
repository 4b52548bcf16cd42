/// A grep pattern, parsed: POSIX extended regular expressions with the escapes people bring from
/// Perl and Swift `Regex`, and nothing whose matching can take more than time linear in the line.
///
/// Accepted: `|`, `( )`, `(?: )`, named groups `(?<name> )`, `* + ? {n} {n,} {n,m} {,m}` and
/// their lazy forms (`*?`, which match the same lines), `.`, `^ $`, bracket expressions with
/// ranges, negation and `[:alpha:]`-style classes, `\d \D \w \W \s \S \b \B \A \z \Z`, `\t \n
/// \r \f \v \e \a`, `\xHH \x{H…} \uHHHH \u{H…}`, a backslash before punctuation for the
/// character itself, and a leading `(?i)` for case-insensitive matching.
///
/// Refused, each with a sentence saying so: back-references (`\1`, `\k<name>`), look-around,
/// atomic groups and possessive quantifiers (none can be matched without backtracking), `\p{…}`
/// properties, inline options other than a leading `(?i)`, collating elements, and repeat
/// counts above ``maxRepeat``.
indirect enum LinePattern: Equatable, Sendable {
    case empty
    case unit(UnitSet)
    case assertion(Assertion)
    case concatenation([LinePattern])
    case alternation([LinePattern])
    case repetition(LinePattern, min: Int, max: Int?)

    enum Assertion: Equatable, Sendable {
        case lineStart, lineEnd, wordBoundary, notWordBoundary
    }

    /// The largest count a `{n,m}` may have.
    static let maxRepeat = 1000

    /// What is wrong with a pattern, as a sentence fragment.
    struct ParseError: Error, Equatable {
        enum Kind: Equatable {
            /// Mistyped: the fragment says where.
            case invalid
            /// Syntax refused on purpose, because only a backtracking matcher runs it: the
            /// fragment names it.
            case unsupported
            /// Too costly to build: the fragment says what is too large.
            case tooLarge
        }

        var reason: String
        var kind = Kind.invalid
    }

    /// A parsed pattern and whether it asked for case-insensitive matching with `(?i)`.
    static func parse(_ text: String) throws(ParseError) -> (pattern: LinePattern, ignoreCase: Bool) {
        var parser = Parser(Array(text.unicodeScalars))
        var ignoreCase = false
        if parser.consume("(?i)") { ignoreCase = true }
        let pattern = try parser.parseAlternation()
        if parser.position < parser.scalars.count {
            // Only an unmatched `)` stops the top level early.
            throw ParseError(reason: "a `)` at offset \(parser.position) closes no group")
        }
        return (pattern, ignoreCase)
    }

    private struct Parser {
        let scalars: [Unicode.Scalar]
        var position = 0

        init(_ scalars: [Unicode.Scalar]) {
            self.scalars = scalars
        }

        var atEnd: Bool { position >= scalars.count }
        func peek(_ offset: Int = 0) -> Unicode.Scalar? {
            position + offset < scalars.count ? scalars[position + offset] : nil
        }

        mutating func consume(_ text: String) -> Bool {
            let wanted = Array(text.unicodeScalars)
            guard position + wanted.count <= scalars.count,
                Array(scalars[position..<position + wanted.count]) == wanted
            else { return false }
            position += wanted.count
            return true
        }

        mutating func parseAlternation() throws(ParseError) -> LinePattern {
            var branches = [try parseConcatenation()]
            while peek() == "|" {
                position += 1
                branches.append(try parseConcatenation())
            }
            return branches.count == 1 ? branches[0] : .alternation(branches)
        }

        mutating func parseConcatenation() throws(ParseError) -> LinePattern {
            var items: [LinePattern] = []
            while let next = peek(), next != "|", next != ")" {
                items.append(try parseQuantified())
            }
            switch items.count {
            case 0: return .empty
            case 1: return items[0]
            default: return .concatenation(items)
            }
        }

        mutating func parseQuantified() throws(ParseError) -> LinePattern {
            var atom = try parseAtom()
            while let next = peek() {
                let bounds: (Int, Int?)
                switch next {
                case "*": bounds = (0, nil)
                case "+": bounds = (1, nil)
                case "?": bounds = (0, 1)
                case "{":
                    guard let found = try interval() else { return atom }
                    bounds = (found.min, found.max)
                    position += found.length - 1
                default:
                    return atom
                }
                position += 1
                if peek() == "+" {
                    throw ParseError(
                        reason: "possessive quantifiers (`\(next)+`)", kind: .unsupported)
                }
                if peek() == "?" { position += 1 }  // lazy: the same lines match
                atom = .repetition(atom, min: bounds.0, max: bounds.1)
            }
            return atom
        }

        /// `{n}`, `{n,}`, `{n,m}` or `{,m}` at the current position, with its length; `nil` when the
        /// brace starts no interval (it is then a literal `{`).
        func interval() throws(ParseError) -> (min: Int, max: Int?, length: Int)? {
            var index = position + 1
            func number() -> Int? {
                let start = index
                while index < scalars.count, ("0"..."9").contains(scalars[index]) { index += 1 }
                guard index > start else { return nil }
                var digits = ""
                digits.unicodeScalars.append(contentsOf: scalars[start..<index])
                return Int(digits) ?? Int.max
            }
            let low = number()
            var high = low
            var comma = false
            if index < scalars.count, scalars[index] == "," {
                comma = true
                index += 1
                high = number()
            }
            guard index < scalars.count, scalars[index] == "}", low != nil || high != nil else { return nil }
            let minimum = low ?? 0
            let maximum = comma ? high : low
            if minimum > LinePattern.maxRepeat || (maximum ?? 0) > LinePattern.maxRepeat {
                throw ParseError(reason: "a repeat count is above \(LinePattern.maxRepeat)", kind: .tooLarge)
            }
            if let maximum, maximum < minimum {
                throw ParseError(reason: "the repeat {\(minimum),\(maximum)} has its larger count first")
            }
            return (minimum, maximum, index - position + 1)
        }

        mutating func parseAtom() throws(ParseError) -> LinePattern {
            let scalar = scalars[position]
            position += 1
            switch scalar {
            case "(":
                try groupPrefix()
                let inner = try parseAlternation()
                guard peek() == ")" else { throw ParseError(reason: "a `(` is never closed") }
                position += 1
                return inner
            case "[":
                return .unit(try bracket())
            case ".":
                return .unit(.any)
            case "^":
                return .assertion(.lineStart)
            case "$":
                return .assertion(.lineEnd)
            case "\\":
                return try escape()
            case "*", "+", "?":
                throw ParseError(reason: "`\(scalar)` at offset \(position - 1) has nothing before it to repeat")
            case "{":
                position -= 1
                if (try? interval()) != nil {
                    throw ParseError(reason: "a repeat count at offset \(position) has nothing before it to repeat")
                }
                position += 1
                return .unit(UnitSet(scalar.value))
            default:
                return .unit(UnitSet(scalar.value))
            }
        }

        /// What follows `(`: nothing, `?:`, or a group name; refuses look-around and the rest.
        mutating func groupPrefix() throws(ParseError) {
            guard peek() == "?" else { return }
            if consume("?:") { return }
            if consume("?=") || consume("?!") || consume("?<=") || consume("?<!") {
                throw ParseError(reason: "look-around (`(?=`, `(?!`, `(?<=`, `(?<!`)", kind: .unsupported)
            }
            if consume("?>") { throw ParseError(reason: "atomic groups (`(?>`)", kind: .unsupported) }
            if consume("?<") || consume("?P<") || consume("?'") {
                while let next = peek(), next != ">", next != "'" {
                    guard next.properties.isAlphabetic || next == "_" || next.properties.numericType != nil else {
                        throw ParseError(reason: "a group name holds `\(next)`")
                    }
                    position += 1
                }
                guard !atEnd else { throw ParseError(reason: "a group name is never closed") }
                position += 1
                return
            }
            throw ParseError(reason: "of `(?` groups, only `(?:`, named groups and a leading `(?i)` are read")
        }

        mutating func escape() throws(ParseError) -> LinePattern {
            guard let scalar = peek() else { throw ParseError(reason: "the pattern ends with a lone backslash") }
            position += 1
            switch scalar {
            case "b": return .assertion(.wordBoundary)
            case "B": return .assertion(.notWordBoundary)
            case "A": return .assertion(.lineStart)
            case "z", "Z": return .assertion(.lineEnd)
            default:
                position -= 1
                return .unit(try escapedUnit(inBracket: false))
            }
        }

        /// The set a backslash sequence stands for (the backslash already read).
        mutating func escapedUnit(inBracket: Bool) throws(ParseError) -> UnitSet {
            guard let scalar = peek() else { throw ParseError(reason: "the pattern ends with a lone backslash") }
            position += 1
            switch scalar {
            case "d": return UnitSet(.digit)
            case "D": return UnitSet(.digit, negated: true)
            case "w": return UnitSet(.word)
            case "W": return UnitSet(.word, negated: true)
            case "s": return UnitSet(.space)
            case "S": return UnitSet(.space, negated: true)
            case "t": return UnitSet(0x09)
            case "n": return UnitSet(0x0A)
            case "r": return UnitSet(0x0D)
            case "f": return UnitSet(0x0C)
            case "v": return UnitSet(0x0B)
            case "e": return UnitSet(0x1B)
            case "a": return UnitSet(0x07)
            case "b" where inBracket: return UnitSet(0x08)
            case "0": return UnitSet(0)
            case "x", "u": return UnitSet(try hexadecimal(fixed: scalar == "x" ? 2 : 4))
            case "1"..."9", "k", "g":
                throw ParseError(reason: "back-references (`\\\(scalar)`)", kind: .unsupported)
            case "p", "P":
                throw ParseError(
                    reason: "Unicode property classes (`\\\(scalar){…}`) are not read; use a bracket expression")
            default:
                if scalar.properties.isAlphabetic || scalar.properties.numericType != nil {
                    throw ParseError(reason: "`\\\(scalar)` is not an escape this pattern syntax knows")
                }
                return UnitSet(scalar.value)
            }
        }

        /// `HH` (or `HHHH`) or `{H…}` after `\x` or `\u`.
        mutating func hexadecimal(fixed: Int) throws(ParseError) -> UInt32 {
            var digits = ""
            if peek() == "{" {
                position += 1
                while let next = peek(), next != "}" {
                    digits.unicodeScalars.append(next)
                    position += 1
                }
                guard !atEnd else { throw ParseError(reason: "a `\\x{` or `\\u{` is never closed") }
                position += 1
            } else {
                for _ in 0..<fixed {
                    guard let next = peek() else { break }
                    digits.unicodeScalars.append(next)
                    position += 1
                }
            }
            guard !digits.isEmpty, digits.count <= 8, let value = UInt32(digits, radix: 16),
                Unicode.Scalar(value) != nil
            else { throw ParseError(reason: "`\(digits)` is not the hexadecimal code of a character") }
            return value
        }

        /// A bracket expression after its `[`.
        mutating func bracket() throws(ParseError) -> UnitSet {
            var set = UnitSet(items: [], negated: false)
            if peek() == "^" {
                set.negated = true
                position += 1
            }
            var first = true
            while true {
                guard let scalar = peek() else { throw ParseError(reason: "a `[` is never closed with `]`") }
                if scalar == "]" && !first {
                    position += 1
                    return set
                }
                first = false
                if scalar == "[", peek(1) == ":" {
                    position += 2
                    var name = ""
                    while let next = peek(), next != ":" {
                        name.unicodeScalars.append(next)
                        position += 1
                    }
                    guard consume(":]"), let named = UnitSet.Named(rawValue: name) else {
                        throw ParseError(reason: "`[:\(name):]` is not a character class")
                    }
                    set.items.append(.named(named, negated: false))
                    continue
                }
                if scalar == "[", peek(1) == "=" || peek(1) == "." {
                    throw ParseError(reason: "collating elements (`[=`, `[.`) are not read")
                }
                let low: UInt32
                if scalar == "\\" {
                    position += 1
                    let escaped = try escapedUnit(inBracket: true)
                    guard case .range(let value, let same)? = escaped.items.first, value == same,
                        !escaped.negated, escaped.items.count == 1
                    else {
                        set.items += escaped.negated ? escaped.items.map(\.negatedItem) : escaped.items
                        continue
                    }
                    low = value
                } else {
                    low = scalar.value
                    position += 1
                }
                guard peek() == "-", let after = peek(1), after != "]" else {
                    set.items.append(.range(low, low))
                    continue
                }
                position += 1
                var high = after.value
                position += 1
                if after == "\\" {
                    let escaped = try escapedUnit(inBracket: true)
                    guard case .range(let value, let same)? = escaped.items.first, value == same,
                        escaped.items.count == 1, !escaped.negated
                    else { throw ParseError(reason: "a range in `[…]` ends in a class") }
                    high = value
                }
                guard high >= low else {
                    throw ParseError(reason: "the range in `[…]` ending at U+\(String(high, radix: 16)) runs backwards")
                }
                set.items.append(.range(low, high))
            }
        }
    }
}

/// A set of characters one step of a pattern accepts.
struct UnitSet: Equatable, Sendable {
    /// The classes `[:name:]` names (and `\d`, `\w`, `\s` stand for).
    enum Named: String, Equatable, Sendable {
        case digit, word, space, alpha, alnum, upper, lower, punct, xdigit, cntrl, print, graph, blank
    }

    enum Item: Equatable, Sendable {
        /// Code points from the first to the second, inclusive.
        case range(UInt32, UInt32)
        case named(Named, negated: Bool)

        var negatedItem: Item {
            switch self {
            case .named(let named, let negated): .named(named, negated: !negated)
            case .range: self
            }
        }
    }

    var items: [Item]
    var negated: Bool

    /// Any character (and any byte that is not UTF-8).
    static let any = UnitSet(items: [], negated: true)

    init(items: [Item], negated: Bool) {
        self.items = items
        self.negated = negated
    }

    init(_ value: UInt32) {
        self.init(items: [.range(value, value)], negated: false)
    }

    init(_ named: Named, negated: Bool = false) {
        self.init(items: [.named(named, negated: negated)], negated: false)
    }

    /// Whether the set holds `unit` (a scalar value, or 0x110000 plus a byte that is not UTF-8).
    func contains(_ unit: UInt32, ignoringCase: Bool) -> Bool {
        var found = holds(unit)
        if !found && ignoringCase, let scalar = Unicode.Scalar(unit) {
            for variant in Self.caseVariants(scalar) where holds(variant) {
                found = true
                break
            }
        }
        return found != negated
    }

    private func holds(_ unit: UInt32) -> Bool {
        for item in items {
            switch item {
            case .range(let low, let high):
                if low <= unit && unit <= high { return true }
            case .named(let named, let negated):
                guard let scalar = Unicode.Scalar(unit) else {
                    if negated { return true }
                    continue
                }
                if Self.isMember(scalar, of: named) != negated { return true }
            }
        }
        return false
    }

    /// The other cases of `scalar` that are one scalar each (`k` for `K`, `é` for `É`).
    static func caseVariants(_ scalar: Unicode.Scalar) -> [UInt32] {
        if scalar.isASCII {
            let value = scalar.value
            if (0x41...0x5A).contains(value) { return [value | 0x20] }
            if (0x61...0x7A).contains(value) { return [value & ~0x20] }
            return []
        }
        var variants: [UInt32] = []
        for mapping in [scalar.properties.lowercaseMapping, scalar.properties.uppercaseMapping] {
            let mapped = mapping.unicodeScalars
            if mapped.count == 1, let only = mapped.first, only != scalar { variants.append(only.value) }
        }
        return variants
    }

    static func isWord(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.isASCII {
            let value = scalar.value
            return (0x30...0x39).contains(value) || (0x41...0x5A).contains(value) || (0x61...0x7A).contains(value)
                || value == 0x5F
        }
        let properties = scalar.properties
        switch properties.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark, .connectorPunctuation, .decimalNumber:
            return true
        default:
            return properties.isAlphabetic
        }
    }

    static func isMember(_ scalar: Unicode.Scalar, of named: Named) -> Bool {
        let properties = scalar.properties
        switch named {
        case .digit: return properties.numericType == .decimal
        case .word: return isWord(scalar)
        case .space: return properties.isWhitespace
        case .alpha: return properties.isAlphabetic
        case .alnum: return properties.isAlphabetic || properties.numericType == .decimal
        case .upper: return properties.isUppercase
        case .lower: return properties.isLowercase
        case .xdigit: return scalar.isASCII && properties.isASCIIHexDigit
        case .cntrl: return properties.generalCategory == .control
        case .blank: return scalar == " " || scalar == "\t" || properties.generalCategory == .spaceSeparator
        case .print: return !isMember(scalar, of: .cntrl) && properties.generalCategory != .unassigned
        case .graph: return isMember(scalar, of: .print) && !properties.isWhitespace
        case .punct:
            if scalar.isASCII { return isMember(scalar, of: .graph) && !isWord(scalar) || scalar == "_" }
            switch properties.generalCategory {
            case .connectorPunctuation, .dashPunctuation, .openPunctuation, .closePunctuation,
                .initialPunctuation, .finalPunctuation, .otherPunctuation, .mathSymbol, .currencySymbol,
                .modifierSymbol, .otherSymbol:
                return true
            default:
                return false
            }
        }
    }
}
