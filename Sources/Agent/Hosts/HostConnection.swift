import HostStats
import SSHTransport

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
            let result = try await SSHTracing.exec(session, command, timeout: timeout)
            return CommandOutput(
                stdout: result.stdout, stderr: result.stderr, exitStatus: result.exitStatus,
                exitSignal: result.exitSignal, truncated: result.truncated,
                durationSeconds: Double(result.duration.components.seconds)
                    + Double(result.duration.components.attoseconds) / 1e18)
        } catch {
            // A command that timed out may mean a hung server rather than a slow command:
            // start the next command on a fresh connection.
            if let ssh = error as? SSHError, ssh.code == .timeout {
                self.session = nil
                await session.close()
            }
            if !session.isAlive { self.session = nil }
            throw Self.classify(error)
        }
    }

    /// Closes the session, if any.
    public func close() async {
        let current = session
        session = nil
        await current?.close()
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
