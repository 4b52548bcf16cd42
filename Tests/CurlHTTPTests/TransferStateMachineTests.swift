import Testing

@testable import CurlHTTP

@Suite("TransferStateMachine")
struct TransferStateMachineTests {
    typealias Machine = TransferStateMachine<String, String>

    let head = HTTPResponseHead(status: 200)
    let failure = HTTPError(code: .closed, message: "closed")

    @Test("A requester that waits before the head arrives is resumed with it")
    func headAfterWaiting() {
        var machine = Machine()
        guard case .wait = machine.waitForHead("requester") else {
            Issue.record("expected to wait")
            return
        }
        #expect(machine.receivedHead(head) == "requester")
        guard case .resume(_, .success(let delivered)) = machine.waitForHead("again") else {
            Issue.record("a later requester gets the head at once")
            return
        }
        #expect(delivered == head)
    }

    @Test("Chunks go straight to a waiting reader, otherwise they are buffered and read in order")
    func chunkDelivery() {
        var machine = Machine()
        _ = machine.receivedHead(head)
        guard case .wait = machine.nextChunk("reader") else {
            Issue.record("expected to wait")
            return
        }
        guard case .deliver("reader", [1]) = machine.receivedChunk([1]) else {
            Issue.record("expected direct delivery")
            return
        }
        guard case .accepted = machine.receivedChunk([2, 3]), case .accepted = machine.receivedChunk([4]) else {
            Issue.record("expected buffering")
            return
        }
        #expect(machine.bufferedBytes == 3)
        guard case .chunk([2, 3], false) = machine.nextChunk("r"), case .chunk([4], false) = machine.nextChunk("r")
        else {
            Issue.record("expected buffered chunks in order")
            return
        }
        let completion = machine.finished(nil)
        #expect(completion.chunk == nil)
        guard case .end = machine.nextChunk("r") else {
            Issue.record("expected the end")
            return
        }
    }

    @Test("A full buffer pauses receiving, and draining to the low mark asks once for a resume")
    func backpressure() {
        var machine = Machine(highWater: 4, lowWater: 2)
        _ = machine.receivedHead(head)
        guard case .accepted = machine.receivedChunk([1, 1]), case .accepted = machine.receivedChunk([2, 2]) else {
            Issue.record("expected buffering below the high mark")
            return
        }
        guard case .pause = machine.receivedChunk([3, 3]) else {
            Issue.record("expected a pause at the high mark")
            return
        }
        #expect(machine.isPaused)
        guard case .chunk([1, 1], resumeTransfer: true) = machine.nextChunk("r") else {
            Issue.record("expected a resume once drained to the low mark")
            return
        }
        #expect(!machine.isPaused)
        guard case .chunk([2, 2], resumeTransfer: false) = machine.nextChunk("r") else {
            Issue.record("expected no second resume")
            return
        }
    }

    @Test("A failure is reported after the chunks that arrived before it")
    func failureAfterBufferedChunks() {
        var machine = Machine()
        _ = machine.receivedHead(head)
        _ = machine.receivedChunk([9])
        #expect(machine.finished(failure).chunk == nil)
        guard case .chunk([9], _) = machine.nextChunk("r"), case .fail(let error) = machine.nextChunk("r") else {
            Issue.record("expected the chunk, then the failure")
            return
        }
        #expect(error == failure)
    }

    @Test("Cancelling fails the waiters, drops the buffer, asks for an abort once, and ignores the late outcome")
    func cancellation() {
        var machine = Machine()
        _ = machine.waitForHead("requester")
        let cancelled = HTTPError(code: .cancelled, message: "cancelled")
        let (completion, abort) = machine.cancel(cancelled)
        #expect(abort)
        #expect(completion.head?.0 == "requester")
        #expect(!machine.isRunning)
        guard case .abort = machine.receivedChunk([1]) else {
            Issue.record("chunks after a cancel abort the transfer")
            return
        }
        #expect(machine.receivedHead(head) == nil)
        #expect(machine.finished(nil).head == nil)
        #expect(machine.cancel(cancelled).abort == false)
        guard case .fail(let error) = machine.nextChunk("r") else {
            Issue.record("reading after a cancel fails")
            return
        }
        #expect(error.code == .cancelled)
    }

    @Test("A transfer that ends without a head fails its requester rather than leaving it waiting")
    func endWithoutHead() {
        var machine = Machine()
        _ = machine.waitForHead("requester")
        let completion = machine.finished(nil)
        guard case .failure(let error)? = completion.head?.1 else {
            Issue.record("expected the requester to fail")
            return
        }
        #expect(error.code == .internalError)
    }
}
