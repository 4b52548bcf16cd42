extension FixedWidthInteger {
    /// `value` rounded by `rule` and held within the type's range, for a number that came from outside (a
    /// header, a query parameter, an option, a file): `Int64(value)` traps on one past the range, on an
    /// infinity and on NaN, and one request or line must never end the process. NaN is zero.
    public init(clamping value: Double, rounding rule: FloatingPointRoundingRule = .towardZero) {
        guard !value.isNaN else {
            self = 0
            return
        }
        let rounded = value.rounded(rule)
        // `Double(Self.max)` rounds up to the next power of two, which is past the range: `>=` keeps
        // that one out too.
        if rounded <= Double(Self.min) {
            self = .min
        } else if rounded >= Double(Self.max) {
            self = .max
        } else {
            self = Self(rounded)
        }
    }
}
