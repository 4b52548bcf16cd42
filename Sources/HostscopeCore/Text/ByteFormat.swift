import Foundation

/// Human-readable figures for the terminal table.
public enum ByteFormat {
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
}
