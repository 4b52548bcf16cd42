import Testing

@testable import SSHTransport

@Suite struct PercentExpansionTests {
    private let expansion = PercentExpansion(tokens: ["h": "web1", "p": "22"], variables: ["A": "x", "EMPTY": ""])

    @Test(arguments: [
        ("%h:%p", "web1:22"), ("100%%", "100%"), ("${A}/${EMPTY}k", "x/k"), ("$A", "$A"), ("plain", "plain"),
        ("%%h", "%h"),
    ])
    func tokensAndVariablesExpand(text: String, expected: String) throws {
        #expect(try expansion.expand(text) == expected)
    }

    @Test(arguments: ["%", "%q", "${A", "${}", "${MISSING}"])
    func malformedOrUnknownReferencesAreErrors(text: String) {
        #expect(throws: PercentExpansion.Failure.self) { try expansion.expand(text) }
    }

    @Test func withoutVariablesDollarBracesStayAsWritten() throws {
        let hostOnly = PercentExpansion(tokens: ["h": "web1"], variables: nil)
        #expect(try hostOnly.expand("${A}.%h") == "${A}.web1")
    }

    @Test(arguments: [
        ("~", "/home/alice/"), ("~/", "/home/alice/"), ("~/.ssh/x", "/home/alice/.ssh/x"), ("~//x", "/home/alice/x"),
        ("~bob", "/home/bob/"), ("~bob/k", "/home/bob/k"), ("/abs/~", "/abs/~"), ("rel", "rel"),
    ])
    func tildeExpandsAsOpenSSHsTildeExpandDoes(path: String, expected: String) throws {
        #expect(try PercentExpansion.expandTilde(path, in: ConfigTest.environment()) == expected)
    }

    @Test func aTildeNamingAnUnknownUserIsAnError() {
        #expect(throws: PercentExpansion.Failure.self) {
            try PercentExpansion.expandTilde("~nobody-here/x", in: ConfigTest.environment())
        }
    }

    @Test(arguments: [("30", 30), ("1m30s", 90), ("2H", 7200), ("1w1d", 691_200), ("0", 0)])
    func timesReadLikeConvtime(text: String, seconds: Int) {
        #expect(SSHConfigTime.seconds(text) == seconds)
    }

    @Test(arguments: ["", "m", "1x", "-5", "1.5m", "99999999999"])
    func badTimesAreRejected(text: String) {
        #expect(SSHConfigTime.seconds(text) == nil)
    }
}
