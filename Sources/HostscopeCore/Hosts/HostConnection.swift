public import HostStats
public import SSHTransport
import Synchronization
import ValueFormats

/// One host's SSH session, kept between commands and reopened when it breaks.
///
/// It is the ``CommandRunner`` the collectors use for remote hosts: SSH failures come out as
/// ``CollectionError`` values already classified for the error record (`connect`, `auth`,
/// `host_key`, `timeout`, `command`).
public actor HostConnection: CommandRunner {
    public let options: SSHConnectionOptions
    private let maxChannels: Int
    /// How long a command waits for the session to connect (a slot of the engine's handshake gate, then
    /// the connect itself) before it fails with a `timeout`; `nil` waits as long as the connect takes.
    /// The connect goes on either way, keeping its place in line, and the next command waits for it.
    public let connectWait: Duration?
    private var session: SSHSession?
    private var connecting: Task<SSHSession, any Error>?
    /// The long-lived shell probes run in, and the session it belongs to.
    private var probeShell: (session: SSHSession, shell: SSHShell)?
    /// Set when the server would not start a shell for probes: they use exec from then on.
    private var probeShellRefused = false
    /// How the latest session was established, for spans and `-v` output.
    public private(set) var lastConnectionInfo: SSHConnectionInfo?
    /// Times a broken session was replaced.
    public var reconnects: Int { max(0, connects - 1) }
    private var connects = 0

    /// Whether a live session is open now.
    public var isConnected: Bool { session?.isAlive ?? false }

    public init(options: SSHConnectionOptions, maxChannels: Int = 10, connectWait: Duration? = nil) {
        self.options = options
        self.maxChannels = maxChannels
        self.connectWait = connectWait
    }

    /// The live session, connecting first if there is none or the last one broke.
    ///
    /// With a ``connectWait``, a caller that waited that long gets a `timeout` error while the connect
    /// goes on: a watch's tick then has its record on time even when hundreds of hosts connect at once,
    /// and the host's next tick takes the session the moment it is up.
    public func connectedSession() async throws -> SSHSession {
        if let session, session.isAlive { return session }
        let task: Task<SSHSession, any Error>
        if let connecting {
            task = connecting
        } else {
            session = nil
            task = Task { [options, maxChannels] in try await SSHTracing.connect(options, maxChannels: maxChannels) }
            connecting = task
        }
        let outcome: Result<SSHSession, any Error>
        if let connectWait {
            guard let finished = await Self.result(of: task, waitingAtMost: connectWait) else {
                let gate = SSHEngine.shared.handshakes.counts
                throw CollectionError(
                    .timeout,
                    "\(options.displayName): not connected after \(FleetWatch.describe(connectWait.inSeconds)) (\(gate.running) "
                        + "connects under way, \(gate.waiting) waiting for one of the \(SSHEngine.shared.handshakes.limit) "
                        + "slots); the attempt goes on, and the next tick uses it")
            }
            outcome = finished
        } else {
            outcome = await task.result
        }
        if connecting == task { connecting = nil }
        switch outcome {
        case .success(let fresh):
            if session !== fresh, fresh.isAlive {
                session = fresh
                lastConnectionInfo = fresh.info
                connects += 1
            }
            return fresh
        case .failure(let error):
            throw Self.classify(error)
        }
    }

    /// The outcome of `task`, or `nil` once `limit` passed (or the caller was cancelled) first; the task
    /// itself is left to finish.
    private static func result(of task: Task<SSHSession, any Error>, waitingAtMost limit: Duration) async -> Result<
        SSHSession, any Error
    >? {
        let race = FirstAnswer<Result<SSHSession, any Error>>()
        return await withTaskCancellationHandler {
            await withCheckedContinuation {
                (continuation: CheckedContinuation<Result<SSHSession, any Error>?, Never>) in
                race.wait(continuation)
                let timer = Task {
                    // Cancelled once the connect is over: then the connect's outcome answers, not the timer.
                    guard (try? await Task.sleep(for: limit)) != nil else { return }
                    race.answer(nil)
                }
                Task {
                    let outcome = await task.result
                    timer.cancel()
                    race.answer(outcome)
                }
            }
        } onCancel: {
            race.answer(nil)
        }
    }

    public func run(_ command: String, timeout: Duration) async throws -> CommandOutput {
        let session = try await connectedSession()
        do {
            return Self.output(try await SSHTracing.exec(session, command, timeout: timeout))
        } catch {
            throw await failed(error, session: session)
        }
    }

    /// Runs a collector's probe in a long-lived shell on the session (``SSHShell``), opened on
    /// first use and kept while the session lives: a warm probe then costs no channel, exec
    /// request or shell start, only its own commands. If the server will not start that shell,
    /// probes run with exec, as other commands do.
    public func runProbe(_ script: String, timeout: Duration) async throws -> CommandOutput {
        let session = try await connectedSession()
        if probeShellRefused { return try await run(script, timeout: timeout) }
        let shell: SSHShell
        if let current = probeShell, current.session === session, current.shell.isAlive {
            shell = current.shell
        } else {
            probeShell?.shell.close()
            shell = session.openShell(startTimeout: options.connectTimeout)
            probeShell = (session, shell)
        }
        do {
            return Self.output(try await SSHTracing.run(shell, on: session, script, timeout: timeout))
        } catch let error as SSHError where error.code == .shellUnavailable {
            // The script did not run. A shell that never started will not start next time either.
            if !shell.didStart { probeShellRefused = true }
            if probeShell?.shell === shell { probeShell = nil }
            return try await run(script, timeout: timeout)
        } catch {
            if probeShell?.shell === shell { probeShell = nil }
            throw await failed(error, session: session)
        }
    }

    /// Closes the session, if any, and gives up a connect still waiting for its slot.
    public func close() async {
        connecting?.cancel()
        connecting = nil
        probeShell?.shell.close()
        probeShell = nil
        let current = session
        session = nil
        await current?.close()
    }

    private static func output(_ result: SSHExecResult) -> CommandOutput {
        CommandOutput(
            stdout: result.stdout, stderr: result.stderr, exitStatus: result.exitStatus,
            exitSignal: result.exitSignal, truncated: result.truncated,
            durationSeconds: result.duration.inSeconds)
    }

    /// Drops a session that may be hung or broken, and classifies the error.
    private func failed(_ error: any Error, session: SSHSession) async -> any Error {
        // A command that timed out may mean a hung server rather than a slow command:
        // start the next command on a fresh connection.
        if let ssh = error as? SSHError, ssh.code == .timeout {
            if self.session === session { self.session = nil }
            await session.close()
        }
        if !session.isAlive, self.session === session { self.session = nil }
        return Self.classify(error)
    }

    /// The error-record kind of an SSH failure, with its message kept.
    static func classify(_ error: any Error) -> any Error {
        guard let error = error as? SSHError else { return error }
        let kind: FailureKind
        switch error.code {
        case .timeout: kind = .timeout
        case .auth: kind = .auth
        case .hostKeyUnknown, .hostKeyChanged, .hostKeyFile: kind = .hostKey
        case .resolve, .connect, .handshake, .sessionClosed, .protocolError, .config: kind = .connect
        default: kind = .command
        }
        return CollectionError(kind, error.message)
    }
}

/// The first of several answers to one waiting continuation; later answers are dropped, and an answer
/// given before the wait starts is kept for it.
private final class FirstAnswer<Value: Sendable>: Sendable {
    private struct State: ~Copyable {
        var continuation: CheckedContinuation<Value?, Never>?
        var early: Value??
    }
    private let state = Lock(State(continuation: nil, early: nil))

    func wait(_ continuation: CheckedContinuation<Value?, Never>) {
        let early: Value?? = state.withLock { state in
            if let early = state.early { return .some(early) }
            state.continuation = continuation
            return nil
        }
        if let early { continuation.resume(returning: early) }
    }

    func answer(_ value: Value?) {
        let waiting: CheckedContinuation<Value?, Never>? = state.withLock { state in
            guard state.early == nil else { return nil }
            state.early = .some(value)
            defer { state.continuation = nil }
            return state.continuation
        }
        waiting?.resume(returning: value)
    }
}
