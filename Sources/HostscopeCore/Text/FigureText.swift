import Foundation
import ValueFormats

/// Figures as people read them: sizes, rates, shares, durations, costs. One form for every text hostscope
/// shows, in a terminal table or in a host tool's answer to a model.
public enum FigureText {
    /// `1.2 GiB`, `512 B`: binary units, one decimal from KiB on.
    public static func bytes(_ value: UInt64?) -> String {
        guard let value else { return "-" }
        return bytes(Double(value))
    }

    public static func bytes(_ value: Double) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"]
        var scaled = value
        var unit = 0
        while scaled >= 1024 && unit < units.count - 1 {
            scaled /= 1024
            unit += 1
        }
        return unit == 0 ? "\(Int(scaled)) B" : String(format: "%.1f %@", scaled, units[unit])
    }

    /// A size as `ls -h` and `df -h` print it: powers of 1024 with one letter (`K M G T P E`), one decimal
    /// below 10 and none from there, always rounded up (so a size is never shown smaller than it is:
    /// 1025 bytes is `1.1K`, 10241 is `11K`), and plain bytes below 1024 (`1023`).
    public static func humanSize(_ value: UInt64) -> String {
        guard value >= 1024 else { return String(value) }
        let letters: [Character] = ["K", "M", "G", "T", "P", "E"]
        var exponent = 0
        var divisor: UInt64 = 1024
        // The largest unit at which the value is at least 1.
        while exponent < letters.count - 1, value / divisor >= 1024 {
            divisor *= 1024
            exponent += 1
        }
        while true {
            let whole = value / divisor
            let rest = value % divisor
            if whole < 10 {
                // Tenths, rounded up: (rest × 10) fits in 64 bits, since divisor ≤ 1024⁶.
                let tenths = whole * 10 + (rest * 10 + divisor - 1) / divisor
                if tenths < 100 { return "\(tenths / 10).\(tenths % 10)\(letters[exponent])" }
                return "10\(letters[exponent])"
            }
            let rounded = whole + (rest > 0 ? 1 : 0)
            if rounded < 1024 || exponent == letters.count - 1 { return "\(rounded)\(letters[exponent])" }
            // 1023.9K rounds up to 1024K, which ls shows as 1.0M.
            divisor *= 1024
            exponent += 1
        }
    }

    /// A rate in the form of ``humanSize(_:)`` per second (`148K/s`, `512B/s`), or `-` when unknown.
    public static func humanRate(_ value: Double?) -> String {
        guard let value, value.isFinite, value >= 0 else { return "-" }
        let bytes = value >= 1.8e19 ? UInt64.max : UInt64(value.rounded(.up))
        return humanSize(bytes) + (bytes < 1024 ? "B/s" : "/s")
    }

    /// A rate such as `12.0 KiB/s`, or `-` when unknown.
    public static func rate(_ value: Double?) -> String {
        guard let value else { return "-" }
        return bytes(value) + "/s"
    }

    /// `12.5%`, or `-` when unknown.
    public static func percent(_ value: Double?) -> String {
        guard let value else { return "-" }
        return String(format: "%.1f%%", value)
    }

    /// `3d 4h`, `5h 12m`, `42m`, `17s`.
    public static func uptime(_ seconds: Double?) -> String {
        guard let seconds else { return "-" }
        let total = Int(seconds)
        let days = total / 86_400
        let hours = (total % 86_400) / 3600
        let minutes = (total % 3600) / 60
        if days > 0 { return "\(days)d \(hours)h" }
        if hours > 0 { return "\(hours)h \(minutes)m" }
        if minutes > 0 { return "\(minutes)m" }
        return "\(total)s"
    }

    /// `$0.0041`: four significant decimals for cents and below, two above a dollar.
    public static func cost(_ dollars: Double) -> String {
        dollars >= 1 ? String(format: "$%.2f", dollars) : String(format: "$%.4f", dollars)
    }

    /// `12 ms`, `1.2 s`.
    public static func milliseconds(_ milliseconds: Double) -> String {
        milliseconds < 1000 ? "\(Int(milliseconds.rounded())) ms" : String(format: "%.1f s", milliseconds / 1000)
    }

    /// `3.4 s`.
    public static func seconds(_ duration: Duration) -> String {
        String(format: "%.1f s", duration.inSeconds)
    }
}
