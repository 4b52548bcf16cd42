import Foundation

/// Reads and writes durations as people type them on a command line: `250ms`, `5s`, `1.5s`,
/// `10m`, `2h`, `7d`, `1w`, and compounds of them as Go and systemd write them (`1m30s`, `1h30m`,
/// `2d12h`); a bare number is seconds.
public enum DurationText {
    /// The units a duration's parts may take, in seconds.
    private static let units: [String: Double] = [
        "ms": 0.001, "s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600, "d": 86_400, "w": 604_800,
    ]

    /// The duration `text` says, or `nil` when it is no duration (negative, no number, an unknown unit).
    public static func parse(_ text: String) -> Duration? {
        let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
        guard !trimmed.isEmpty else { return nil }
        var seconds = 0.0
        if let bare = Double(trimmed) {
            seconds = bare
        } else {
            // Parts of a number and a unit each, as `1h30m`; every part needs its unit.
            var rest = Substring(trimmed)
            while !rest.isEmpty {
                var number = rest.prefix { ("0"..."9").contains($0) || $0 == "." }
                // An exponent (`1e11s`), as a bare number may have: no unit starts with `e`.
                let afterMantissa = rest.dropFirst(number.count)
                if afterMantissa.first == "e" {
                    let signed = afterMantissa.dropFirst().first.map { $0 == "+" || $0 == "-" } ?? false
                    let digits = afterMantissa.dropFirst(signed ? 2 : 1).prefix { ("0"..."9").contains($0) }
                    if !digits.isEmpty { number = rest.prefix(number.count + 1 + (signed ? 1 : 0) + digits.count) }
                }
                rest = rest.dropFirst(number.count)
                let unit = rest.prefix { $0.isLetter }
                rest = rest.dropFirst(unit.count)
                guard let value = Double(number), let scale = units[String(unit)] else { return nil }
                seconds += value * scale
            }
        }
        guard seconds.isFinite, seconds >= 0 else { return nil }
        let milliseconds = (seconds * 1000).rounded()
        guard milliseconds < 1e15 else { return nil }
        return .milliseconds(Int64(milliseconds))
    }

    /// How to write a duration, for the message about one that could not be read.
    public static let syntax =
        "a duration is a number of 0 or more and a unit, as 250ms, 5s, 1.5s, 10m, 1m30s, 2h or 7d "
        + "(no unit means seconds)"

    /// `250ms`, `5s`, `1.5s`, `10m`, `2h`.
    public static func format(_ duration: Duration) -> String {
        let milliseconds = duration.wholeMilliseconds
        if milliseconds < 1000 { return "\(milliseconds)ms" }
        if milliseconds % 3_600_000 == 0 { return "\(milliseconds / 3_600_000)h" }
        if milliseconds % 60_000 == 0 && milliseconds >= 60_000 { return "\(milliseconds / 60_000)m" }
        if milliseconds % 1000 == 0 { return "\(milliseconds / 1000)s" }
        return "\(Double(milliseconds) / 1000)s"
    }
}
