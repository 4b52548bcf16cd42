import CLibSSH2
import Foundation
import Synchronization
import ValueFormats

/// Drives one long-lived `sh` on a session channel (see ``SSHShell``) on the session's loop
/// thread: opens the channel, starts the shell, then writes queued scripts to its standard
/// input one at a time and reads each one's output up to its end lines
/// (``ShellRequestFraming``).
///
/// A script that outlives its deadline, is cancelled, or prints past its output limit ends the
/// shell (its process group is killed on the host): the next script could not be told apart
/// from what the old one still prints. A script that exits ends the shell too; its result is
/// reported as an exec channel's would be. Scripts still queued then fail with
/// ``SSHError/Code/shellUnavailable``, and the caller starts a new shell or uses exec.
// @unchecked Sendable: everything but `queue` and `cancellation` flags is touched only by the
// session's I/O thread once the operation is submitted (the session's inbox lock orders the
// hand-over).
final class ShellOperation: LoopOperation, @unchecked Sendable {
    struct Request {
        let script: String
        let timeout: Duration
        let outputLimit: Int
        let cancellation: CancellationFlag
        let continuation: CheckedContinuation<SSHExecResult, any Error>
    }

    /// Shared with the threads that submit scripts.
    private struct Queue {
        var requests: [Request] = []
        var closeRequested = false
        /// Set once the shell has ended; later scripts fail at once with it.
        var ended: SSHError?
        var started = false
    }

    private enum Phase {
        case opening
        case starting
        case running
        case closing
        case waitingForClose
        case freeing
        case finished
    }

    /// The script in progress.
    private struct Current {
        let request: Request
        var framing: ShellRequestFraming
        var input: [UInt8]
        var written = 0
        let started = ContinuousClock.now
        let deadline: ContinuousClock.Instant
    }

    /// What the login shell runs: it becomes the plain POSIX `sh` that reads scripts from stdin.
    /// The login shell sees only `exec sh`, which means the same in sh, bash, zsh, csh, tcsh and
    /// fish.
    static let startCommand = "exec sh"

    /// The first line the shell reads, before the first script: it reports the shell's pid (the
    /// login shell's, and its process group: sshd makes the login shell a session leader) on
    /// stderr. Sent as input rather than run by an `sh -c` that then becomes the reading shell,
    /// it costs the host one process start less per connection.
    static let pidLine = Array((ExecStateMachine.markedCommand(":") + "\n").utf8)

    private let queue = Lock(Queue())
    private let displayName: String
    private var phase: Phase = .opening
    private var channel: OpaquePointer?
    private var current: Current?
    private var shellPID: Int?
    /// ``pidLine`` has gone out, ahead of the first script.
    private var sentPIDLine = false
    /// Stderr read before the pid line, searched for it.
    private var stderrHead: [UInt8] = []
    private var killRequest: Int?
    /// Why the shell is ending; scripts still queued fail with it.
    private var ending: SSHError?
    private var startDeadline: ContinuousClock.Instant?
    private var closeStarted: ContinuousClock.Instant?
    private let closeCancellation = CancellationFlag()
    /// The I/O thread's read buffer is used for every read (see ``attach(to:)``): a buffer of its own
    /// would hold 64 KiB for each session of a large fleet.
    private var reactor: IOReactor?

    init(displayName: String, startTimeout: Duration) {
        self.displayName = displayName
        self.startDeadline = .now + startTimeout
    }

    // MARK: - Any thread

    /// Queues a script; fails it at once when the shell has ended.
    func enqueue(_ request: Request) {
        let ended: SSHError? = queue.withLock { queue in
            if let ended = queue.ended { return ended }
            queue.requests.append(request)
            return nil
        }
        if let ended { request.continuation.resume(throwing: ended) }
    }

    func requestClose() {
        queue.withLock { $0.closeRequested = true }
    }

    var hasEnded: Bool { queue.withLock { $0.ended != nil } }
    var hasStarted: Bool { queue.withLock { $0.started } }

    func attach(to reactor: IOReactor) { self.reactor = reactor }

    func requestCancel() { closeCancellation.set() }

    // MARK: - Loop thread

    var deadline: ContinuousClock.Instant? {
        switch phase {
        case .opening, .starting: startDeadline
        case .running: current?.deadline
        case .closing, .waitingForClose, .freeing: closeStarted
        case .finished: nil
        }
    }

    var wantsChannel: Bool { phase == .opening }
    var holdsChannel: Bool { channel != nil }

    var isWaitingForConsumer: Bool {
        phase == .running && current == nil && queue.withLock { $0.requests.isEmpty && !$0.closeRequested }
    }

    func takeKillRequest() -> Int? {
        defer { killRequest = nil }
        return killRequest
    }

    func hasQueuedData() -> Bool {
        guard let channel, phase == .running, current != nil else { return false }
        return LibSSH2.hasQueuedData(channel, stream: 0) || LibSSH2.hasQueuedData(channel, stream: 1)
    }

    func expire() {
        switch phase {
        case .opening, .starting:
            startClosing(SSHError(.shellUnavailable, "\(displayName): the shell for probes did not start in time"))
        case .running:
            guard let current else { return }
            self.current = nil
            current.request.continuation.resume(
                throwing: SSHError(
                    .timeout,
                    "\(displayName): the command did not finish within \(ExecOperation.describe(current.request.timeout)); it was stopped"
                ))
            killShell()
            startClosing(SSHError(.shellUnavailable, "\(displayName): the shell was stopped after a command timed out"))
        case .closing, .waitingForClose, .freeing, .finished:
            break
        }
    }

    func abandon(_ error: SSHError) {
        channel = nil
        if let current {
            self.current = nil
            current.request.continuation.resume(throwing: error)
        }
        finish(error)
    }

    func advance(_ session: OpaquePointer) -> Advance {
        var progressed = false
        while true {
            switch phase {
            case .opening:
                if closeCancellation.isSet || queue.withLock({ $0.closeRequested }) {
                    finish(SSHError(.shellUnavailable, "\(displayName): the shell was closed"))
                    return .finished
                }
                let opened = "session".withCString { type in
                    libssh2_channel_open_ex(session, type, UInt32(strlen(type)), 2 * 1024 * 1024, 32768, nil, 0)
                }
                guard let opened else {
                    let error = LibSSH2.lastError(session)
                    if error.code == LibSSH2.eagain { return progressed ? .progressed : .blocked }
                    if LibSSH2.isFatalTransportError(error.code) { return .sessionBroken(broken(error)) }
                    finish(
                        SSHError(
                            .shellUnavailable,
                            "\(displayName): cannot open a channel for the probe shell: \(error.message)",
                            libssh2Code: error.code))
                    return .finished
                }
                channel = opened
                phase = .starting
            case .starting:
                let result = Self.startCommand.withCString { text in
                    "exec".withCString { request in
                        libssh2_channel_process_startup(
                            channel, request, UInt32(strlen(request)), text, UInt32(strlen(text)))
                    }
                }
                if result == LibSSH2.eagain { return progressed ? .progressed : .blocked }
                if LibSSH2.isFatalTransportError(result) { return .sessionBroken(broken(LibSSH2.lastError(session))) }
                if result != 0 {
                    startClosing(
                        SSHError(
                            .shellUnavailable, "\(displayName): the server refused to start the probe shell",
                            libssh2Code: result))
                } else {
                    startDeadline = nil
                    phase = .running
                    queue.withLock { $0.started = true }
                }
            case .running:
                let step = run(session)
                switch step {
                case .progressed: progressed = true
                case .blocked: return progressed ? .progressed : .blocked
                case .sessionBroken, .finished: return step
                }
            case .closing:
                let result = libssh2_channel_close(channel)
                if result == LibSSH2.eagain { return progressed ? .progressed : .blocked }
                if LibSSH2.isFatalTransportError(result) { return .sessionBroken(broken(LibSSH2.lastError(session))) }
                phase = current == nil ? .freeing : .waitingForClose
            case .waitingForClose:
                let result = libssh2_channel_wait_closed(channel)
                if result == LibSSH2.eagain { return progressed ? .progressed : .blocked }
                if LibSSH2.isFatalTransportError(result) { return .sessionBroken(broken(LibSSH2.lastError(session))) }
                completeWithExit(session)
                phase = .freeing
            case .freeing:
                let result = libssh2_channel_free(channel)
                if result == LibSSH2.eagain { return progressed ? .progressed : .blocked }
                channel = nil
                finish(ending ?? SSHError(.shellUnavailable, "\(displayName): the probe shell ended"))
                return .finished
            case .finished:
                return .finished
            }
            progressed = true
        }
    }

    /// One pass of the running shell: start the next script, write its input, read its output.
    private func run(_ session: OpaquePointer) -> Advance {
        guard let channel else { return .blocked }
        // Taken out while it is worked on, so that its output buffer has one owner and grows in place
        // (a copy left in `self.current` would make every read copy all the output so far).
        if var current = current.take() {
            if current.request.cancellation.isSet || closeCancellation.isSet {
                current.request.continuation.resume(throwing: CancellationError())
                killShell()
                startClosing(
                    SSHError(.shellUnavailable, "\(displayName): the shell was stopped when a command was cancelled"))
                return .progressed
            }
            var progressed = false
            while current.written < current.input.count {
                let count = current.input[current.written...].withUnsafeBufferPointer { bytes in
                    bytes.withMemoryRebound(to: CChar.self) { chars in
                        libssh2_channel_write_ex(channel, 0, chars.baseAddress, chars.count)
                    }
                }
                if count == LibSSH2.eagain { break }
                if count < 0 {
                    let code = Int32(truncatingIfNeeded: count)
                    if LibSSH2.isFatalTransportError(code) {
                        self.current = current
                        return .sessionBroken(broken(LibSSH2.lastError(session)))
                    }
                    // The shell's stdin is closed: it has exited; its end is read below.
                    current.written = current.input.count
                    break
                }
                current.written += count
                progressed = true
            }
            // Reads went on until the socket had nothing more, so they need no second pass (the
            // loop's `hasQueuedData` check covers packets libssh2 queued meanwhile); only a write
            // counts as progress.
            var read = false
            if case .sessionBroken(let error) = readAvailable(session, into: &current.framing, progressed: &read) {
                self.current = current
                return .sessionBroken(error)
            }
            if current.framing.isFinished {
                let framing = current.framing
                current.request.continuation.resume(
                    returning: SSHExecResult(
                        stdout: framing.stdout, stderr: framing.stderr, exitStatus: framing.exitStatus,
                        exitSignal: nil, truncated: framing.truncated, stdoutBytes: framing.stdoutBytes,
                        stderrBytes: framing.stderrBytes, duration: current.started.duration(to: .now)))
                if framing.truncated {
                    killShell()
                    startClosing(
                        SSHError(.shellUnavailable, "\(displayName): the shell was stopped after too much output"))
                }
                return .progressed
            }
            self.current = current
            if libssh2_channel_eof(channel) != 0 {
                // The script ended the shell (`exit`, a syntax error); report it as exec would.
                startClosing(SSHError(.shellUnavailable, "\(displayName): the probe shell exited"))
                return .progressed
            }
            return progressed ? .progressed : .blocked
        }
        if closeCancellation.isSet || queue.withLock({ $0.closeRequested && $0.requests.isEmpty }) {
            startClosing(SSHError(.shellUnavailable, "\(displayName): the shell was closed"))
            return .progressed
        }
        guard let request = queue.withLock({ $0.requests.isEmpty ? nil : $0.requests.removeFirst() }) else {
            return .blocked
        }
        if request.cancellation.isSet {
            request.continuation.resume(throwing: CancellationError())
            return .progressed
        }
        // Whatever arrived between scripts (nothing, from a well-behaved script) is dropped.
        var ignored = ShellRequestFraming(nonce: "", outputLimit: 0)
        var drained = false
        _ = readAvailable(session, into: &ignored, progressed: &drained)
        let framing = ShellRequestFraming(nonce: Hex.randomNonce(), outputLimit: request.outputLimit)
        var input = framing.input(for: request.script)
        if !sentPIDLine {
            input = Self.pidLine + input
            sentPIDLine = true
        }
        current = Current(request: request, framing: framing, input: input, deadline: .now + request.timeout)
        return .progressed
    }

    /// Reads both streams until libssh2 has nothing more for this channel right now.
    private func readAvailable(
        _ session: OpaquePointer, into framing: inout ShellRequestFraming, progressed: inout Bool
    ) -> Advance {
        guard let reactor else { return .blocked }
        for (streamID, stream) in [(Int32(0), ShellRequestFraming.Stream.stdout), (1, .stderr)] {
            let outcome = LibSSH2.drain(
                channel, stream: streamID, buffer: &reactor.readBuffer, queuedOnly: streamID == 1
            ) {
                chunk in
                if stream == .stderr && shellPID == nil {
                    scanForPID(chunk, into: &framing)
                } else {
                    framing.received(chunk, on: stream)
                }
            }
            switch outcome {
            case .progressed: progressed = true
            case .idle: break
            case .broken: return .sessionBroken(broken(LibSSH2.lastError(session)))
            }
        }
        return progressed ? .progressed : .blocked
    }

    /// Looks for the pid line at the start of stderr; a login shell's start-up files may print
    /// before it. What follows it belongs to the script.
    private func scanForPID(_ chunk: UnsafeBufferPointer<UInt8>, into framing: inout ShellRequestFraming) {
        stderrHead.append(contentsOf: chunk)
        if let (pid, line) = ExecStateMachine.pidLine(in: stderrHead) {
            shellPID = pid
            let rest = Array(stderrHead[line.upperBound...])
            stderrHead = []
            rest.withUnsafeBufferPointer { framing.received($0, on: .stderr) }
            return
        }
        if stderrHead.count > 4096 {
            // No pid line: the shell cannot be killed on a timeout, but it still runs scripts.
            shellPID = -1
            let head = stderrHead
            stderrHead = []
            head.withUnsafeBufferPointer { framing.received($0, on: .stderr) }
        }
    }

    private func killShell() {
        if let shellPID, shellPID > 0 { killRequest = shellPID }
    }

    private func startClosing(_ reason: SSHError) {
        if ending == nil { ending = reason }
        closeStarted = .now
        phase = channel == nil ? .finished : .closing
        if phase == .finished { finish(reason) }
    }

    /// The shell exited while a script ran: that script's result carries the exit status.
    private func completeWithExit(_ session: OpaquePointer) {
        guard let current else { return }
        self.current = nil
        let exit = LibSSH2.exitStatus(of: channel, session: session)
        let framing = current.framing
        current.request.continuation.resume(
            returning: SSHExecResult(
                stdout: framing.stdout, stderr: framing.stderr, exitStatus: exit.status,
                exitSignal: exit.signal, truncated: false, stdoutBytes: framing.stdoutBytes,
                stderrBytes: framing.stderrBytes, duration: current.started.duration(to: .now)))
    }

    /// Marks the shell ended and fails every script still queued.
    private func finish(_ error: SSHError) {
        phase = .finished
        let pending = queue.withLock { queue in
            if queue.ended == nil { queue.ended = error }
            defer { queue.requests = [] }
            return queue.requests
        }
        for request in pending { request.continuation.resume(throwing: error) }
    }

    private func broken(_ error: (code: Int32, message: String)) -> SSHError {
        SSHError(
            .sessionClosed, "\(displayName): the connection broke while running a command (\(error.message))",
            libssh2Code: error.code)
    }
}
