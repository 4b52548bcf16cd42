import Testing
import ValueFormats

@Suite struct HexTests {
    @Test func bytesAndPaddedValuesAreLowercaseUnlessAskedOtherwise() {
        #expect(Hex.string([0x00, 0x0A, 0xFF]) == "000aff")
        #expect(Hex.string(UInt8(0x0B), width: 2) == "0b")
        #expect(Hex.string(UInt8(0x0B), width: 2, uppercase: true) == "0B")
        #expect(Hex.string(UInt32(0x202E), width: 4) == "202e")
        var bytes: [UInt8] = []
        Hex.append(0x0123_4567_89AB_CDEF, into: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == "0123456789abcdef")
    }

    @Test func digitsReadBackAndIdsRefuseUppercase() {
        #expect(Hex.value(of: UInt8(ascii: "F")) == 15)
        #expect(Hex.value(of: UInt8(ascii: "F"), lowercaseOnly: true) == nil)
        #expect(Hex.value(of: UInt8(ascii: "g")) == nil)
        #expect(Hex.parseUInt64(Array("0123456789abcdef".utf8)) == 0x0123_4567_89AB_CDEF)
        #expect(Hex.parseUInt64(Array("0123456789ABCDEF".utf8)) == nil)
        #expect(Hex.parseUInt64(Array("0123".utf8)) == nil)
    }
}

@Suite struct DurationConversionTests {
    @Test func conversionsKeepFractionsOrRoundAsTheirNamesSay() {
        let duration = Duration.milliseconds(1500) + .nanoseconds(1)
        #expect(duration.inSeconds == 1.500_000_001)
        #expect(abs(duration.inMilliseconds - 1500.000_001) < 1e-9)
        #expect(duration.wholeMilliseconds == 1500)
        #expect(duration.roundedUpMilliseconds == 1501)
        #expect(duration.roundedUpSeconds == 2)
        #expect(duration.wholeNanoseconds == 1_500_000_001)
        #expect(Duration.seconds(1).roundedUpMilliseconds == 1000)
        #expect(Duration.seconds(Int64.max).wholeNanoseconds == .max)
        #expect(Duration.seconds(inSeconds: 0.25) == .milliseconds(250))
    }
}
