/// A long-lived POSIX `sh` on one channel of a session that runs scripts one after another,
/// without a channel, an exec request and a process start for each.
///
/// Meant for short scripts of the caller's own, run often (a monitoring probe): each costs
/// one write and the script's own work on the host. The shell is started by the user's login
/// shell as `exec sh`, so it works whatever that login shell is. Scripts run in the same shell
/// one at a time, in the order submitted: `cd`, variables and `set` options carry over to the
/// next script; each script's standard input is `/dev/null`. A script must not leave
/// background processes writing to its output.
///
/// A script that times out, is cancelled or prints past its output limit ends the shell, as
/// does one that exits (its result then carries the exit status, as exec's would). Scripts
/// still queued, and any submitted later, fail with ``SSHError/Code/shellUnavailable``; open
/// a new shell or use ``SSHSession/exec(_:timeout:outputLimit:)``. The shell holds one of the
/// session's channels until ``close()``.
public final class SSHShell: Sendable {
    let operation: ShellOperation
    private let loop: SessionLoop

    init(loop: SessionLoop, startTimeout: Duration) {
        self.loop = loop
        self.operation = ShellOperation(displayName: loop.options.displayName, startTimeout: startTimeout)
        loop.submit(operation)
    }

    deinit {
        close()
    }

    /// False once the shell has ended (or could not start); a new one is needed.
    public var isAlive: Bool { !operation.hasEnded && loop.isRunning }

    /// True once the server started the shell.
    public var didStart: Bool { operation.hasStarted }

    /// Runs `script` in the shell and returns its output and exit status.
    ///
    /// - Parameters:
    ///   - timeout: counted from submission; past it the shell is stopped and
    ///     ``SSHError/Code/timeout`` thrown.
    ///   - outputLimit: at most this many bytes of stdout and stderr together are kept; past it
    ///     the shell is stopped and the result marked ``SSHExecResult/truncated``.
    /// - Throws: ``SSHError`` (``SSHError/Code/shellUnavailable`` when the shell could not run
    ///   it at all), or `CancellationError`.
    public func run(_ script: String, timeout: Duration, outputLimit: Int = 16 << 20) async throws -> SSHExecResult {
        let cancellation = CancellationFlag()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<SSHExecResult, any Error>) in
                operation.enqueue(
                    ShellOperation.Request(
                        script: script, timeout: timeout, outputLimit: outputLimit, cancellation: cancellation,
                        continuation: continuation))
                loop.wake()
            }
        } onCancel: {
            cancellation.set()
            loop.wake()
        }
    }

    /// Ends the shell once the script in progress, if any, and those queued have run.
    public func close() {
        operation.requestClose()
        loop.wake()
    }
}

extension SSHSession {
    /// Starts a long-lived shell on this session (see ``SSHShell``). It returns at once; the
    /// first script waits for the shell to start.
    ///
    /// - Parameter startTimeout: how long the server may take to start it.
    public func openShell(startTimeout: Duration = .seconds(10)) -> SSHShell {
        SSHShell(loop: loop, startTimeout: startTimeout)
    }
}
