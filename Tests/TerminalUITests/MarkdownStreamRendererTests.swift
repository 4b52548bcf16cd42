import HostscopeCore
import TerminalUI
import Testing

@Suite struct MarkdownStreamRendererTests {
    static let answer = """
        # Disk report

        The disk is **full**: see `/var/log`.

        - rotated logs take **38 GB**
        * the journal takes 2 GB
        1. compress them
        2) or remove them
        > quoted note
        ---
        ```sh
        # not a heading
        du -sh /var/log/* **not bold**
        ```
        Done.
        """

    static func render(_ text: String, pieces: [Int]? = nil) -> String {
        var renderer = MarkdownStreamRenderer(styled: true)
        var out = ""
        if let pieces {
            var rest = Substring(text)
            var index = 0
            while !rest.isEmpty {
                let size = max(1, pieces[index % pieces.count])
                out += renderer.feed(String(rest.prefix(size))).text
                rest = rest.dropFirst(size)
                index += 1
            }
        } else {
            out += renderer.feed(text).text
        }
        return out + renderer.finish().text
    }

    @Test func headingsBoldCodeListsQuotesAndRulesAreStyledWithoutTheirMarkers() {
        let out = Self.render(Self.answer)
        #expect(out.contains("\u{1B}[1m\u{1B}[4mDisk report\u{1B}[0m\n"))
        #expect(!out.contains("# Disk report"))
        #expect(out.contains("The disk is \u{1B}[1mfull\u{1B}[22m: see \u{1B}[36m/var/log\u{1B}[39m."))
        #expect(out.contains("\u{1B}[36m•\u{1B}[39m rotated logs take \u{1B}[1m38 GB\u{1B}[22m"))
        #expect(out.contains("\u{1B}[36m•\u{1B}[39m the journal takes 2 GB"))
        #expect(out.contains("\u{1B}[1m1.\u{1B}[22m compress them"))
        #expect(out.contains("\u{1B}[1m2.\u{1B}[22m or remove them"))
        #expect(out.contains("│\u{1B}[0m quoted note"))
        #expect(out.contains(String(repeating: "─", count: 40)))
    }

    @Test func fencedCodeBlocksAreKeptIntactFencesIncluded() {
        let out = Self.render(Self.answer)
        #expect(
            out.contains(
                "\u{1B}[2m```sh\u{1B}[0m\n# not a heading\ndu -sh /var/log/* **not bold**\n\u{1B}[2m```\u{1B}[0m\n"))
        // After the block, Markdown is read again.
        #expect(out.hasSuffix("Done.\u{1B}[0m") || out.hasSuffix("Done."))
    }

    @Test func theOutputDoesNotDependOnWhereTheStreamIsCut() {
        let whole = Self.render(Self.answer)
        for pieces in [[1], [2], [3, 1, 7], [5, 11, 2], [64]] {
            #expect(Self.render(Self.answer, pieces: pieces) == whole, "\(pieces)")
        }
    }

    @Test func plainTextIsPassedOnAsSoonAsItArrives() {
        var renderer = MarkdownStreamRenderer(styled: true)
        #expect(renderer.feed("Hello wor") == "Hello wor")
        #expect(renderer.feed("ld") == "ld")
        // A line start that may be a marker waits for one more character, and no longer.
        #expect(renderer.feed("\n-") == "\n")
        #expect(renderer.feed("1 degree") == "-1 degree")
    }

    @Test func stylesNeverOutliveTheirLine() {
        let out = Self.render("an **unclosed bold\nand a `stray tick\nplain")
        let lines = out.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines[0].hasSuffix("\u{1B}[0m"))
        #expect(lines[1].hasSuffix("\u{1B}[0m"))
        #expect(lines[2] == "plain")
    }

    @Test func controlCharactersFromTheModelAreEscaped() {
        let out = Self.render("red \u{1B}[31mtext\u{07}\n```\ncode \u{1B}]0;title\u{07}\n```")
        #expect(!out.contains("\u{1B}[31m"))
        #expect(out.contains("\\e[31mtext\\x07"))
        #expect(out.contains("code \\e]0;title\\x07"))
        var plain = MarkdownStreamRenderer(styled: false)
        #expect(plain.feed("# title **x**\u{1B}") == "# title **x**\\e")
    }

    @Test func singleStarsAndUnderscoresStayAsTheyAre() {
        let out = Self.render("5 * 3 = 15 and snake_case_name")
        #expect(out == "5 * 3 = 15 and snake_case_name")
    }
}
