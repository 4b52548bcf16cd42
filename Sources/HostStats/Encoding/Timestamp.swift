import Foundation

/// RFC 3339 UTC timestamps with millisecond precision, the form every hostscope output uses.
public enum Timestamp {
    /// `2026-11-21T19:22:00.123Z`.
    public static func format(_ date: Date) -> String {
        // Cut to the millisecond, but a time within 50 µs below one counts as that one: a stamp read
        // back as 0.002 s is 1.9999999999999998 ms in binary (and near year 9999 a Double is off by
        // up to 15 µs), which a plain cut would print as .001.
        let milliseconds = (date.timeIntervalSince1970 * 1000 + 0.05).rounded(.down)
        var seconds = time_t(floor(milliseconds / 1000))
        let millis = Int(milliseconds - Double(seconds) * 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1,
            Int(parts.tm_mday), Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec), millis)
    }

    /// Reads an RFC 3339 timestamp with or without fractional seconds and with `Z` or a numeric
    /// offset. Returns `nil` for anything else.
    public static func parse(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int? {
            guard range.upperBound <= bytes.count else { return nil }
            var value = 0
            for index in range {
                let byte = bytes[index]
                guard byte >= 48, byte <= 57 else { return nil }
                value = value * 10 + Int(byte - 48)
            }
            return value
        }
        guard bytes.count >= 20, let year = number(0..<4), bytes[4] == 45, let month = number(5..<7), bytes[7] == 45,
            let day = number(8..<10), bytes[10] == 84 || bytes[10] == 116 || bytes[10] == 32,
            let hour = number(11..<13), bytes[13] == 58, let minute = number(14..<16), bytes[16] == 58,
            let second = number(17..<19)
        else { return nil }
        var index = 19
        var fraction = 0.0
        if index < bytes.count, bytes[index] == 46 {
            index += 1
            var scale = 0.1
            let start = index
            while index < bytes.count, bytes[index] >= 48, bytes[index] <= 57 {
                fraction += Double(bytes[index] - 48) * scale
                scale /= 10
                index += 1
            }
            if index == start { return nil }
        }
        var offsetSeconds = 0
        guard index < bytes.count else { return nil }
        switch bytes[index] {
        case 90, 122: index += 1
        case 43, 45:
            guard let offsetHours = number((index + 1)..<(index + 3)), bytes.count > index + 5, bytes[index + 3] == 58,
                let offsetMinutes = number((index + 4)..<(index + 6))
            else { return nil }
            offsetSeconds = (offsetHours * 3600 + offsetMinutes * 60) * (bytes[index] == 45 ? -1 : 1)
            index += 6
        default: return nil
        }
        guard index == bytes.count, (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60,
            second < 61
        else { return nil }
        var parts = tm()
        parts.tm_year = Int32(year - 1900)
        parts.tm_mon = Int32(month - 1)
        parts.tm_mday = Int32(day)
        parts.tm_hour = Int32(hour)
        parts.tm_min = Int32(minute)
        parts.tm_sec = Int32(second)
        let epoch = timegm(&parts)
        return Date(timeIntervalSince1970: Double(epoch - offsetSeconds) + fraction)
    }
}
