import HostscopeCore
import TerminalUI
import Testing

@Suite struct TransferProgressTests {
    @Test func aLineShowsPercentBytesSpeedAndTimeLeft() {
        let line = TransferProgress.line(
            name: "syslog", done: 50 << 20, total: 200 << 20, transferred: 50 << 20, elapsed: .seconds(2), width: 100)
        #expect(line == "syslog  25%  50.0 MiB of 200.0 MiB  25.0 MiB/s  0:06 left")
    }

    @Test func theFirstFifthOfASecondShowsNoSpeed() {
        let line = TransferProgress.line(
            name: "a", done: 1 << 20, total: 4 << 20, transferred: 1 << 20, elapsed: .milliseconds(150), width: 100)
        #expect(line == "a  25%  1.0 MiB of 4.0 MiB")
    }

    @Test func aFinishedTransferHasNoTimeLeft() {
        let line = TransferProgress.line(
            name: "a", done: 4 << 20, total: 4 << 20, transferred: 4 << 20, elapsed: .seconds(1), width: 100)
        #expect(line == "a  100%  4.0 MiB of 4.0 MiB  4.0 MiB/s")
    }

    @Test func aResumedTransferCountsOnlyThisRunsBytes() {
        // 150 MiB were in the partial file; 10 MiB arrived in 2 s.
        let line = TransferProgress.line(
            name: "a", done: 160 << 20, total: 200 << 20, transferred: 10 << 20, elapsed: .seconds(2), width: 100)
        #expect(line.hasSuffix("  5.0 MiB/s  0:08 left"))
    }

    @Test func aLongNameIsShortenedFromItsStartToFitTheWidth() {
        let name = String(repeating: "x", count: 80) + "-tail.log"
        let line = TransferProgress.line(
            name: name, done: 1, total: 2, transferred: 1, elapsed: .zero, width: 40)
        #expect(line.count == 39)
        #expect(line.hasPrefix("…") && line.contains("x-tail.log  50%"))
    }

    @Test func anEmptyFileIsComplete() {
        #expect(
            TransferProgress.line(name: "e", done: 0, total: 0, transferred: 0, elapsed: .zero, width: 80)
                == "e  100%  0 B of 0 B")
    }

    @Test func timeLeftIsMinutesAndSecondsThenHours() {
        #expect(TransferProgress.clock(5) == "0:05")
        #expect(TransferProgress.clock(65) == "1:05")
        #expect(TransferProgress.clock(3_725) == "1:02:05")
    }
}
