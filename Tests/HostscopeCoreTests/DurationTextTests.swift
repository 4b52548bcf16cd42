import HostscopeCore
import Testing
import ValueFormats

@Suite struct DurationTextTests {
    @Test func aDurationIsANumberAndAUnitOrABareNumberOfSeconds() {
        #expect(DurationText.parse("250ms") == .milliseconds(250))
        #expect(DurationText.parse("1.5s") == .milliseconds(1500))
        #expect(DurationText.parse("10m") == .seconds(600))
        #expect(DurationText.parse("7d") == .seconds(604_800))
        #expect(DurationText.parse("2") == .seconds(2))
    }

    @Test func compoundDurationsAddTheirParts() {
        #expect(DurationText.parse("1m30s") == .seconds(90))
        #expect(DurationText.parse("1h30m") == .seconds(5400))
        #expect(DurationText.parse("2d12h") == .seconds(216_000))
        #expect(DurationText.parse("1s500ms") == .milliseconds(1500))
        #expect(DurationText.parse("1H30M") == .seconds(5400))
    }

    @Test func aPartsNumberMayHaveAnExponentAsABareNumberMay() {
        #expect(DurationText.parse("1e3s") == .seconds(1000))
        #expect(DurationText.parse("1.5e1m") == .seconds(900))
        #expect(DurationText.parse("1e+2ms") == .milliseconds(100))
        #expect(DurationText.parse("1e3") == .seconds(1000))
        #expect(DurationText.parse("1es") == nil)
        #expect(DurationText.parse("1e-s") == nil)
    }

    @Test func aPartWithoutItsUnitOrAnUnknownUnitIsNoDuration() {
        for text in ["1h30", "yesterday", "5x", "-5s", "1h-30m", "m", "", "inf", "1..5s", "h1"] {
            #expect(DurationText.parse(text) == nil, "\(text)")
        }
    }
}
