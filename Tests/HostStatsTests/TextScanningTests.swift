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
}
