import Foundation
import ValueFormats

/// Reads and writes durations as people type them on a command line: `250ms`, `5s`, `1.5s`,
/// `10m`, `2h`, `7d`, `1w`; a bare number is seconds.
public enum DurationText {
    public static func parse(_ text: String) -> Duration? {
        let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
        guard !trimmed.isEmpty else { return nil }
        let units: [(String, Double)] = [
            ("ms", 0.001), ("s", 1), ("sec", 1), ("m", 60), ("min", 60), ("h", 3600), ("d", 86_400), ("w", 604_800),
        ]
        var number = Substring(trimmed)
        var scale = 1.0
        // Longest suffix first so "ms" is not read as "m" + "s".
        for (suffix, value) in units.sorted(by: { $0.0.count > $1.0.count }) where trimmed.hasSuffix(suffix) {
            number = trimmed.dropLast(suffix.count)
            scale = value
            break
        }
        guard let value = Double(number), value.isFinite, value >= 0 else { return nil }
        let milliseconds = (value * scale * 1000).rounded()
        guard milliseconds < 1e15 else { return nil }
        return .milliseconds(Int64(milliseconds))
    }

    /// How to write a duration, for the message about one that could not be read.
    public static let syntax =
        "a duration is a number of 0 or more and a unit, as 250ms, 5s, 1.5s, 10m, 2h or 7d (no unit means seconds)"

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
