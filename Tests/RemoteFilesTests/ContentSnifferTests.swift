import RemoteFiles
import Testing

@Suite struct ContentSnifferTests {
    @Test func textWithEscapesIsTextAndANulMakesBinary() {
        #expect(!ContentSniffer.isBinary(Array("plain\ttext\r\n\u{1B}[31mred\u{1B}[0m\n".utf8)))
        #expect(!ContentSniffer.isBinary(Array("Latin-1 caf".utf8) + [0xE9]))
        #expect(ContentSniffer.isBinary(Array("text".utf8) + [0] + Array("more".utf8)))
        #expect(ContentSniffer.isBinary((0..<100).map { UInt8($0 % 7 + 1) } + [0x41]))
        #expect(!ContentSniffer.isBinary([]))
    }

    @Test func magicNumbersNameTheType() {
        #expect(
            ContentSniffer.typeGuess([0x7F, 0x45, 0x4C, 0x46, 2, 1, 1, 0] + [UInt8](repeating: 0, count: 8) + [3, 0])
                == "ELF 64-bit shared object")
        #expect(ContentSniffer.typeGuess([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) == "PNG image")
        #expect(ContentSniffer.typeGuess([0x1F, 0x8B, 8, 0]) == "gzip compressed data")
        #expect(ContentSniffer.typeGuess(Array("SQLite format 3\0".utf8)) == "SQLite 3 database")
        var tar = [UInt8](repeating: 0, count: 512)
        tar.replaceSubrange(257..<262, with: Array("ustar".utf8))
        #expect(ContentSniffer.typeGuess(tar) == "tar archive")
        #expect(ContentSniffer.typeGuess([1, 2, 3]) == nil)
    }

    @Test func theHexDumpLooksLikeHexdumpC() {
        let lines = ContentSniffer.hexDump(Array("0123456789abcdefXYZ".utf8), base: 16)
        #expect(
            lines == [
                "00000010  30 31 32 33 34 35 36 37  38 39 61 62 63 64 65 66  |0123456789abcdef|",
                "00000020  58 59 5a" + String(repeating: " ", count: 42) + "|XYZ|",
            ])
    }
}

@Suite struct ByteRangeTests {
    @Test func rangesParseLikeHTTPRanges() {
        #expect(ByteRange(parsing: "0-99") == ByteRange(parsing: "0-99"))
        #expect(ByteRange(parsing: "0-99")?.first == 0)
        #expect(ByteRange(parsing: "0-99")?.last == 99)
        #expect(ByteRange(parsing: "100-")?.last == nil)
        #expect(ByteRange(parsing: "-20")?.suffixLength == 20)
        #expect(ByteRange(parsing: "9-3") == nil)
        #expect(ByteRange(parsing: "x-3") == nil)
        #expect(ByteRange(parsing: "-0") == nil)
        #expect(ByteRange(parsing: "17") == nil)
    }
}
