/// The life of one exec channel, as a value type: events in, the next action out.
///
/// The driver (``ExecOperation``) performs each action with libssh2 and reports what happened;
/// this type decides what comes next, enforces the output cap, and turns timeouts,
/// cancellation and failures into a single outcome. It holds no C state, so every path through
/// it is tested without a server.
struct ExecStateMachine {
    enum State: Equatable {
        case opening
        case starting
        case sendingEOF
        case reading
        case closing
        case waitingForClose
        case collectingStatus
        case freeing
        case finished
    }

    enum Action: Equatable {
        case openChannel
        case startCommand
        case sendEOF
        case read
        case closeChannel
        case waitForClose
        case collectExitStatus
        case freeChannel
        case complete
    }

    enum Stream {
        case stdout
        case stderr
    }

    /// Why the channel is being wound down.
    enum Ending: Equatable {
        case completed
        case truncated
        case timedOut
        case cancelled
        case failed(SSHError)
    }

    private(set) var state: State = .opening
    private(set) var ending: Ending?
    let outputLimit: Int
    private(set) var stdout: [UInt8] = []
    private(set) var stderr: [UInt8] = []
    private(set) var stdoutBytes = 0
    private(set) var stderrBytes = 0
    private(set) var exitStatus: Int32?
    private(set) var exitSignal: String?

    /// The line the remote shell writes first on stderr to report its pid (see
    /// ``markedCommand(_:)``), so that a command past its deadline can be killed.
    static let pidMarker = Array("hostscope:pid=".utf8)
    /// The remote shell's pid, which is also its process group (sshd makes it a session leader).
    private(set) var remotePID: Int?
    /// Stderr held back until the pid line has been seen (or ruled out).
    private var stderrHead: [UInt8] = []
    private var lookingForPID: Bool
    /// Set when the command must be killed on the host: it outlived its deadline or was
    /// cancelled while running.
    private(set) var killRequested = false

    /// - Parameters:
    ///   - outputLimit: the most bytes kept of stdout and stderr together.
    ///   - expectsPIDMarker: whether the command was wrapped by ``markedCommand(_:)``.
    init(outputLimit: Int, expectsPIDMarker: Bool = false) {
        self.outputLimit = outputLimit
        self.lookingForPID = expectsPIDMarker
    }

    /// `command` preceded by a line on stderr naming the shell's pid.
    static func markedCommand(_ command: String) -> String {
        "echo \(String(decoding: pidMarker, as: UTF8.self))$$ >&2; \(command)"
    }

    /// Hands out the pid to kill, once.
    mutating func takeKillRequest() -> Int? {
        guard killRequested, let remotePID else { return nil }
        killRequested = false
        return remotePID
    }

    var nextAction: Action {
        switch state {
        case .opening: .openChannel
        case .starting: .startCommand
        case .sendingEOF: .sendEOF
        case .reading: .read
        case .closing: .closeChannel
        case .waitingForClose: .waitForClose
        case .collectingStatus: .collectExitStatus
        case .freeing: .freeChannel
        case .finished: .complete
        }
    }

    /// Whether a libssh2 channel exists that must still be freed.
    var holdsChannel: Bool {
        switch state {
        case .opening, .finished: false
        default: true
        }
    }

    var isFinished: Bool { state == .finished }

    mutating func channelOpened() {
        guard state == .opening else { return }
        state = .starting
    }

    mutating func commandStarted() {
        guard state == .starting else { return }
        state = .sendingEOF
    }

    mutating func eofSent() {
        guard state == .sendingEOF else { return }
        state = .reading
    }

    /// Output arrived. Past the limit, the rest is counted but dropped, and the channel closes
    /// so that a runaway command cannot hold the session.
    mutating func received(_ bytes: UnsafeBufferPointer<UInt8>, on stream: Stream) {
        if stream == .stderr && lookingForPID {
            stderrHead.append(contentsOf: bytes)
            scanForPID()
            return
        }
        keep(bytes, on: stream)
    }

    /// Looks for the pid line among the first lines of stderr; a login shell's start-up files
    /// may print before it.
    private mutating func scanForPID() {
        if let (pid, line) = Self.pidLine(in: stderrHead) {
            remotePID = pid
            stderrHead.removeSubrange(line)
            flushStderrHead()
            return
        }
        if stderrHead.count > 4096 { flushStderrHead() }
    }

    /// The pid named by the first complete pid line in `bytes`, and that line's range with its
    /// newline.
    static func pidLine(in bytes: [UInt8]) -> (pid: Int, line: Range<Int>)? {
        var lineStart = 0
        while let newline = bytes[lineStart...].firstIndex(of: UInt8(ascii: "\n")) {
            let line = bytes[lineStart..<newline]
            if line.starts(with: pidMarker),
                let pid = Int(String(decoding: line.dropFirst(pidMarker.count), as: UTF8.self))
            {
                return (pid, lineStart..<(newline + 1))
            }
            lineStart = newline + 1
        }
        return nil
    }

    private mutating func flushStderrHead() {
        lookingForPID = false
        let head = stderrHead
        stderrHead = []
        head.withUnsafeBufferPointer { keep($0, on: .stderr) }
    }

    private mutating func keep(_ bytes: UnsafeBufferPointer<UInt8>, on stream: Stream) {
        switch stream {
        case .stdout: stdoutBytes += bytes.count
        case .stderr: stderrBytes += bytes.count
        }
        guard ending == nil else { return }
        let room = outputLimit - stdout.count - stderr.count
        if bytes.count <= room {
            switch stream {
            case .stdout: stdout.append(contentsOf: bytes)
            case .stderr: stderr.append(contentsOf: bytes)
            }
            return
        }
        if room > 0 {
            switch stream {
            case .stdout: stdout.append(contentsOf: bytes[0..<room])
            case .stderr: stderr.append(contentsOf: bytes[0..<room])
            }
        }
        ending = .truncated
        state = .closing
    }

    /// The remote side sent EOF and every queued byte has been read.
    mutating func remoteFinished() {
        guard state == .reading || state == .sendingEOF, ending == nil else { return }
        if lookingForPID { flushStderrHead() }
        guard ending == nil else { return }
        ending = .completed
        state = .closing
    }

    mutating func channelClosed() {
        guard state == .closing else { return }
        // Only a command that ran to its end has an exit status worth waiting for.
        state = ending == .completed ? .waitingForClose : .freeing
    }

    mutating func closeConfirmed() {
        guard state == .waitingForClose else { return }
        state = .collectingStatus
    }

    mutating func exitStatusCollected(status: Int32?, signal: String?) {
        guard state == .collectingStatus else { return }
        exitStatus = status
        exitSignal = signal
        state = .freeing
    }

    mutating func channelFreed() {
        guard state == .freeing else { return }
        state = .finished
    }

    mutating func deadlinePassed() {
        windDown(.timedOut)
    }

    mutating func cancel() {
        windDown(.cancelled)
    }

    /// A libssh2 call failed. The channel, if any, is freed without a graceful close.
    mutating func failed(_ error: SSHError) {
        guard state != .finished else { return }
        if ending == nil || ending == .completed { ending = .failed(error) }
        // A failure while freeing ends it: libssh2 releases the channel with the session.
        state = holdsChannel && state != .freeing ? .freeing : .finished
    }

    /// The session is gone: libssh2 frees its channels with it, so nothing is left to do.
    mutating func abandon(_ error: SSHError) {
        guard state != .finished else { return }
        if ending == nil || (ending == .completed && exitStatus == nil) { ending = .failed(error) }
        state = .finished
    }

    private mutating func windDown(_ reason: Ending) {
        guard state != .finished else { return }
        switch state {
        case .opening:
            ending = reason
            state = .finished
        case .closing, .waitingForClose, .collectingStatus, .freeing:
            // Already on the way out; a command that completed keeps its result unless the
            // wind-down itself stalls, in which case the reason replaces it.
            if ending == .completed && (state == .waitingForClose || state == .collectingStatus) {
                ending = reason
                state = .freeing
            } else if ending == nil {
                ending = reason
            }
        default:
            ending = reason
            state = .closing
            // The server keeps a channel open while its process lives; end the process.
            killRequested = true
        }
    }
}
