import SSHTransport
import Testing

@Suite struct HostPatternTests {
    @Test(arguments: [
        ("web1", "web1", true), ("web1", "web*", true), ("web1", "*", true), ("", "*", true),
        ("web12", "web?", false), ("web1", "web?", true), ("web1", "*1", true), ("web1", "w*b*1", true),
        ("web1", "Web1", false), ("web1.example.com", "*.example.com", true), ("example.com", "*.example.com", false),
        ("db", "db?", false), ("a.b", "a?b", true), ("aXbYc", "a*b*c", true), ("abc", "a**c", true),
    ])
    func wildcardsMatchAsOpenSSHDoes(name: String, pattern: String, matches: Bool) {
        #expect(HostPattern.matches(name, pattern: pattern) == matches)
    }

    @Test(arguments: [
        ("db-1", "db-*", true), ("db-old", "db-*,!db-old", false), ("db-2", "db-*,!db-old", true),
        ("web1", "db-*,web?", true), ("web1", "!web1", false), ("web1", "", false),
    ])
    func patternListsNeedAPositiveMatchAndNoNegatedOne(name: String, list: String, matches: Bool) {
        #expect(HostPattern.matches(name, patternList: list) == matches)
    }

    @Test func onlyStarAndQuestionMarkMakeAPattern() {
        #expect(HostPattern.hasWildcards("db-*"))
        #expect(HostPattern.hasWildcards("db?"))
        #expect(!HostPattern.hasWildcards("db-[12]"))
    }
}
