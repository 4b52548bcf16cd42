public import HostStats
public import SSHTransport
import ValueFormats

/// One host's SSH session, kept between commands and reopened when it breaks.
///
/// It is the ``CommandRunner`` the collectors use for remote hosts: SSH failures come out as
/// ``CollectionError`` values already classified for the error record (`connect`, `auth`,
/// `host_key`, `timeout`, `command`).
public actor HostConnection: CommandRunner {
    public let options: SSHConnectionOptions
    private let maxChannels: Int
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

    public init(options: SSHConnectionOptions, maxChannels: Int = 10) {
        self.options = options
        self.maxChannels = maxChannels
    }

    /// The live session, connecting first if there is none or the last one broke.
    public func connectedSession() async throws -> SSHSession {
        if let session, session.isAlive { return session }
        if let connecting { return try await connecting.value }
        session = nil
        let task = Task { [options, maxChannels] in try await SSHTracing.connect(options, maxChannels: maxChannels) }
        connecting = task
        defer { connecting = nil }
        do {
            let fresh = try await task.value
            session = fresh
            lastConnectionInfo = fresh.info
            connects += 1
            return fresh
        } catch {
            throw Self.classify(error)
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

    /// Closes the session, if any.
    public func close() async {
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
