import Foundation
import Testing
import ValueFormats

@Suite struct RFC3339Tests {
    @Test(arguments: [
        (UInt64(0), "1970-01-01T00:00:00.000000000Z"),
        (951_782_400_000_000_001, "2000-02-29T00:00:00.000000001Z"),
        (4_102_444_799_999_999_999, "2099-12-31T23:59:59.999999999Z"),
    ])
    func knownInstantsFormat(nanoseconds: UInt64, text: String) {
        #expect(RFC3339.format(nanosecondsSince1970: nanoseconds) == text)
        #expect(RFC3339.parseNanoseconds(text) == nanoseconds)
    }

    @Test func offsetsAndShortFractionsParse() {
        #expect(RFC3339.parseNanoseconds("2000-02-29T02:00:00.5+02:00") == 951_782_400_500_000_000)
        #expect(RFC3339.parseNanoseconds("2000-02-28T23:00:00-01:00") == 951_782_400_000_000_000)
    }

    @Test(arguments: [
        "2000-02-29T00:00:00.0000000001Z", "2000-02-29T00:00:00.Z", "2000-02-29 00:00:00Z", "2000-13-01T00:00:00Z",
        "1969-12-31T23:59:59Z", "2000-02-29T00:00:00",
    ])
    func malformedOrPreEpochTimestampsAreRejected(text: String) {
        #expect(RFC3339.parseNanoseconds(text) == nil)
    }

    @Test func randomInstantsRoundTrip() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<10_000 {
            let nanoseconds = UInt64.random(in: 0..<8_000_000_000_000_000_000, using: &generator)
            #expect(RFC3339.parseNanoseconds(RFC3339.format(nanosecondsSince1970: nanoseconds)) == nanoseconds)
        }
    }

    @Test func datesFormatToTheMillisecondByDefaultAndToTheSecondOnRequest() {
        let date = Date(timeIntervalSince1970: 1_763_752_920.123_9)
        #expect(RFC3339.format(date) == "2025-11-21T19:22:00.123Z")
        #expect(RFC3339.format(date, precision: .seconds) == "2025-11-21T19:22:00Z")
        #expect(RFC3339.format(secondsSince1970: 1_714_979_289) == "2024-05-06T07:08:09Z")
        #expect(RFC3339.format(Date(timeIntervalSince1970: -0.5)) == "1969-12-31T23:59:59.500Z")
    }

    @Test func datesParseWithSpacesLongFractionsAndOffsets() throws {
        let date = try #require(RFC3339.parse("2025-11-21 20:22:00.123456789123+01:00"))
        #expect(abs(date.timeIntervalSince1970 - 1_763_752_920.123_456_789) < 1e-6)
        #expect(RFC3339.parse("2025-11-21T19:22:00Z") == Date(timeIntervalSince1970: 1_763_752_920))
        #expect(RFC3339.parse("2025-11-21T19:22:00") == nil)
        #expect(RFC3339.parse("yesterday") == nil)
    }
}
