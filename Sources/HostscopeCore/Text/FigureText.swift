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
