import Digests
import Testing

@testable import SSHTransport

@Suite struct ExecStateMachineTests {
    private func feed(_ machine: inout ExecStateMachine, _ text: String, on stream: ExecStateMachine.Stream) {
        Array(text.utf8).withUnsafeBufferPointer { machine.received($0, on: stream) }
    }

    private func running(limit: Int = 1024, marker: Bool = false) -> ExecStateMachine {
        var machine = ExecStateMachine(outputLimit: limit, expectsPIDMarker: marker)
        machine.channelOpened()
        machine.commandStarted()
        machine.eofSent()
        return machine
    }

    @Test func aNormalRunWalksEveryStepInOrder() {
        var machine = ExecStateMachine(outputLimit: 1024)
        var actions: [ExecStateMachine.Action] = [machine.nextAction]
        machine.channelOpened(); actions.append(machine.nextAction)
        machine.commandStarted(); actions.append(machine.nextAction)
        machine.eofSent(); actions.append(machine.nextAction)
        feed(&machine, "hello\n", on: .stdout)
        machine.remoteFinished(); actions.append(machine.nextAction)
        machine.channelClosed(); actions.append(machine.nextAction)
        machine.closeConfirmed(); actions.append(machine.nextAction)
        machine.exitStatusCollected(status: 0, signal: nil); actions.append(machine.nextAction)
        machine.channelFreed(); actions.append(machine.nextAction)
        #expect(
            actions == [
                .openChannel, .startCommand, .sendEOF, .read, .closeChannel, .waitForClose, .collectExitStatus,
                .freeChannel, .complete,
            ])
        #expect(machine.ending == .completed)
        #expect(machine.stdout == Array("hello\n".utf8))
        #expect(machine.exitStatus == 0)
    }

    @Test func outputPastTheLimitIsCountedDroppedAndClosesTheChannel() {
        var machine = running(limit: 8)
        feed(&machine, "12345", on: .stdout)
        feed(&machine, "abcdef", on: .stderr)
        #expect(machine.stdout == Array("12345".utf8))
        #expect(machine.stderr == Array("abc".utf8))
        #expect(machine.stderrBytes == 6)
        #expect(machine.ending == .truncated)
        #expect(machine.nextAction == .closeChannel)
        feed(&machine, "more", on: .stdout)
        #expect(machine.stdoutBytes == 9)
        #expect(machine.stdout.count == 5)
        machine.channelClosed()
        // A truncated command has no exit status worth waiting for.
        #expect(machine.nextAction == .freeChannel)
    }

    @Test func aDeadlineWhileRunningClosesAndRequestsAKillOnceThePIDIsKnown() {
        var machine = running(marker: true)
        feed(&machine, "hostscope:pid=4242\nreal error\n", on: .stderr)
        #expect(machine.remotePID == 4242)
        #expect(machine.stderr == Array("real error\n".utf8))
        machine.deadlinePassed()
        #expect(machine.ending == .timedOut)
        #expect(machine.nextAction == .closeChannel)
        #expect(machine.takeKillRequest() == 4242)
        #expect(machine.takeKillRequest() == nil)
    }

    @Test func thePIDLineIsFoundAfterStartUpNoiseAndSplitAcrossReads() {
        var machine = running(marker: true)
        feed(&machine, "bashrc says hi\nhostscope:p", on: .stderr)
        feed(&machine, "id=77\nafter", on: .stderr)
        #expect(machine.remotePID == 77)
        machine.remoteFinished()
        #expect(machine.stderr == Array("bashrc says hi\nafter".utf8))
    }

    @Test func stderrWithoutAMarkerIsKeptWhole() {
        var machine = running(marker: true)
        feed(&machine, "no marker here", on: .stderr)
        #expect(machine.stderr.isEmpty)
        machine.remoteFinished()
        #expect(machine.stderr == Array("no marker here".utf8))
        #expect(machine.remotePID == nil)
    }

    @Test func cancellingBeforeTheChannelOpensFinishesAtOnce() {
        var machine = ExecStateMachine(outputLimit: 16)
        machine.cancel()
        #expect(machine.ending == .cancelled)
        #expect(machine.nextAction == .complete)
        #expect(!machine.holdsChannel)
    }

    @Test func aFailureWithAChannelFreesItAndKeepsTheError() {
        var machine = running()
        let error = SSHError(.channel, "boom")
        machine.failed(error)
        #expect(machine.nextAction == .freeChannel)
        machine.channelFreed()
        #expect(machine.ending == .failed(error))
        #expect(machine.isFinished)
    }

    @Test func aCompletedCommandKeepsItsResultWhenTheDeadlinePassesDuringClose() {
        var machine = running()
        machine.remoteFinished()
        machine.deadlinePassed()
        #expect(machine.ending == .completed)
        #expect(machine.nextAction == .closeChannel)
    }

    @Test func markedCommandsEchoThePIDFirst() {
        #expect(ExecStateMachine.markedCommand("uptime") == "echo hostscope:pid=$$ >&2; uptime")
    }
}

@Suite struct SHA256Tests {
    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        (
            "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        ),
    ])
    func digestsMatchTheStandardVectors(input: String, hex: String) {
        #expect(SHA256.hex(SHA256.hash(Array(input.utf8))) == hex)
    }

    @Test func aCopiedHasherFinishesIndependently() {
        var first = SHA256()
        first.update(Array("ab".utf8))
        var second = first
        second.update(Array("c".utf8))
        #expect(first.finalize() == SHA256.hash(Array("ab".utf8)))
        #expect(SHA256.hex(second.finalize()) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    @Test func incrementalUpdatesEqualOneShot() {
        let data = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        var hasher = SHA256()
        for chunk in stride(from: 0, to: data.count, by: 37) {
            hasher.update(Array(data[chunk..<min(chunk + 37, data.count)]))
        }
        #expect(hasher.finalize() == SHA256.hash(data))
    }
}
