import Testing
import ValueFormats

@Suite struct EscapedTextTests {
    @Test func printableUTF8IsLeftAsItIs() {
        #expect(EscapedText.encode(Array("héllo wörld.txt".utf8)) == "héllo wörld.txt")
    }

    @Test func backslashesControlsAndInvalidBytesAreEscaped() {
        #expect(EscapedText.encode(Array("a\\b".utf8)) == "a\\\\b")
        #expect(EscapedText.encode(Array("new\nline\ttab\r".utf8)) == "new\\nline\\ttab\\r")
        #expect(EscapedText.encode(Array("esc\u{1B}[31m".utf8)) == "esc\\x1b[31m")
        #expect(EscapedText.encode(Array("caf".utf8) + [0xE9]) == "caf\\xe9")
        // A C1 control (U+009B, a one-character CSI) and a right-to-left override.
        #expect(EscapedText.encode(Array("\u{9B}x\u{202E}".utf8)) == "\\xc2\\x9bx\\xe2\\x80\\xae")
        // Overlong and surrogate encodings are not valid UTF-8.
        #expect(EscapedText.encode([0xC0, 0xAF]) == "\\xc0\\xaf")
        #expect(EscapedText.encode([0xED, 0xA0, 0x80]) == "\\xed\\xa0\\x80")
    }

    @Test func everyByteStringRoundTrips() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<500 {
            let length = Int.random(in: 0..<40, using: &generator)
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            #expect(EscapedText.decode(EscapedText.encode(bytes)) == bytes)
        }
        let all = (0...255).map { UInt8($0) }
        #expect(EscapedText.decode(EscapedText.encode(all)) == all)
    }

    @Test func decodingKeepsUnknownEscapesLiteral() {
        #expect(EscapedText.decode("a\\qb") == Array("a\\qb".utf8))
        #expect(EscapedText.decode("end\\") == Array("end\\".utf8))
        #expect(EscapedText.decode("\\xZZ") == Array("\\xZZ".utf8))
        #expect(RemotePath(escaped: "/tmp/caf\\xe9").bytes == Array("/tmp/caf".utf8) + [0xE9])
    }

    @Test func pathsJoinAndSplitAsAPersonWrotesThem() {
        #expect(RemotePath(".").appending(Array("x".utf8)) == "x")
        #expect(RemotePath("/var/log/").appending(Array("syslog".utf8)) == "/var/log/syslog")
        #expect(RemotePath("/var/log").parent == "/var")
        #expect(RemotePath("/x").parent == "/")
        #expect(RemotePath("x").parent == ".")
        #expect(RemotePath("/var/log/").lastComponent == Array("log".utf8))
        #expect(RemotePath("B") < RemotePath("a"))
    }
}
