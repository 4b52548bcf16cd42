public import Foundation

/// RFC 3339 UTC timestamps, the one form of time in every hostscope output: records
/// (`2026-11-21T19:22:00.123Z`), file listings (whole seconds) and spans (nine fractional digits, so
/// that OTLP's nanosecond times stay exact).
///
/// Dates are computed with H. Hinnant's civil-from-days algorithms: no formatter, no time zone
/// database, the same text on every machine.
public enum RFC3339 {
    /// How many fractional digits a timestamp carries.
    public enum Precision: Sendable {
        /// `2026-11-21T19:22:00Z`
        case seconds
        /// `2026-11-21T19:22:00.123Z`
        case milliseconds
        /// `2026-11-21T19:22:00.123456789Z`
        case nanoseconds

        var digits: Int {
            switch self {
            case .seconds: 0
            case .milliseconds: 3
            case .nanoseconds: 9
            }
        }
    }

    /// The first and last second RFC 3339's four-digit years hold: 0000-01-01T00:00:00Z and
    /// 9999-12-31T23:59:59Z.
    static let representable: ClosedRange<Double> = -62_167_219_200...253_402_300_799

    /// `date` in UTC, its fraction cut (not rounded) to `precision`. A date outside the years 0000 to 9999 (a
    /// host's clock or boot time can say anything) is written as the nearest of them, NaN as the epoch.
    public static func format(_ date: Date, precision: Precision = .milliseconds) -> String {
        let given = date.timeIntervalSince1970
        let interval =
            given.isNaN ? 0 : min(max(given, representable.lowerBound), representable.upperBound + 0.999)
        let seconds = Int64(clamping: interval, rounding: .down)
        let fraction: Int64
        switch precision {
        case .seconds: fraction = 0
        case .milliseconds:
            // From the millisecond count, as the stored `collected_at` columns are. Cut to the
            // millisecond, but a time within 50 µs below one counts as that one: a stamp read back as
            // 0.002 s is 1.9999999999999998 ms in binary (and near year 9999 a Double is off by up to
            // 15 µs), which a plain cut would print as .001.
            let milliseconds = Int64(clamping: interval * 1000 + 0.05, rounding: .down)
            return format(
                seconds: floorDivide(milliseconds, 1000), nanoseconds: floorModulo(milliseconds, 1000) * 1_000_000,
                digits: 3)
        case .nanoseconds: fraction = max(0, Int64(clamping: (interval - Double(seconds)) * 1e9, rounding: .down))
        }
        return format(seconds: seconds, nanoseconds: min(fraction, 999_999_999), digits: precision.digits)
    }

    /// Whole seconds since the Unix epoch: `2024-05-06T07:08:09Z`.
    public static func format(secondsSince1970 seconds: Int64) -> String {
        format(seconds: seconds, nanoseconds: 0, digits: 0)
    }

    /// Nanoseconds since the Unix epoch, by default with nine fractional digits (the flat span format).
    public static func format(nanosecondsSince1970 nanoseconds: UInt64, precision: Precision = .nanoseconds) -> String {
        format(
            seconds: Int64(nanoseconds / 1_000_000_000), nanoseconds: Int64(nanoseconds % 1_000_000_000),
            digits: precision.digits)
    }

    private static func format(seconds: Int64, nanoseconds: Int64, digits: Int) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(32)
        append(seconds: seconds, nanoseconds: UInt64(nanoseconds), digits: digits, quoted: false, into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends `"YYYY-MM-DDThh:mm:ss.nnnnnnnnnZ"` for nanoseconds since the epoch (quotes included
    /// when `quoted`): the encoders' path, without an intermediate string.
    @inlinable
    public static func append(nanosecondsSince1970 nanoseconds: UInt64, quoted: Bool = false, into bytes: inout [UInt8])
    {
        append(
            seconds: Int64(nanoseconds / 1_000_000_000), nanoseconds: nanoseconds % 1_000_000_000, digits: 9,
            quoted: quoted, into: &bytes)
    }

    @inlinable
    static func append(
        seconds: Int64, nanoseconds: UInt64, digits: Int, quoted: Bool, into bytes: inout [UInt8]
    ) {
        let days = floorDivide(seconds, 86_400)
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = civil(fromDays: days)
        if quoted { bytes.append(UInt8(ascii: "\"")) }
        appendPadded(UInt64(max(0, year)), width: 4, into: &bytes)
        bytes.append(UInt8(ascii: "-"))
        appendPadded(UInt64(month), width: 2, into: &bytes)
        bytes.append(UInt8(ascii: "-"))
        appendPadded(UInt64(day), width: 2, into: &bytes)
        bytes.append(UInt8(ascii: "T"))
        appendPadded(UInt64(secondOfDay / 3600), width: 2, into: &bytes)
        bytes.append(UInt8(ascii: ":"))
        appendPadded(UInt64(secondOfDay / 60 % 60), width: 2, into: &bytes)
        bytes.append(UInt8(ascii: ":"))
        appendPadded(UInt64(secondOfDay % 60), width: 2, into: &bytes)
        if digits > 0 {
            bytes.append(UInt8(ascii: "."))
            var fraction = nanoseconds
            for _ in digits..<9 { fraction /= 10 }
            appendPadded(fraction, width: digits, into: &bytes)
        }
        bytes.append(UInt8(ascii: "Z"))
        if quoted { bytes.append(UInt8(ascii: "\"")) }
    }

    @inlinable
    static func appendPadded(_ value: UInt64, width: Int, into bytes: inout [UInt8]) {
        var divisor: UInt64 = 1
        for _ in 1..<width { divisor *= 10 }
        var rest = value
        while divisor > 0 {
            bytes.append(UInt8(truncatingIfNeeded: rest / divisor % 10) &+ 48)
            rest %= divisor
            divisor /= 10
        }
    }

    // MARK: - Reading

    /// Reads a timestamp with or without fractional seconds, `T`, `t` or a space between date and
    /// time, and `Z` or a numeric offset; `nil` for anything else.
    public static func parse(_ text: String) -> Date? {
        guard let parsed = components(text, allowSpace: true, maximumDigits: .max) else { return nil }
        return Date(timeIntervalSince1970: Double(parsed.seconds) + Double(parsed.nanoseconds) / 1e9)
    }

    /// Nanoseconds since the epoch for a timestamp with `T`, `Z` or a numeric offset and up to nine
    /// fractional digits (more are refused rather than rounded); `nil` for anything else, a time
    /// before 1970, or one after 2554-07-21T23:34:33.709551615Z (the last that UInt64 nanoseconds hold).
    public static func parseNanoseconds(_ text: String) -> UInt64? {
        guard let parsed = components(text, allowSpace: false, maximumDigits: 9), parsed.seconds >= 0 else {
            return nil
        }
        // RFC 3339 goes to 9999: a later time than 64 bits of nanoseconds hold is no time here, not a trap.
        let (whole, overflow) = UInt64(parsed.seconds).multipliedReportingOverflow(by: 1_000_000_000)
        let (total, carry) = whole.addingReportingOverflow(UInt64(parsed.nanoseconds))
        guard !overflow, !carry else { return nil }
        return total
    }

    /// Seconds since the epoch and the fraction's first nine digits as nanoseconds.
    private static func components(
        _ text: String, allowSpace: Bool, maximumDigits: Int
    ) -> (seconds: Int64, nanoseconds: Int64)? {
        let bytes = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int64? {
            guard range.upperBound <= bytes.count else { return nil }
            var value: Int64 = 0
            for index in range {
                guard bytes[index] >= 48, bytes[index] <= 57 else { return nil }
                value = value * 10 + Int64(bytes[index] - 48)
            }
            return value
        }
        let separators: [UInt8] = allowSpace ? [84, 116, 32] : [84, 116]
        guard bytes.count >= 20, let year = number(0..<4), bytes[4] == UInt8(ascii: "-"), let month = number(5..<7),
            bytes[7] == UInt8(ascii: "-"), let day = number(8..<10), separators.contains(bytes[10]),
            let hour = number(11..<13), bytes[13] == UInt8(ascii: ":"), let minute = number(14..<16),
            bytes[16] == UInt8(ascii: ":"), let second = number(17..<19), (1...12).contains(month),
            (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var index = 19
        var fraction: Int64 = 0
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            var digits = 0
            while index < bytes.count, bytes[index] >= 48, bytes[index] <= 57 {
                guard digits < maximumDigits else { return nil }
                if digits < 9 { fraction = fraction * 10 + Int64(bytes[index] - 48) }
                digits += 1
                index += 1
            }
            guard digits > 0 else { return nil }
            for _ in min(digits, 9)..<9 { fraction *= 10 }
        }
        guard index < bytes.count else { return nil }
        var offset: Int64 = 0
        switch bytes[index] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            index += 1
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            guard let offsetHours = number((index + 1)..<(index + 3)), index + 5 < bytes.count,
                bytes[index + 3] == UInt8(ascii: ":"), let offsetMinutes = number((index + 4)..<(index + 6))
            else { return nil }
            offset = (offsetHours * 3600 + offsetMinutes * 60) * (bytes[index] == UInt8(ascii: "-") ? -1 : 1)
            index += 6
        default:
            return nil
        }
        guard index == bytes.count else { return nil }
        let days = daysSinceEpoch(year: year, month: month, day: day)
        return (days * 86_400 + hour * 3600 + minute * 60 + second - offset, fraction)
    }

    // MARK: - Calendar

    /// Days from 1970-01-01 to a proleptic Gregorian date (H. Hinnant's `days_from_civil`).
    static func daysSinceEpoch(year: Int64, month: Int64, day: Int64) -> Int64 {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The date of a day count since 1970-01-01 (H. Hinnant's `civil_from_days`).
    @inlinable
    static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    @inlinable
    static func floorDivide(_ value: Int64, _ divisor: Int64) -> Int64 {
        let quotient = value / divisor
        return value % divisor != 0 && (value < 0) != (divisor < 0) ? quotient - 1 : quotient
    }

    static func floorModulo(_ value: Int64, _ divisor: Int64) -> Int64 {
        value - floorDivide(value, divisor) * divisor
    }
}
