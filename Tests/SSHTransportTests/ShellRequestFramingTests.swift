import Testing

@testable import SSHTransport

/// The end-line scan of ``ShellRequestFraming``, fed the way a channel delivers bytes: in
/// pieces that split lines and markers anywhere.
@Suite struct ShellRequestFramingTests {
    private func feed(
        _ framing: inout ShellRequestFraming, _ text: String, on stream: ShellRequestFraming.Stream, piece: Int
    ) {
        let bytes = Array(text.utf8)
        var start = 0
        while start < bytes.count {
            let end = min(bytes.count, start + piece)
            bytes[start..<end].withUnsafeBufferPointer { framing.received($0, on: stream) }
            start = end
        }
    }

    @Test func outputEndsAtItsOwnMarkersWhereverTheBytesAreSplit() {
        for piece in [1, 2, 3, 7, 64, 4096] {
            var framing = ShellRequestFraming(nonce: "abc", outputLimit: 1 << 20)
            feed(&framing, "no newline at the end", on: .stdout, piece: piece)
            #expect(!framing.isFinished)
            feed(&framing, "\nhostscope:end:abc 3\n", on: .stdout, piece: piece)
            #expect(framing.stdoutEnded)
            #expect(!framing.isFinished, "stderr has not ended yet")
            feed(&framing, "warning\n\nhostscope:end:abc\n", on: .stderr, piece: piece)
            #expect(framing.isFinished)
            #expect(framing.stdout == Array("no newline at the end".utf8))
            #expect(framing.stderr == Array("warning\n".utf8))
            #expect(framing.exitStatus == 3)
            #expect(!framing.truncated)
        }
    }

    @Test func aMarkerWithAnotherNonceOrNotAtALineStartIsOutput() {
        var framing = ShellRequestFraming(nonce: "abc", outputLimit: 1 << 20)
        let forged = "hostscope:end:abd 0\nx hostscope:end:abc 0\n"
        feed(&framing, forged, on: .stdout, piece: 5)
        feed(&framing, "\nhostscope:end:abc 0\n", on: .stdout, piece: 5)
        feed(&framing, "\nhostscope:end:abc\n", on: .stderr, piece: 5)
        #expect(framing.isFinished)
        #expect(framing.stdout == Array(forged.utf8))
        #expect(framing.exitStatus == 0)
    }

    @Test func outputPastTheLimitIsCutAndEndsTheScript() {
        var framing = ShellRequestFraming(nonce: "abc", outputLimit: 1000)
        feed(&framing, String(repeating: "x", count: 5000), on: .stdout, piece: 700)
        #expect(framing.truncated)
        #expect(framing.isFinished)
        #expect(framing.stdout.count == 1000)
        #expect(framing.exitStatus == nil)
    }

    @Test func theInputRunsTheScriptWithoutStdinAndPrintsBothEndLines() {
        let framing = ShellRequestFraming(nonce: "abc", outputLimit: 10)
        let input = String(decoding: framing.input(for: "echo hi # a comment"), as: UTF8.self)
        #expect(input.hasPrefix("{ echo hi # a comment\n} </dev/null; "))
        #expect(input.contains("printf '\\n%s %s\\n' hostscope:end:abc \"$?\""))
        #expect(input.hasSuffix("printf '\\n%s\\n' hostscope:end:abc >&2\n"))
    }
}
