import Synchronization
import ValueFormats

/// An authenticated SSH connection to one host, on which commands run concurrently.
///
/// The session is driven by one of the ``SSHEngine``'s I/O threads (see the module's design
/// notes); this object is a thread-safe handle to it. Close it with ``close()`` — or use
/// ``withSSHSession(_:_:)``, which always does. A session dropped without `close()` is closed
/// as well.
///
/// ```swift
/// let result = try await withSSHSession(options) { session in
///     try await session.exec("uname -a", timeout: .seconds(10))
/// }
/// ```
public final class SSHSession: Sendable {
    /// How the session was established.
    public let info: SSHConnectionInfo
    public let options: SSHConnectionOptions
    let loop: SessionLoop

    private init(loop: SessionLoop, info: SSHConnectionInfo) {
        self.loop = loop
        self.info = info
        self.options = loop.options
    }

    deinit {
        loop.requestShutdown()
    }

    /// Connects, checks the host key and authenticates.
    ///
    /// - Parameters:
    ///   - maxChannels: how many commands may run at once; more wait their turn. OpenSSH's
    ///     `MaxSessions` defaults to 10, and a server that refuses a channel for that reason
    ///     lowers the limit for this session instead of failing the command.
    ///   - engine: the I/O threads that drive the session; the connect first waits for a slot of
    ///     its ``SSHEngine/handshakes`` gate, and ``SSHConnectionOptions/connectTimeout`` counts
    ///     from then.
    /// - Throws: ``SSHError`` naming the host and what to do.
    public static func connect(
        _ options: SSHConnectionOptions, maxChannels: Int = 10, engine: SSHEngine = .shared
    ) async throws -> SSHSession {
        let (loop, info) = try await SessionLoop.connect(options, maxChannels: maxChannels, engine: engine)
        return SSHSession(loop: loop, info: info)
    }

    /// False once the session was closed or its connection broke; a broken session is
    /// replaced by connecting again.
    public var isAlive: Bool { loop.isRunning }

    /// Runs `command` through the user's login shell on the host (an SSH "exec" request).
    ///
    /// - Parameters:
    ///   - timeout: the command is stopped and ``SSHError/Code/timeout`` thrown when it runs
    ///     longer.
    ///   - outputLimit: at most this many bytes of stdout and stderr together are kept; past
    ///     it the channel is closed and the result is marked ``SSHExecResult/truncated``.
    /// - Throws: ``SSHError``, or `CancellationError` when the task is cancelled (the remote
    ///   command's channel is closed).
    public func exec(_ command: String, timeout: Duration, outputLimit: Int = 16 << 20) async throws -> SSHExecResult {
        let box = OperationBox()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<SSHExecResult, any Error>) in
                let operation = ExecOperation(
                    command: command, timeout: timeout, outputLimit: outputLimit, displayName: options.displayName,
                    continuation: continuation)
                box.set(operation)
                loop.submit(operation)
            }
        } onCancel: {
            box.cancel()
            loop.wake()
        }
    }

    /// Closes the session politely; commands still running fail with ``SSHError/Code/sessionClosed``.
    public func close() async {
        await loop.shutdown()
    }
}

/// Runs `body` with a connected session and closes it afterwards, whether `body` returns or
/// throws.
public func withSSHSession<T: Sendable>(
    _ options: SSHConnectionOptions, _ body: (SSHSession) async throws -> T
) async throws -> T {
    let session = try await SSHSession.connect(options)
    do {
        let result = try await body(session)
        await session.close()
        return result
    } catch {
        await session.close()
        throw error
    }
}

/// Lets a cancellation handler reach an operation created inside the continuation closure,
/// whichever of the two runs first.
final class OperationBox: Sendable {
    private struct State {
        var operation: (any LoopOperation)?
        var cancelled = false
    }
    private let state = Lock(State())

    func set(_ operation: any LoopOperation) {
        let cancelled = state.withLock { state in
            state.operation = operation
            return state.cancelled
        }
        if cancelled { operation.requestCancel() }
    }

    func cancel() {
        let operation = state.withLock { state in
            state.cancelled = true
            return state.operation
        }
        operation?.requestCancel()
    }
}
