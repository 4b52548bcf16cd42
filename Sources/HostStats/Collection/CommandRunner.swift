/// What a finished command produced.
public struct CommandOutput: Sendable, Equatable {
    public var stdout: [UInt8]
    public var stderr: [UInt8]
    /// The exit status, or `nil` when the command was killed by a signal or its status is unknown.
    public var exitStatus: Int32?
    /// The signal name (`TERM`, `KILL`) when the command was killed by one.
    public var exitSignal: String?
    /// True when output beyond the runner's cap was discarded.
    public var truncated: Bool
    public var durationSeconds: Double

    public init(
        stdout: [UInt8], stderr: [UInt8] = [], exitStatus: Int32? = 0, exitSignal: String? = nil,
        truncated: Bool = false, durationSeconds: Double = 0
    ) {
        self.stdout = stdout
        self.stderr = stderr
        self.exitStatus = exitStatus
        self.exitSignal = exitSignal
        self.truncated = truncated
        self.durationSeconds = durationSeconds
    }

    /// Standard output decoded as UTF-8, invalid sequences replaced by U+FFFD.
    public var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
    public var stderrText: String { String(decoding: stderr, as: UTF8.self) }
}

/// The seam between collectors and transports: runs one `sh` command line on a host.
///
/// The SSH layer implements it for remote hosts and a local runner for `local`; collectors
/// never know which, so the same probe and parsers serve both.
public protocol CommandRunner: Sendable {
    /// Runs `command` (a POSIX `sh` command line) and returns its output, throwing only when
    /// the command could not be run or did not finish before `timeout`.
    func run(_ command: String, timeout: Duration) async throws -> CommandOutput

    /// Runs one of the collectors' own probe scripts. A runner may keep a shell open on the host
    /// for them, so that a probe costs no process start beyond its own commands; the script
    /// must then not read stdin or exit, and a background job it leaves (the `proc` probe's reader) writes only while a
    /// later script waits for it. By default, ``run(_:timeout:)``.
    func runProbe(_ script: String, timeout: Duration) async throws -> CommandOutput
}

extension CommandRunner {
    public func runProbe(_ script: String, timeout: Duration) async throws -> CommandOutput {
        try await run(script, timeout: timeout)
    }
}
