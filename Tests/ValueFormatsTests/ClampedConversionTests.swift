import Foundation
import Testing
import ValueFormats

@Suite struct ClampedConversionTests {
    @Test(
        arguments: [
            (1e300, Int64.max), (-1e300, Int64.min), (Double.infinity, Int64.max), (-Double.infinity, Int64.min),
            (Double.nan, Int64(0)), (9.3e18, Int64.max), (9_223_372_036_854_775_807.0, Int64.max), (-2.5, Int64(-2)),
            (2.5, Int64(2)), (0.0, Int64(0)),
        ] as [(Double, Int64)])
    func numbersPastTheRangeStopAtItsBoundsAndNaNIsZero(value: Double, expected: Int64) {
        #expect(Int64(clamping: value) == expected)
    }

    @Test func theRoundingRuleIsApplied() {
        #expect(Int64(clamping: 2.5, rounding: .up) == 3)
        #expect(Int64(clamping: -2.5, rounding: .down) == -3)
        #expect(UInt64(clamping: -7.0) == 0)
        #expect(UInt64(clamping: 1.9e19) == .max)
        #expect(Int32(clamping: 1e10) == .max)
    }

    @Test(arguments: [1e300, 9.3e15, Double.infinity, -Double.infinity, Double.nan, -5])
    func aDurationInSecondsFromOutsideNeverTraps(seconds: Double) {
        let duration = Duration.seconds(inSeconds: seconds)
        if seconds.isNaN {
            #expect(duration == .zero)
        } else if seconds > 0 {
            #expect(duration == .nanoseconds(Int64.max))
        } else if seconds == -.infinity {
            #expect(duration == .nanoseconds(Int64.min))
        } else {
            #expect(duration == .seconds(-5))
        }
    }

    @Test(arguments: [
        (1e300, "9999-12-31T23:59:59Z"), (-1e300, "0000-01-01T00:00:00Z"), (9.3e15, "9999-12-31T23:59:59Z"),
        (Double.nan, "1970-01-01T00:00:00Z"),
    ])
    func timestampsFarOutsideTheCalendarAreWrittenAsItsNearestEnd(seconds: Double, text: String) {
        #expect(RFC3339.format(Date(timeIntervalSince1970: seconds), precision: .seconds) == text)
        for precision in [RFC3339.Precision.milliseconds, .nanoseconds] {
            #expect(
                RFC3339.format(Date(timeIntervalSince1970: seconds), precision: precision).hasPrefix(text.dropLast()))
        }
    }

    @Test func durationsPastInt64sMillisecondsStopAtItsBounds() {
        let huge = Duration.seconds(Int64.max)
        #expect(huge.wholeMilliseconds == .max)
        #expect(huge.roundedUpMilliseconds == .max)
        #expect(huge.roundedUpSeconds == .max)
        #expect(Duration.seconds(Int64.min).wholeMilliseconds == .min)
        #expect(Duration.milliseconds(1500).wholeMilliseconds == 1500)
        #expect(Duration.microseconds(1200).roundedUpMilliseconds == 2)
    }
}
