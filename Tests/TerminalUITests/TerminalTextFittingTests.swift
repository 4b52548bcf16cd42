import TerminalUI
import Testing

@Suite struct TerminalTextFittingTests {
    @Test func namesAreShortenedFromTheirStartMiddleOrEnd() {
        #expect(TerminalText.truncate("/dev/mapper/vg0-root", to: 10) == "/dev/mapp…")
        #expect(TerminalText.truncateStart("/dev/mapper/vg0-root", to: 10) == "…/vg0-root")
        #expect(TerminalText.truncateMiddle("/var/lib/docker/overlay2/abc/merged", to: 15) == "/var/li…/merged")
        for text in ["", "short", "exactly10!"] {
            #expect(TerminalText.truncateMiddle(text, to: 10) == text)
            #expect(TerminalText.truncateStart(text, to: 10) == text)
        }
        #expect(TerminalText.truncateMiddle("abcdefghijk", to: 10).count == 10)
    }

    @Test func summaryPartsWrapAtTheirSeparatorsWithinTheWidth() {
        let lines = TerminalText.wrapped(
            [
                "web1  Debian GNU/Linux 12 (bookworm)", "kernel 6.1.0-18-amd64 x86_64", "up 3d 4h",
                "load 0.12 0.20 0.31",
            ],
            width: 60, indent: "  ")
        #expect(
            lines == [
                "web1  Debian GNU/Linux 12 (bookworm)", "  kernel 6.1.0-18-amd64 x86_64 · up 3d 4h",
                "  load 0.12 0.20 0.31",
            ])
        #expect(TerminalText.wrapped(["a", "b"], width: 80, indent: "") == ["a · b"])
        #expect(TerminalText.wrapped([String(repeating: "x", count: 90)], width: 80, indent: "")[0].count == 80)
    }
}
