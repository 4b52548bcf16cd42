import Foundation
import Testing
import ValueFormats

@Suite struct ClampedConversionTests {
    @Test(arguments: [
        (1e300, Int64.max), (-1e300, Int64.min), (Double.infinity, Int64.max), (-Double.infinity, Int64.min),
        (Double.nan, 0), (9.3e18, Int64.max), (9_223_372_036_854_775_807.0, Int64.max), (-2.5, -2), (2.5, 2),
        (0, 0),
    ])
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

    @Test(arguments: [1e300, -1e300, 9.3e15])
    func timestampsFarOutsideTheCalendarFormatWithoutTrapping(seconds: Double) {
        for precision in [RFC3339.Precision.seconds, .milliseconds, .nanoseconds] {
            #expect(!RFC3339.format(Date(timeIntervalSince1970: seconds), precision: precision).isEmpty)
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
