import Foundation
import Testing
import ValueFormats

@testable import RemoteFiles

@Suite struct LineMatcherTests {
    static func matcher(_ pattern: String, ignoreCase: Bool = false, fixed: Bool = false) throws -> LineMatcher {
        try LineMatcher(pattern: pattern, ignoreCase: ignoreCase, fixedString: fixed)
    }

    static func matches(_ pattern: String, _ line: String, ignoreCase: Bool = false) throws -> Bool {
        try matcher(pattern, ignoreCase: ignoreCase).matches(Array(line.utf8)[...])
    }

    /// Seconds `body` takes.
    static func seconds(_ body: () throws -> Void) rethrows -> Double {
        let start = ContinuousClock.now
        try body()
        return start.duration(to: .now).inSeconds
    }

    static let lines = [
        "", "a", "abc", "ERROR disk full", "WARN 42 retries", "warn 7", "TODO: fix", "// FIXME later",
        "foo bar baz", "foobar", "x=1;y=22;z=333", "tab\there", "2026-11-25T04:43:26Z", "caf\u{E9} cr\u{E8}me",
        "\u{C9}COLE", "a.b", "a+b", "(paren)", "[bracket]", "back\\slash", "under_score", "   spaces   ",
        "{brace}", "\u{65E5}\u{672C}\u{8A9E} text", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab", "ab ab ab", "end$",
    ]

    /// Patterns in the syntax docs/files.md promises, with Swift `Regex` as the reference.
    static let patterns = [
        "TODO|FIXME", "^ERROR|WARN [0-9]+", "^a", "c$", "^$", "a.c", "fo+", "fo*bar", "o{2}", "[0-9]{2,}",
        "[0-9]{1,2};", "x=[0-9]+;y", "[^a-z ]", "[[:digit:]]+Z", "[[:upper:]][[:lower:]]", "\\d\\d", "\\w+_\\w+",
        "\\s{3}", "\\bbar\\b", "\\Bbar", "foo(bar)?", "(ab )+ab", "a\\.b", "a\\+b", "\\(paren\\)", "\\[b",
        "back\\\\", "\\{brace\\}", "caf.", "\u{E9}", "cr[\u{E0}-\u{EF}]me", "\u{65E5}.\u{8A9E}", "(a|aa)*b",
        "(?:x|y)=\\d", "(?<key>z)=3+$", "\\tt|t\\there", "^\\s+\\S", "a*?b", "end\\$", "[.+]", "[a-]",
        "T\\d\\d:", "e\\b", "(a|b|c)(a|b|c)c", "",
    ]

    @Test func patternsMatchTheLinesSwiftRegexMatches() throws {
        for pattern in Self.patterns {
            let reference = try Regex(pattern)
            let matcher = try Self.matcher(pattern)
            for line in Self.lines {
                let expected = (try? reference.firstMatch(in: line)) != nil
                #expect(matcher.matches(Array(line.utf8)[...]) == expected, "\(pattern) on \(line.debugDescription)")
            }
        }
    }

    @Test func ignoringCaseMatchesLikeSwiftRegexIgnoringCase() throws {
        for pattern in ["error|warn", "[a-z]+ [0-9]+", "\u{E9}cole", "CAF\u{C9}", "todo", "^[a-z]+$"] {
            let reference = try Regex(pattern).ignoresCase()
            let matcher = try Self.matcher(pattern, ignoreCase: true)
            let inline = try Self.matcher("(?i)" + pattern)
            for line in Self.lines {
                let expected = (try? reference.firstMatch(in: line)) != nil
                #expect(matcher.matches(Array(line.utf8)[...]) == expected, "\(pattern) on \(line.debugDescription)")
                #expect(inline.matches(Array(line.utf8)[...]) == expected, "(?i)\(pattern) on \(line.debugDescription)")
            }
        }
    }

    @Test func aFixedStringIsPlainTextEvenWithMetacharacters() throws {
        let fixed = try Self.matcher("a.b", fixed: true)
        #expect(fixed.matches(Array("xa.by".utf8)[...]))
        #expect(!fixed.matches(Array("axb".utf8)[...]))
        let folded = try Self.matcher("NEEDLE(", ignoreCase: true, fixed: true)
        #expect(folded.matches(Array("a needle( here".utf8)[...]))
        // Overlapping starts are not missed (a naive restart after a partial match would).
        #expect(try Self.matcher("aab", fixed: true).matches(Array("aaab".utf8)[...]))
    }

    @Test func bytesThatAreNotUTF8AreCharactersOfTheirOwn() throws {
        let latin1: [UInt8] = Array("caf".utf8) + [0xE9] + Array(" ok".utf8)
        #expect(try Self.matcher("caf. ok").matches(latin1[...]))
        #expect(try Self.matcher("caf[^a-z] ok").matches(latin1[...]))
        #expect(!(try Self.matcher("caf\u{E9}").matches(latin1[...])))
        #expect(try Self.matcher("ok$").matches(latin1[...]))
        // A truncated sequence at the end of the line.
        #expect(try Self.matcher("x.$").matches([0x78, 0xE2, 0x82][...]) == false)
        #expect(try Self.matcher("x..$").matches([0x78, 0xE2, 0x82][...]))
    }

    @Test func patternsThatNeedBacktrackingOrAreMistypedAreRefusedWithOneSentence() throws {
        let refused: [(String, String)] = [
            ("(a)\\1", "back-references"), ("\\k<name>", "back-references"), ("a(?=b)", "look-around"),
            ("(?<!a)b", "look-around"), ("(?>a+)b", "atomic groups"), ("a*+b", "possessive"),
            ("\\p{L}", "Unicode property"), ("(?s)a", "leading `(?i)`"), ("a{1001}", "above 1000"),
            ("(a{1000}){1000}", "too large"), ("(a", "never closed"), ("a)", "closes no group"),
            ("[a", "never closed"), ("*a", "nothing before it"), ("a|+b", "nothing before it"), ("\\q", "\\q"),
            ("[z-a]", "backwards"), ("a{3,2}", "larger count first"), ("[[:alfa:]]", "[:alfa:]"),
        ]
        for (pattern, phrase) in refused {
            do {
                _ = try Self.matcher(pattern)
                Issue.record("\(pattern) was accepted")
            } catch let error as RemoteFilesError {
                #expect(error.code == .invalidArgument, "\(pattern)")
                #expect(error.message.contains(phrase), "\(pattern): \(error.message)")
                #expect(error.message.contains("the pattern \(pattern) "), "\(pattern): \(error.message)")
            }
        }
        // POSIX's `]` first in a bracket is the character itself.
        #expect(try Self.matches("[]a]", "]"))
        // A brace that starts no count is the character itself, as in grep -E.
        #expect(try Self.matches("a{b", "xa{b"))
        #expect(try Self.matches("{x}", "{x}"))
    }

    @Test func backtrackingBombsTakeTimeLinearInTheLine() throws {
        // Swift Regex took 15.9 s on 34 `a`s with the first; glibc's regexec 19 s on 40,000.
        let bombs = ["(a|aa)*c", "(a+)+c", "(a*)*c", "(a|a?)+c", "(.*a){12}c", "(\\w+\\s?)+!"]
        let short = String(repeating: "a", count: 34)
        let long = String(repeating: "a", count: 1 << 20)
        for bomb in bombs {
            let matcher = try Self.matcher(bomb)
            var results: [Bool] = []
            let elapsed = Self.seconds {
                results.append(matcher.matches(Array(short.utf8)[...]))
                results.append(matcher.matches(Array(long.utf8)[...]))
            }
            #expect(results == [false, false], "\(bomb)")
            #expect(elapsed < 2, "\(bomb) took \(elapsed) s on 34 and 1 MiB of a")
        }
        #expect(try Self.matches("(a|aa)*c", short + "c"))
    }

    @Test func aSixtyFourMebibyteLineIsMatchedInLinearTime() throws {
        var line = [UInt8](repeating: UInt8(ascii: "x"), count: 64 << 20)
        line.replaceSubrange(line.count - 6..<line.count, with: Array("needle".utf8))
        for pattern in ["needle$", "ne+dle|haystack", "[0-9]+|need.e"] {
            let matcher = try Self.matcher(pattern)
            var found = false
            let elapsed = Self.seconds { found = matcher.matches(line[...]) }
            #expect(found, "\(pattern)")
            #expect(elapsed < 5, "\(pattern) took \(elapsed) s on 64 MiB")
        }
    }
}
