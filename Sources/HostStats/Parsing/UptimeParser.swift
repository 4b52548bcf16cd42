import Foundation

/// Reads `uptime` output (procps, BusyBox, SUSE, SunOS, macOS; decimal-comma locales) into
/// seconds up and load averages.
///
/// The duration between `up` and the user count is a comma-separated list of `N days`,
/// `N day(s)`, `H:MM`, `N min`, `N mins`, `N hrs`, `N secs` parts, sometimes without the comma
/// (SUSE `up 3 days  2:14`). Its precision is a minute. Load figures are the first three numbers
/// after the last `:`; under de/fr locales they read `1,20, 0,42, 0,16`, so a trailing comma is
/// a separator and an inner comma a decimal mark.
public enum UptimeParser {
    static let source = "uptime"

    /// What one `uptime` line tells.
    public struct Uptime: Sendable, Equatable {
        public var seconds: Double?
        public var load: LoadAverage?
    }

    public static func parse(_ text: String) throws(ParseError) -> Uptime {
        guard let line = TextScanning.lines(text).first(where: { $0.contains(" up ") || $0.contains("load average") })
        else {
            throw .unexpected(source: source, "no ` up … load average` line", expected: "`uptime`", text: text)
        }
        let result = Uptime(seconds: duration(line), load: load(line))
        guard result.seconds != nil || result.load != nil else {
            throw ParseError(
                source: source, message: "neither a duration nor load averages in `\(line.trimmingBlanks())`")
        }
        return result
    }

    /// The three load figures after the last colon of `line`.
    static func load(_ line: Substring) -> LoadAverage? {
        guard let colon = line.lastIndex(of: ":") else { return nil }
        var numbers: [Double] = []
        for token in TextScanning.fields(line[line.index(after: colon)...]) {
            var value = token
            if value.last == "," { value = value.dropLast() }
            guard let number = TextScanning.localizedDouble(value) else { break }
            numbers.append(number)
            if numbers.count == 3 { break }
        }
        guard numbers.count == 3 else { return nil }
        return LoadAverage(one: numbers[0], five: numbers[1], fifteen: numbers[2])
    }

    /// Seconds from the ` up …` part of `line`.
    static func duration(_ line: Substring) -> Double? {
        guard let up = line.range(of: " up ") else { return nil }
        var seconds = 0.0
        var found = false
        var pendingNumber: Double?
        outer: for part in line[up.upperBound...].split(separator: ",") {
            for token in TextScanning.fields(part) {
                let clock = token.split(separator: ":")
                if clock.count == 2, let hours = Int(clock[0]), let minutes = Int(clock[1]) {
                    // In doubles: `99999999999999999:00` would overflow Int (it is then no finite figure).
                    seconds += Double(hours) * 3600 + Double(minutes) * 60
                    found = true
                } else if let number = Double(token) {
                    pendingNumber = number
                } else if let number = pendingNumber, let unit = unitSeconds(token) {
                    seconds += number * unit
                    pendingNumber = nil
                    found = true
                } else {
                    break outer  // `0 users`, `load average`: the duration is over
                }
            }
        }
        return found ? seconds : nil
    }

    private static func unitSeconds(_ token: Substring) -> Double? {
        let word = token.lowercased()
        if word.hasPrefix("day") { return 86_400 }
        if word.hasPrefix("week") { return 604_800 }
        if word.hasPrefix("hour") || word.hasPrefix("hr") { return 3600 }
        if word.hasPrefix("min") { return 60 }
        if word.hasPrefix("sec") { return 1 }
        return nil
    }
}
