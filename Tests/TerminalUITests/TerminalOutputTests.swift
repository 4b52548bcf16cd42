import HostscopeCore
import TerminalUI
import Testing

@Suite struct TerminalTextTests {
    static let hostile = "\u{1B}]52;c;aGk=\u{07}\u{1B}]0;title\u{07}\u{1B}[2J"

    @Test func aFieldHasEveryControlCharacterEscapedLineBreaksIncluded() {
        #expect(
            TerminalText.sanitize(Self.hostile + "a\nb\tc\r\u{9B}1m\u{202E}")
                == #"\e]52;c;aGk=\x07\e]0;title\x07\e[2Ja\nb\tc\r\x9b1m\u{202e}"#)
    }

    @Test func textKeepingLayoutKeepsLinesTabsAndCRLFButNoLoneCarriageReturn() {
        #expect(
            TerminalText.sanitize("one\ttwo\r\nthree\rfour\n" + Self.hostile, keepingLayout: true)
                == "one\ttwo\r\nthree" + #"\r"# + "four\n" + #"\e]52;c;aGk=\x07\e]0;title\x07\e[2J"#)
        #expect(TerminalText.sanitize("plain ünïcødé ✓\n", keepingLayout: true) == "plain ünïcødé ✓\n")
    }

    @Test func bytesKeepLinesAndTabsAndShowInvalidUTF8Reversibly() {
        let bytes = Array("ok\tline\r\n".utf8) + [0x1B, 0x5B, 0x32, 0x4A, 0x0A, 0x63, 0x61, 0x66, 0xE9, 0x5C, 0x0A]
        #expect(TerminalText.sanitize(bytes: bytes) == "ok\tline\r\n" + #"\e[2J"# + "\n" + #"caf\xe9\\"# + "\n")
    }

    @Test func safeBytesAreThoseSanitizingLeavesAlone() {
        for text in [
            "plain\n", "tab\tand CRLF\r\n", "ünï ✓", "", "a\u{1B}[31m", "a\rb", "trailing\r", "\u{9B}", "\u{7F}",
        ] {
            let bytes = Array(text.utf8)
            #expect(
                TerminalText.isSafe(bytes: bytes) == (TerminalText.sanitize(bytes: bytes) == text),
                "\(text.debugDescription)")
        }
        #expect(!TerminalText.isSafe(bytes: [0x61, 0xFF]))
    }
}

@Suite struct TerminalOutputTests {
    @Test func textIsEscapedAsItIsAddedWhateverItsSource() {
        let hostile = "\u{1B}]0;title\u{07}\u{1B}[2J"
        var output = TerminalOutput(hostile + "\n")
        output.append(hostile)
        output += "literal \u{1B}[31m\n"
        #expect(
            output.text == #"\e]0;title\x07\e[2J"# + "\n" + #"\e]0;title\x07\e[2J"# + #"literal \e[31m"# + "\n")
    }

    @Test func controlSequencesComeOnlyFromTheNamedControls() {
        let line =
            TerminalOutput.cursorUp(2) + .carriageReturn + .eraseLine + TerminalOutput("host\u{1B}[1A", style: .red)
            + .eraseToEndOfLine
        #expect(line.text == "\u{1B}[2A\r\u{1B}[2K\u{1B}[31mhost\\e[1A\u{1B}[0m\u{1B}[K")
        #expect(TerminalOutput.cursorUp(0).isEmpty)
    }
}
