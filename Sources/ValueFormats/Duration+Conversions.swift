extension Duration {
    /// The duration in seconds, fractions included: for `Date` arithmetic and figures in seconds.
    public var inSeconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    /// The duration in milliseconds, fractions included: for figures such as `duration_ms`.
    public var inMilliseconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) * 1000 + Double(attoseconds) / 1e15
    }

    /// Whole milliseconds, the rest dropped; durations past Int64's milliseconds stop at its bounds.
    public var wholeMilliseconds: Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        let (sum, carry) = scaled.addingReportingOverflow(attoseconds / 1_000_000_000_000_000)
        guard !overflow, !carry else { return seconds < 0 ? .min : .max }
        return sum
    }

    /// Milliseconds rounded up, so that a wait of 0.2 ms does not become a busy poll of 0 ms; durations past
    /// Int64's milliseconds stop at its bounds.
    public var roundedUpMilliseconds: Int64 {
        let whole = wholeMilliseconds
        guard whole < .max, components.attoseconds % 1_000_000_000_000_000 > 0 else { return whole }
        return whole + 1
    }

    /// Whole seconds, rounded up (a `Retry-After` of 1.2 s is 2 s).
    public var roundedUpSeconds: Int64 {
        let (seconds, attoseconds) = components
        return attoseconds > 0 && seconds < .max ? seconds + 1 : seconds
    }

    /// Whole nanoseconds, the rest dropped; negative durations stay negative, and durations past
    /// Int64's 292 years stop at its bounds.
    public var wholeNanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let (sum, carry) = scaled.addingReportingOverflow(attoseconds / 1_000_000_000)
        guard !overflow, !carry else { return seconds < 0 ? .min : .max }
        return sum
    }

    /// The duration of `seconds` seconds, to the nanosecond; past Int64's 292 years of nanoseconds it
    /// stops at its bounds, and NaN is zero, so a number from outside never traps here.
    public static func seconds(inSeconds seconds: Double) -> Duration {
        .nanoseconds(Int64(clamping: seconds * 1e9, rounding: .toNearestOrAwayFromZero))
    }
}
