import CLibSSH2
import Foundation
import ValueFormats

/// Drives one ``ExecStateMachine`` with libssh2 on the session's I/O thread.
// @unchecked Sendable: `machine`, `channel` and `continuation` are touched only by the loop
// thread once the operation is submitted (the inbox lock orders the hand-over); cancellation
// goes through `cancellation`, which has its own lock.
final class ExecOperation: LoopOperation, @unchecked Sendable {
    let command: String
    let deadline: ContinuousClock.Instant?
    private let displayName: String
    private let timeout: Duration
    private let started = ContinuousClock.now
    private var machine: ExecStateMachine
    private var channel: OpaquePointer?
    /// `nil` for the session's own housekeeping commands, whose results nobody awaits.
    private var continuation: CheckedContinuation<SSHExecResult, any Error>?
    /// Housekeeping commands may open a channel even when the session is at its limit.
    let bypassesChannelLimit: Bool
    private let cancellation = CancellationFlag()
    private var cancelHandled = false
    /// Set when the server refused to open a channel because too many were open; the loop
    /// retries once another channel of the session closes.
    private(set) var refusedForCapacity = false

    /// The I/O thread's read buffer is used for every read (see ``attach(to:)``): a buffer of its own
    /// would hold 64 KiB for each session of a large fleet.
    private var reactor: IOReactor?

    /// - Parameter killOnTimeout: wrap the command so that it reports its pid and can be
    ///   killed on the host when it outlives its deadline or is cancelled.
    init(
        command: String, timeout: Duration, outputLimit: Int, displayName: String, killOnTimeout: Bool = true,
        continuation: CheckedContinuation<SSHExecResult, any Error>?
    ) {
        self.command = killOnTimeout ? ExecStateMachine.markedCommand(command) : command
        self.timeout = timeout
        self.deadline = .now + timeout
        self.displayName = displayName
        self.machine = ExecStateMachine(outputLimit: outputLimit, expectsPIDMarker: killOnTimeout)
        self.continuation = continuation
        self.bypassesChannelLimit = continuation == nil
    }

    /// A fire-and-forget command that ends the process group of a stuck command: TERM now,
    /// KILL two seconds later from a detached shell, so this channel closes at once.
    static func killer(pid: Int, displayName: String) -> ExecOperation {
        let command =
            "kill -TERM -\(pid) 2>/dev/null || kill -TERM \(pid) 2>/dev/null; "
            + "(sleep 2; kill -KILL -\(pid) 2>/dev/null || kill -KILL \(pid) 2>/dev/null) >/dev/null 2>&1 </dev/null &"
        return ExecOperation(
            command: command, timeout: .seconds(10), outputLimit: 4096, displayName: displayName, killOnTimeout: false,
            continuation: nil)
    }

    /// The pid of a stuck command to kill, handed out once.
    func takeKillRequest() -> Int? {
        machine.takeKillRequest()
    }

    var wantsChannel: Bool { machine.state == .opening && !refusedForCapacity && !bypassesChannelLimit }
    var holdsChannel: Bool { channel != nil }

    func attach(to reactor: IOReactor) { self.reactor = reactor }

    func requestCancel() { cancellation.set() }

    func retryChannel() { refusedForCapacity = false }

    /// The server refused a channel while none of the session's were open: a real refusal.
    func failChannelRefused() {
        refusedForCapacity = false
        machine.failed(
            SSHError(
                .channel, "\(displayName): the server refused to open a session channel (check sshd's MaxSessions)"))
    }

    func hasQueuedData() -> Bool {
        guard let channel, machine.state == .reading else { return false }
        return LibSSH2.hasQueuedData(channel, stream: 0) || LibSSH2.hasQueuedData(channel, stream: 1)
    }

    func expire() {
        machine.deadlinePassed()
    }

    func abandon(_ error: SSHError) {
        machine.abandon(error)
        channel = nil
        complete()
    }

    func advance(_ session: OpaquePointer) -> Advance {
        if cancellation.isSet && !cancelHandled {
            cancelHandled = true
            machine.cancel()
        }
        var progressed = false
        while true {
            let before = machine.state
            switch machine.nextAction {
            case .openChannel:
                let opened = "session".withCString { type in
                    libssh2_channel_open_ex(
                        session, type, UInt32(strlen(type)), 2 * 1024 * 1024, 32768, nil, 0)
                }
                if let opened {
                    channel = opened
                    machine.channelOpened()
                } else {
                    let error = LibSSH2.lastError(session)
                    if error.code == LibSSH2.eagain { return progressed ? .progressed : .blocked }
                    if LibSSH2.isFatalTransportError(error.code) { return .sessionBroken(broken(error)) }
                    if error.code == Int32(LIBSSH2_ERROR_CHANNEL_FAILURE) {
                        // sshd answers "administratively prohibited" past MaxSessions; wait
                        // for a sibling channel to close instead of failing the command.
                        refusedForCapacity = true
                        return .progressed
                    }
                    machine.failed(
                        SSHError(
                            .channel, "\(displayName): cannot open a channel: \(error.message)",
                            libssh2Code: error.code))
                }
            case .startCommand:
                let result = command.withCString { text in
                    "exec".withCString { request in
                        libssh2_channel_process_startup(
                            channel, request, UInt32(strlen(request)), text, UInt32(strlen(text)))
                    }
                }
                if result == LibSSH2.eagain { return progressed ? .progressed : .blocked }
                if result != 0 {
                    let error = LibSSH2.lastError(session)
                    if LibSSH2.isFatalTransportError(result) { return .sessionBroken(broken(error)) }
                    machine.failed(
                        SSHError(
                            .channel, "\(displayName): the server refused to run the command: \(error.message)",
                            libssh2Code: result))
                } else {
                    machine.commandStarted()
                }
            case .sendEOF:
                let result = libssh2_channel_send_eof(channel)
                if result == LibSSH2.eagain { return progressed ? .progressed : .blocked }
                if LibSSH2.isFatalTransportError(result) { return .sessionBroken(broken(LibSSH2.lastError(session))) }
                // A refused EOF (the remote already closed its side) is not an error.
                machine.eofSent()
            case .read:
                switch readAvailable(session) {
                case .sessionBroken(let error): return .sessionBroken(error)
                case .progressed: progressed = true
                default: break
                }
                if machine.state == .reading {
                    if libssh2_channel_eof(channel) != 0 {
                        machine.remoteFinished()
                    } else {
                        return progressed ? .progressed : .blocked
                    }
                }
            case .closeChannel:
                let result = libssh2_channel_close(channel)
                if result == LibSSH2.eagain { return progressed ? .progressed : .blocked }
                if LibSSH2.isFatalTransportError(result) { return .sessionBroken(broken(LibSSH2.lastError(session))) }
                machine.channelClosed()
            case .waitForClose:
                let result = libssh2_channel_wait_closed(channel)
                if result == LibSSH2.eagain { return progressed ? .progressed : .blocked }
                if LibSSH2.isFatalTransportError(result) { return .sessionBroken(broken(LibSSH2.lastError(session))) }
                machine.closeConfirmed()
            case .collectExitStatus:
                let exit = LibSSH2.exitStatus(of: channel, session: session)
                machine.exitStatusCollected(status: exit.status, signal: exit.signal)
            case .freeChannel:
                let result = libssh2_channel_free(channel)
                if result == LibSSH2.eagain { return progressed ? .progressed : .blocked }
                channel = nil
                machine.channelFreed()
            case .complete:
                complete()
                return .finished
            }
            if machine.state != before { progressed = true }
        }
    }

    /// Reads both streams until libssh2 has nothing more for this channel right now.
    private func readAvailable(_ session: OpaquePointer) -> Advance {
        guard let reactor else { return .blocked }
        var progressed = false
        for (streamID, stream) in [(Int32(0), ExecStateMachine.Stream.stdout), (1, .stderr)] {
            let outcome = LibSSH2.drain(
                channel, stream: streamID, buffer: &reactor.readBuffer, queuedOnly: streamID == 1,
                while: { machine.state == .reading }
            ) {
                machine.received($0, on: stream)
            }
            switch outcome {
            case .progressed: progressed = true
            case .idle: break
            case .broken: return .sessionBroken(broken(LibSSH2.lastError(session)))
            }
        }
        return progressed ? .progressed : .blocked
    }

    private func broken(_ error: (code: Int32, message: String)) -> SSHError {
        SSHError(
            .sessionClosed, "\(displayName): the connection broke while running a command (\(error.message))",
            libssh2Code: error.code)
    }

    private func complete() {
        guard let continuation else { return }
        self.continuation = nil
        let duration = started.duration(to: .now)
        switch machine.ending {
        case .completed?, .truncated?:
            continuation.resume(
                returning: SSHExecResult(
                    stdout: machine.stdout, stderr: machine.stderr, exitStatus: machine.exitStatus,
                    exitSignal: machine.exitSignal, truncated: machine.ending == .truncated,
                    stdoutBytes: machine.stdoutBytes, stderrBytes: machine.stderrBytes, duration: duration))
        case .timedOut?:
            continuation.resume(
                throwing: SSHError(
                    .timeout,
                    "\(displayName): the command did not finish within \(Self.describe(timeout)); it was stopped"))
        case .cancelled?:
            continuation.resume(throwing: CancellationError())
        case .failed(let error)?:
            continuation.resume(throwing: error)
        case nil:
            continuation.resume(
                throwing: SSHError(.sessionClosed, "\(displayName): the session closed before the command finished"))
        }
    }

    static func describe(_ duration: Duration) -> String {
        let seconds = duration.inSeconds
        if seconds < 1 { return "\(Int((seconds * 1000).rounded())) ms" }
        if seconds == seconds.rounded() { return "\(Int(seconds)) s" }
        return String(format: "%.1f s", seconds)
    }
}
