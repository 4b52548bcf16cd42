/// RFC 3339 UTC timestamps with nanosecond precision (`2026-11-21T19:22:00.123456789Z`), the form
/// of the flat span format: nine fractional digits keep OTLP's nanosecond times exact.
public enum RFC3339Nanoseconds {
    /// The timestamp for nanoseconds since the Unix epoch.
    public static func format(_ nanoseconds: UInt64) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(30)
        bytes.appendRFC3339(nanoseconds)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Nanoseconds since the epoch for an RFC 3339 timestamp with `Z` or a numeric offset and up to
    /// nine fractional digits (more are rejected rather than rounded); `nil` for anything else, a
    /// time before 1970 or one after 2554-07-21T23:34:33.709551615Z (the last that UInt64 nanoseconds hold).
    public static func parse(_ text: String) -> UInt64? {
        let bytes = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int? {
            guard range.upperBound <= bytes.count else { return nil }
            var value = 0
            for index in range {
                guard bytes[index] >= 48, bytes[index] <= 57 else { return nil }
                value = value * 10 + Int(bytes[index] - 48)
            }
            return value
        }
        guard bytes.count >= 20, let year = number(0..<4), bytes[4] == UInt8(ascii: "-"), let month = number(5..<7),
            bytes[7] == UInt8(ascii: "-"), let day = number(8..<10),
            bytes[10] == UInt8(ascii: "T") || bytes[10] == UInt8(ascii: "t"), let hour = number(11..<13),
            bytes[13] == UInt8(ascii: ":"), let minute = number(14..<16), bytes[16] == UInt8(ascii: ":"),
            let second = number(17..<19), (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60,
            second < 61
        else { return nil }
        var index = 19
        var fraction: Int64 = 0
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            var digits = 0
            while index < bytes.count, bytes[index] >= 48, bytes[index] <= 57 {
                guard digits < 9 else { return nil }
                fraction = fraction * 10 + Int64(bytes[index] - 48)
                digits += 1
                index += 1
            }
            guard digits > 0 else { return nil }
            for _ in digits..<9 { fraction *= 10 }
        }
        guard index < bytes.count else { return nil }
        var offsetSeconds: Int64 = 0
        switch bytes[index] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            index += 1
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            guard let offsetHours = number((index + 1)..<(index + 3)), index + 5 < bytes.count,
                bytes[index + 3] == UInt8(ascii: ":"), let offsetMinutes = number((index + 4)..<(index + 6))
            else { return nil }
            offsetSeconds =
                Int64(offsetHours * 3600 + offsetMinutes * 60) * (bytes[index] == UInt8(ascii: "-") ? -1 : 1)
            index += 6
        default:
            return nil
        }
        guard index == bytes.count else { return nil }
        let days = daysSinceEpoch(year: Int64(year), month: Int64(month), day: Int64(day))
        let seconds = days * 86_400 + Int64(hour * 3600 + minute * 60 + second) - offsetSeconds
        guard seconds >= 0 else { return nil }
        // 64 bits of nanoseconds end in 2554: a later time (RFC 3339 goes to 9999) is no time here,
        // not a trap.
        let (whole, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
        let (total, carry) = whole.addingReportingOverflow(UInt64(fraction))
        guard !overflow, !carry else { return nil }
        return total
    }

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
}

extension Array where Element == UInt8 {
    /// Appends `"YYYY-MM-DDThh:mm:ss.nnnnnnnnnZ"` (quotes included when `quoted`).
    mutating func appendRFC3339(_ nanoseconds: UInt64, quoted: Bool = false) {
        let seconds = Int64(nanoseconds / 1_000_000_000)
        let fraction = nanoseconds % 1_000_000_000
        let (year, month, day) = RFC3339Nanoseconds.civil(fromDays: seconds / 86_400)
        let secondOfDay = seconds % 86_400
        if quoted { append(UInt8(ascii: "\"")) }
        appendPadded(UInt64(year), width: 4)
        append(UInt8(ascii: "-"))
        appendPadded(UInt64(month), width: 2)
        append(UInt8(ascii: "-"))
        appendPadded(UInt64(day), width: 2)
        append(UInt8(ascii: "T"))
        appendPadded(UInt64(secondOfDay / 3600), width: 2)
        append(UInt8(ascii: ":"))
        appendPadded(UInt64(secondOfDay / 60 % 60), width: 2)
        append(UInt8(ascii: ":"))
        appendPadded(UInt64(secondOfDay % 60), width: 2)
        append(UInt8(ascii: "."))
        appendPadded(fraction, width: 9)
        append(UInt8(ascii: "Z"))
        if quoted { append(UInt8(ascii: "\"")) }
    }

    private mutating func appendPadded(_ value: UInt64, width: Int) {
        var divisor: UInt64 = 1
        for _ in 1..<width { divisor *= 10 }
        var rest = value
        while divisor > 0 {
            append(UInt8(truncatingIfNeeded: rest / divisor % 10) &+ 48)
            rest %= divisor
            divisor /= 10
        }
    }
}
