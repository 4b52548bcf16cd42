import Testing

@testable import TerminalUI

@Suite struct TopKeyDecoderTests {
    @Test func arrowsPagesAndHomeEndInBothCSIAndSS3FormsDecodeToKeys() {
        var decoder = TopKeyDecoder()
        let keys = decoder.feed(Array("\u{1B}[A\u{1B}[B\u{1B}OC\u{1B}OD\u{1B}[5~\u{1B}[6~\u{1B}[H\u{1B}[4~".utf8))
        #expect(keys == [.up, .down, .right, .left, .pageUp, .pageDown, .home, .end])
    }

    @Test func aSequenceSplitAcrossReadsWaitsForItsEnd() {
        var decoder = TopKeyDecoder()
        #expect(decoder.feed([0x1B, UInt8(ascii: "[")]).isEmpty)
        #expect(decoder.feed([UInt8(ascii: "A")]) == [.up])
    }

    @Test func aLoneEscIsTheEscKeyOnceNoMoreBytesCome() {
        var decoder = TopKeyDecoder()
        #expect(decoder.feed([0x1B]).isEmpty)
        #expect(decoder.flush() == [.escape])
    }

    @Test func enterBackspaceCtrlCAndUTF8CharactersDecode() {
        var decoder = TopKeyDecoder()
        let keys = decoder.feed(Array("q\r\u{7F}\u{03}é".utf8))
        #expect(keys == [.character("q"), .enter, .backspace, .interrupt, .character("é")])
    }
}
