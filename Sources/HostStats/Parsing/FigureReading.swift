/// A figure read from a host's text: its value, or a number that hostscope cannot hold.
///
/// A host may print a size of `99999999999999999999999`, `1e400`, `inf` or `nan` (a broken tool,
/// a corrupted file, a hostile server). Converting such a number to `UInt64` would stop the
/// process, and with it a `watch` of the whole fleet; so parsers read figures through
/// ``TextScanning/readSize(_:unit:)`` and ``TextScanning/readCounter(_:)``, and turn
/// `.outOfRange` into a `null` figure and a warning (``TextScanning/outOfRangeWarning(_:_:)``),
/// as the snapshot JSON contract has unknown figures `null`.
public enum FigureReading: Sendable, Equatable {
    case value(UInt64)
    /// A number, but negative infinity to NaN to beyond `UInt64.max`: not representable.
    case outOfRange

    /// The value, or `nil` when out of range.
    public var value: UInt64? {
        if case .value(let value) = self { return value }
        return nil
    }
}

extension TextScanning {
    /// `value` rounded to a whole number, or `nil` when it is NaN, infinite, negative or at least
    /// 2^64: the conversion `UInt64(value)` would trap on those.
    public static func wholeNumber(_ value: Double) -> UInt64? {
        // 2^64 is exactly representable; every double below it rounds to at most UInt64.max.
        guard value.isFinite, value >= 0, value < 18_446_744_073_709_551_616.0 else { return nil }
        let rounded = value.rounded()
        return rounded < 18_446_744_073_709_551_616.0 ? UInt64(rounded) : nil
    }

    /// A size with an optional binary suffix, in bytes (as ``scaledSize(_:unit:)`` reads it), or
    /// `.outOfRange` when it is a number too large (or not finite) for a byte count; `nil` when
    /// the token is no size at all.
    public static func readSize(_ token: Substring, unit: UInt64 = 1) -> FigureReading? {
        var text = token
        while let last = text.last, last == "+" || last == "-" || last == "*" { text = text.dropLast() }
        if text.hasSuffix("i") { text = text.dropLast() }  // Gi, Mi
        if text.count >= 2, text.last == "B", let previous = text.dropLast().last, previous.isLetter {
            text = text.dropLast()  // KB, MB; a bare "0B" keeps its B and means bytes
        }
        guard let last = text.last else { return nil }
        let multiplier: UInt64
        switch last {
        case "B", "b": multiplier = 1
        case "K", "k": multiplier = 1 << 10
        case "M", "m": multiplier = 1 << 20
        case "G", "g": multiplier = 1 << 30
        case "T", "t": multiplier = 1 << 40
        case "P", "p": multiplier = 1 << 50
        case "E", "e": multiplier = 1 << 60
        default:
            // Plain digits are exact however many there are (a Double keeps only 53 bits).
            if let plain = UInt64(text) {
                let (bytes, overflow) = plain.multipliedReportingOverflow(by: unit)
                return overflow ? .outOfRange : .value(bytes)
            }
            guard let value = localizedDouble(text), !(value < 0) else { return nil }
            return wholeNumber(value * Double(unit)).map(FigureReading.value) ?? .outOfRange
        }
        guard let value = localizedDouble(text.dropLast()), !(value < 0) else { return nil }
        return wholeNumber(value * Double(multiplier)).map(FigureReading.value) ?? .outOfRange
    }

    /// A counter of plain ASCII digits, or `.outOfRange` for digits beyond `UInt64.max`; `nil`
    /// for anything else.
    public static func readCounter(_ token: Substring) -> FigureReading? {
        if let value = counter(token) { return .value(value) }
        return !token.isEmpty && token.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) ? .outOfRange : nil
    }

    /// The warning for a figure left out because it is out of range: what it is, and as printed.
    public static func outOfRangeWarning(_ what: String, _ token: some StringProtocol) -> String {
        let shown = token.count > 40 ? String(token.prefix(40)) + "…" : String(token)
        return "\(what) `\(shown)` is out of range: left out (null)"
    }
}

extension UInt64 {
    /// The sum of `values`, or `nil` when it does not fit (figures from a host may be anything).
    static func checkedSum(_ values: UInt64...) -> UInt64? {
        var total: UInt64 = 0
        for value in values {
            let (sum, overflow) = total.addingReportingOverflow(value)
            if overflow { return nil }
            total = sum
        }
        return total
    }

    /// `self × factor`, or `nil` when it does not fit.
    func checkedMultiplied(by factor: UInt64) -> UInt64? {
        let (product, overflow) = multipliedReportingOverflow(by: factor)
        return overflow ? nil : product
    }
}
