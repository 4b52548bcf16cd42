import Foundation
import TestSupport
import Testing

@testable import SSHTransport

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

    /// Found by fuzzing (Fixtures/fuzz/crashes/glob/): every split tried at every `*` took time exponential in
    /// their number; the fuzz input ran past libFuzzer's 10 s limit.
    @Test func manyStarsAndANameThatMissesThemEndAtOnce() throws {
        let input = try Data(
            contentsOf: Repository.fixtures.appendingPathComponent("fuzz/crashes/glob/host-pattern-many-stars"))
        let pattern = String(decoding: input.prefix { $0 != 0 }, as: UTF8.self)
        let name = String(decoding: input.drop { $0 != 0 }.dropFirst(), as: UTF8.self)
        let manyStars = String(repeating: "*a", count: 40) + "b"
        let manyAs = String(repeating: "a", count: 400)
        let clock = ContinuousClock()
        let elapsed = clock.measure {
            _ = HostPattern.matches(hostName: name, patternList: pattern)
            #expect(!HostPattern.matches(manyAs, pattern: manyStars))
            #expect(HostPattern.matches(manyAs + "b", pattern: manyStars))
            // ssh_config's Include globs.
            #expect(!GlobPattern.matches(manyAs, manyStars))
            #expect(GlobPattern.matches(manyAs + "b", manyStars))
            #expect(GlobPattern.matches(manyAs + "b", String(repeating: "*[a]", count: 40) + "?"))
        }
        #expect(elapsed < .seconds(1), "\(elapsed)")
    }

    @Test(arguments: [
        ("a.conf", "*.conf", true), (".hidden.conf", "*.conf", false), (".hidden.conf", ".*", true),
        ("x[y", "x[y", true), ("b", "[a-c]", true), ("d", "[!a-c]", true), ("b", "[!a-c]", false),
        ("a*b", "a\\*b", true), ("axb", "a\\*b", false), ("ab", "a*?b", false), ("axyb", "a*?b", true),
        ("", "*", true), ("", "?", false), ("abc", "a*c*", true),
    ])
    func includeGlobsMatchAsBefore(name: String, pattern: String, matches: Bool) {
        #expect(GlobPattern.matches(name, pattern) == matches)
    }

    @Test func onlyStarAndQuestionMarkMakeAPattern() {
        #expect(HostPattern.hasWildcards("db-*"))
        #expect(HostPattern.hasWildcards("db?"))
        #expect(!HostPattern.hasWildcards("db-[12]"))
    }
}
