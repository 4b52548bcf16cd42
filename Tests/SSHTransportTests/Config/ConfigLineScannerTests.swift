import Testing

@testable import SSHTransport

@Suite struct ConfigLineScannerTests {
    private let location = SSHConfigLocation(file: "config", line: 7)

    private func scan(_ line: String) throws -> SSHConfigDirective? {
        try ConfigLineScanner.scan(line[...], at: location)
    }

    @Test(arguments: ["Port 22", "Port=22", "Port = 22", "  port\t22  ", "PORT =22\r", "Port= 22 # the usual"])
    func everyKeywordValueSpellingReadsTheSame(line: String) throws {
        let directive = try #require(try scan(line))
        #expect(directive.keyword == "port")
        #expect(directive.arguments == ["22"])
        #expect(directive.location == location)
    }

    @Test(arguments: ["", "   ", "# a comment", "   # indented comment", "\t\r"])
    func blankAndCommentLinesHoldNoDirective(line: String) throws {
        #expect(try scan(line) == nil)
    }

    @Test func theKeywordKeepsItsSpellingForMessages() throws {
        let directive = try #require(try scan("IdentityFile x"))
        #expect(directive.spelling == "IdentityFile")
        #expect(directive.keyword == "identityfile")
    }

    @Test func quotesGroupWordsAndMayStartMidWord() throws {
        let directive = try #require(try scan(#"UserKnownHostsFile "/a b/c" x'y z'w '' "#))
        #expect(directive.arguments == ["/a b/c", "xy zw", ""])
    }

    @Test func backslashesEscapeQuotesBackslashesAndSpacesOnly() throws {
        let directive = try #require(try scan(#"IdentityFile a\ b\"c\\d\n"#))
        #expect(directive.arguments == [#"a b"c\d\n"#])
    }

    @Test func aHashStartsACommentOnlyWhereAnArgumentWouldStart() throws {
        let directive = try #require(try scan("Host web#1 db # and the rest"))
        #expect(directive.arguments == ["web#1", "db"])
    }

    @Test func aSecondEqualsSignBelongsToTheValue() throws {
        let directive = try #require(try scan("SetEnv=A=b"))
        #expect(directive.arguments == ["A=b"])
    }

    @Test func aKeywordWithoutValueIsAnErrorNamingTheLine() {
        let error = ConfigTest.error { _ = try scan("HostName   ") }
        #expect(error?.code == .config)
        #expect(error?.message.hasPrefix("config line 7: \"HostName\" has no value") == true)
    }

    @Test func anUnclosedQuoteIsAnError() {
        let error = ConfigTest.error { _ = try scan(#"IdentityFile "~/my key"#) }
        #expect(error?.code == .config)
        #expect(error?.message.contains("quote is not closed") == true)
    }
}
