import HostStats
import Testing

@Suite struct TextScanningTests {
    @Test func fieldsSplitOnAsciiBlanksOnly() {
        #expect(TextScanning.fields("Moyenne\u{202F}: all  1,00\t2") == ["Moyenne\u{202F}:", "all", "1,00", "2"])
    }

    @Test(arguments: [
        ("4.0K", UInt64(4096)), ("12G", 12 << 30), ("8,6Mi", 9_017_754), ("0B", 0), ("874m", 874 << 20),
        ("1946M+", 1946 << 20), ("466Gi", 466 << 30), ("17", 17),
    ])
    func scaledSizesReadTheirSuffix(token: String, bytes: UInt64) {
        #expect(TextScanning.scaledSize(token[...]) == bytes)
    }

    @Test func decimalCommasRead() {
        #expect(TextScanning.localizedDouble("47,50") == 47.5)
        #expect(TextScanning.localizedDouble("x") == nil)
    }

    @Test func countersReadAsUInt64DoesWhateverTheirShape() {
        for token in ["0", "42", "18446744073709551615", "18446744073709551616", "", "+5", "-1", "4x", "١٢", " 7"] {
            let text = "k \(token) v"
            let substring = text.dropFirst(2).dropLast(2)
            #expect(TextScanning.counter(substring) == UInt64(substring), "token \(token)")
        }
        #expect(TextScanning.counter("18446744073709551615") == UInt64.max)
    }
}
