import Testing

@testable import SSHTransport

/// ssh_config algorithm lists (`Ciphers`, `MACs`, …) turned into what the session proposes.
@Suite struct AlgorithmListTests {
    /// libssh2's order, and hostscope's default order with aes128-ctr first.
    private let supported = ["aes256-ctr", "aes192-ctr", "aes128-ctr", "aes256-cbc", "3des-cbc"]
    private let defaults = ["aes128-ctr", "aes192-ctr", "aes256-ctr", "aes256-cbc", "3des-cbc"]

    private func resolve(_ spec: String?) throws(AlgorithmList.Failure) -> [String] {
        try AlgorithmList.resolve(spec, defaults: defaults, supported: supported)
    }

    @Test func noListMeansTheDefaultOrder() throws {
        #expect(try resolve(nil) == defaults)
    }

    @Test func aPlainListReplacesTheDefaultsInItsOwnOrderAndSkipsNamesTheLibraryLacks() throws {
        #expect(try resolve("chacha20-poly1305@openssh.com,aes256-ctr,aes128-ctr") == ["aes256-ctr", "aes128-ctr"])
    }

    @Test func aPatternTakesEveryMatchingNameOnceInTheLibrarysOrder() throws {
        #expect(try resolve("aes256-ctr,aes*-ctr") == ["aes256-ctr", "aes192-ctr", "aes128-ctr"])
        #expect(try resolve("aes1?2-ctr,3des-*") == ["aes192-ctr", "3des-cbc"])
    }

    @Test func plusAppendsMinusRemovesAndCaretPutsNamesFirst() throws {
        #expect(try resolve("+aes256-ctr,blowfish-cbc") == defaults)
        #expect(try resolve("-*-cbc") == ["aes128-ctr", "aes192-ctr", "aes256-ctr"])
        #expect(try resolve("-aes128-ctr") == ["aes192-ctr", "aes256-ctr", "aes256-cbc", "3des-cbc"])
        #expect(try resolve("^aes256-cbc") == ["aes256-cbc", "aes128-ctr", "aes192-ctr", "aes256-ctr", "3des-cbc"])
    }

    @Test func aListLeavingNothingSupportedOrWithAnEmptyNameIsRefused() {
        #expect(throws: AlgorithmList.Failure.nothingSupported) { try resolve("chacha20-poly1305@openssh.com") }
        #expect(throws: AlgorithmList.Failure.nothingSupported) { try resolve("-*") }
        #expect(throws: AlgorithmList.Failure.malformed) { try resolve("aes128-ctr,,aes256-ctr") }
        #expect(throws: AlgorithmList.Failure.malformed) { try resolve("+") }
    }

    @Test func patternsFollowOpenSSHsMatchPattern() {
        #expect(AlgorithmList.matches("hmac-sha2-256", pattern: "hmac-*"))
        #expect(AlgorithmList.matches("hmac-sha2-256", pattern: "*sha2*6"))
        #expect(AlgorithmList.matches("aes128-ctr", pattern: "aes1?8-ctr"))
        #expect(!AlgorithmList.matches("aes128-ctr", pattern: "AES128-CTR"))
        #expect(!AlgorithmList.matches("aes128-ctr", pattern: "aes128"))
        #expect(AlgorithmList.matches("a-b-c", pattern: "a*b*c"))
        #expect(!AlgorithmList.matches("a-b-c-d", pattern: "a*b*c"))
    }
}
