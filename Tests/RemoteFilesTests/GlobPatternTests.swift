import RemoteFiles
import Testing

@Suite struct GlobPatternTests {
    @Test func starsQuestionMarksAndSetsMatchAsFindDoes() {
        #expect(GlobPattern("*.log").matches(Array("syslog.log".utf8)))
        #expect(!GlobPattern("*.log").matches(Array("syslog.log.1".utf8)))
        #expect(GlobPattern("*.log*").matches(Array("syslog.log.1".utf8)))
        #expect(GlobPattern("access.?").matches(Array("access.1".utf8)))
        #expect(!GlobPattern("access.?").matches(Array("access.10".utf8)))
        #expect(GlobPattern("[0-9]*.gz").matches(Array("7days.gz".utf8)))
        #expect(!GlobPattern("[!0-9]*").matches(Array("7days".utf8)))
        #expect(GlobPattern("[^0-9]*").matches(Array("days".utf8)))
        #expect(GlobPattern("a*b*c").matches(Array("aXXbYYbZc".utf8)))
        #expect(!GlobPattern("a*b*c").matches(Array("aXXbYY".utf8)))
        #expect(GlobPattern("*").matches([]))
    }

    @Test func backslashQuotesAndAnUnclosedBracketIsLiteral() {
        #expect(GlobPattern("\\*").matches(Array("*".utf8)))
        #expect(!GlobPattern("\\*").matches(Array("x".utf8)))
        #expect(GlobPattern("[ab").matches(Array("[ab".utf8)))
        #expect(GlobPattern("[]]").matches(Array("]".utf8)))
    }

    /// Found by fuzzing (Fixtures/fuzz/crashes/glob/): wildcards are read scalar by scalar, as `find -name` reads
    /// them, so a backslash or a bracket followed by a combining mark is still a wildcard, though Swift sees one
    /// Character there.
    @Test func wildcardsFollowedByACombiningMarkAreStillWildcards() {
        #expect(GlobPattern("\\\u{301}").matches(Array("\u{301}".utf8)))
        #expect(!GlobPattern("\\\u{301}").matches(Array("\\\u{301}".utf8)))
        #expect(GlobPattern("[\u{301}]").matches(Array("\u{301}".utf8)))
        #expect(GlobPattern("*\u{301}").matches(Array("x\u{301}".utf8)))
    }

    @Test func aQuestionMarkIsOneCharacterEvenWhenItIsNotUTF8() {
        #expect(GlobPattern("caf?.txt").matches(Array("café.txt".utf8)))
        #expect(GlobPattern("caf?.txt").matches(Array("caf".utf8) + [0xE9] + Array(".txt".utf8)))
    }
}
