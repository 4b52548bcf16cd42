import Testing

@testable import SSHTransport

/// What a connect error quotes when something else than an SSH server answered.
struct NonSSHEvidenceTests {
    private func evidence(banner: String?, firstBytes: String?) -> String? {
        SessionLoop.nonSSHEvidence(banner: banner.map { Array($0.utf8) }, firstBytes: firstBytes.map { Array($0.utf8) })
            .map { String(decoding: $0, as: UTF8.self) }
    }

    @Test func theFirstLineIsQuotedWhetherLibssh2TookItForABannerOrOnlyThePeekSawIt() {
        let reply = "HTTP/1.1 400 Bad Request\r\n\r\n"
        #expect(evidence(banner: "HTTP/1.1 400 Bad Request", firstBytes: reply) == "HTTP/1.1 400 Bad Request")
        #expect(evidence(banner: nil, firstBytes: reply) == "HTTP/1.1 400 Bad Request")
        #expect(evidence(banner: nil, firstBytes: "\r\n\nplease log in\nuser: ") == "please log in")
    }

    @Test func bytesWithoutALineEndAreQuotedWhole() {
        #expect(evidence(banner: nil, firstBytes: "\u{1}\u{2}binary") == "\u{1}\u{2}binary")
    }

    @Test func anSSHBannerOrNothingSeenIsNoEvidence() {
        #expect(evidence(banner: "SSH-2.0-OpenSSH_9.2", firstBytes: "SSH-2.0-OpenSSH_9.2\r\n") == nil)
        #expect(evidence(banner: nil, firstBytes: "SSH-2.0-OpenSSH_9.2\r\n") == nil)
        #expect(evidence(banner: nil, firstBytes: "SS") == nil)
        #expect(evidence(banner: nil, firstBytes: "\r\n") == nil)
        #expect(evidence(banner: nil, firstBytes: nil) == nil)
    }
}
