import Foundation
public import HostStats
import Subprocess
import Synchronization
import SystemPackage
import ValueFormats

#if canImport(Glibc)
    import Glibc
#endif

/// Runs commands on this machine with `/bin/sh -c`, for the `local` host: the same probes and
/// parsers as a remote host, without SSH.
///
/// Each command runs in a process group of its own (swift-subprocess spawns it and reads both pipes
/// without a thread per command); at the deadline, past the output limit or when the calling task is
/// cancelled, the whole group is killed, so nothing the command started outlives it.
public struct LocalCommandRunner: CommandRunner {
    /// Most bytes of stdout and stderr kept together; the rest is dropped and the result marked
    /// truncated.
    public var outputLimit: Int

    public init(outputLimit: Int = 16 << 20) {
        self.outputLimit = outputLimit
    }

    public func run(_ command: String, timeout: Duration) async throws -> CommandOutput {
        try await CommandTracing.local(command) { try await runUntraced(command, timeout: timeout) }
    }

    /// How a command's run ended besides its exit.
    private enum Stop: Sendable {
        case truncated
        case timedOut
    }

    /// What the two pipe readers and the deadline share: the output budget left, and why the group was
    /// stopped (the first reason wins).
    private final class RunState: Sendable {
        let budget: Lock<Int>
        let stop = Lock<Stop?>(nil)

        init(outputLimit: Int) {
            budget = Lock(outputLimit)
        }

        /// Takes up to `count` bytes from the budget; how many may be kept.
        func take(_ count: Int) -> Int {
            budget.withLock { left in
                let kept = min(left, count)
                left -= kept
                return kept
            }
        }

        /// Records `reason` unless another came first; true when this one is the first.
        func stopping(_ reason: Stop) -> Bool {
            stop.withLock { stop in
                guard stop == nil else { return false }
                stop = reason
                return true
            }
        }
    }

    private func runUntraced(_ command: String, timeout: Duration) async throws -> CommandOutput {
        let started = ContinuousClock.now
        var options = PlatformOptions()
        options.processGroupID = 0
        // Cancellation of the calling task: the whole group at once, as at the deadline.
        options.teardownSequence = [.send(signal: .kill, toProcessGroup: true, allowedDurationToNextStep: .seconds(1))]
        let state = RunState(outputLimit: outputLimit)
        let result: ExecutionResult<([UInt8], [UInt8]), SequenceOutput, SequenceOutput>
        do {
            result = try await Subprocess.run(
                .path(FilePath("/bin/sh")), arguments: ["-c", command], platformOptions: options, input: .none,
                output: .sequence, error: .sequence
            ) { execution in
                @Sendable func kill(_ reason: Stop) {
                    if state.stopping(reason) { try? execution.send(signal: .kill, toProcessGroup: true) }
                }
                /// One pipe's bytes, within what is left of the shared budget.
                @Sendable func read(_ stream: SubprocessOutputSequence) async throws -> [UInt8] {
                    var bytes: [UInt8] = []
                    for try await buffer in stream {
                        let kept = state.take(buffer.count)
                        buffer.withUnsafeBytes { bytes.append(contentsOf: $0.prefix(kept)) }
                        if kept < buffer.count {
                            kill(.truncated)
                            break
                        }
                    }
                    return bytes
                }
                let deadline = Task {
                    try await Task.sleep(for: timeout)
                    kill(.timedOut)
                }
                defer { deadline.cancel() }
                async let stdout = read(execution.standardOutput)
                async let stderr = read(execution.standardError)
                return try await (stdout, stderr)
            }
        } catch let error as SubprocessError {
            throw CollectionError(.command, "local: cannot run /bin/sh (\(error))")
        }
        // A cancelled run ends normally once the teardown has killed the group: report it as cancelled.
        try Task.checkCancellation()
        let reason = state.stop.withLock { $0 }
        if reason == .timedOut {
            throw CollectionError(.timeout, "local: the command did not finish within \(timeout); it was stopped")
        }
        let (stdout, stderr) = result.closureResult
        let exitStatus: Int32?
        let exitSignal: String?
        switch result.terminationStatus {
        case .exited(let code):
            (exitStatus, exitSignal) = (code, nil)
        case .signaled(let number):
            (exitStatus, exitSignal) = (nil, Self.signalName(number))
        }
        return CommandOutput(
            stdout: stdout, stderr: stderr, exitStatus: exitStatus, exitSignal: exitSignal,
            truncated: reason == .truncated, durationSeconds: started.duration(to: .now).inSeconds)
    }

    private static func signalName(_ number: Int32) -> String {
        switch number {
        case SIGTERM: "TERM"
        case SIGKILL: "KILL"
        case SIGINT: "INT"
        case SIGHUP: "HUP"
        case SIGPIPE: "PIPE"
        case SIGSEGV: "SEGV"
        case SIGABRT: "ABRT"
        default: "SIG\(number)"
        }
    }
}
