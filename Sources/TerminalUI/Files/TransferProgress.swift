import Foundation
import HostscopeCore
import ValueFormats

/// The text of a transfer's progress line (``line(name:done:total:transferred:elapsed:width:)``),
/// kept apart from the terminal that shows it.
public enum TransferProgress {
    /// `syslog  45%  86.0 MiB of 190.7 MiB  120.3 MiB/s  0:01 left`, fitted to `width` columns by
    /// shortening the name from its start (the end of a name tells files apart).
    public static func line(
        name: String, done: UInt64, total: UInt64, transferred: UInt64, elapsed: Duration, width: Int
    ) -> String {
        let percent = total == 0 ? 100 : Int(Double(min(done, total)) / Double(total) * 100)
        let seconds = elapsed.inSeconds
        var figures = "  \(percent)%  \(FigureText.bytes(done)) of \(FigureText.bytes(total))"
        if seconds >= 0.2, transferred > 0 {
            let rate = Double(transferred) / seconds
            figures += "  " + FigureText.rate(rate)
            if done < total {
                let left = Int((Double(total - done) / rate).rounded(.up))
                figures += "  " + clock(left) + " left"
            }
        }
        let room = max(8, width - 1 - figures.count)
        return TerminalText.truncateStart(name, to: room) + figures
    }

    /// `m:ss`, or `h:mm:ss` from an hour on.
    public static func clock(_ seconds: Int) -> String {
        let hours = seconds / 3600
        let minutes = (seconds % 3600) / 60
        let rest = seconds % 60
        let padded = { (value: Int) in value < 10 ? "0\(value)" : "\(value)" }
        return hours > 0 ? "\(hours):\(padded(minutes)):\(padded(rest))" : "\(minutes):\(padded(rest))"
    }
}
