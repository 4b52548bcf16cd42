import AgentTracing
import HostStats
import SSHTransport
import Tracing
import ValueFormats

/// The attributes of a command span (`ssh exec`, or `exec` for the local machine), shared by both
/// runners so that `trace list` shows the same columns for either.
///
/// `process.command_args` holds the command line as sent, cut to ``maximumCommandBytes`` (the snapshot
/// probe is a script of several kilobytes; its first lines say which probe it is), with the full length
/// in `hostscope.command.bytes`. A command that exits non-zero or by a signal gets error status and an
/// `exception`-like `stderr` event carrying the tail of its standard error, so that `trace show` answers
/// "why did this fail" without rerunning it.
enum CommandTracing {
    /// How much of a command line a span keeps.
    static let maximumCommandBytes = 512
    /// How much of standard error a failure event keeps: the end, where the error usually is.
    static let maximumStderrTailBytes = 4096
    /// Lines of standard error a failure event keeps.
    static let maximumStderrTailLines = 20

    /// What a finished command produced, as both runners report it.
    struct Outcome {
        var exitStatus: Int32?
        var exitSignal: String?
        var stdoutBytes: Int
        var stderrBytes: Int
        var stderr: [UInt8]
        var truncated: Bool
        var duration: Duration
    }

    /// Runs a command on this machine in a `local exec` span.
    static func local(_ command: String, _ body: () async throws -> CommandOutput) async throws -> CommandOutput {
        try await withSpan("local exec", ofKind: .internal) { span in
            describe(command, host: "local", in: span)
            do {
                let output = try await body()
                record(
                    Outcome(
                        exitStatus: output.exitStatus, exitSignal: output.exitSignal, stdoutBytes: output.stdout.count,
                        stderrBytes: output.stderr.count, stderr: output.stderr, truncated: output.truncated,
                        duration: .milliseconds(Int64((output.durationSeconds * 1000).rounded()))), in: span)
                return output
            } catch {
                SSHTracing.recordFailure(error, in: span)
                throw error
            }
        }
    }

    /// What `-v` says of a finished command: its first line (a probe is a script whose first line names it), how
    /// long it took and how it ended.
    static func debugLine(_ command: String, _ host: String, _ result: SSHExecResult) -> String {
        let lines = command.split(separator: "\n", omittingEmptySubsequences: true)
        var shown = String((lines.first ?? "").prefix(120))
        if lines.count > 1 || shown.count < (lines.first?.count ?? 0) {
            shown += " … (\(command.utf8.count) bytes)"
        }
        let ending =
            if let signal = result.exitSignal {
                "killed by signal \(signal)"
            } else if let status = result.exitStatus {
                "exit \(status)"
            } else {
                "no exit status"
            }
        let took = Int(result.duration.inMilliseconds.rounded())
        return "\(host): ran `\(shown)` in \(took) ms, \(ending), \(result.stdoutBytes) bytes of output"
    }

    /// Sets the request side: the host and the (shortened) command line.
    static func describe(_ command: String, host: String, in span: any Span) {
        // Without a recording tracer there is nothing to describe: spare every probe the copies.
        guard span.isRecording else { return }
        span.setAttribute("hostscope.host", value: .string(host))
        span.setAttribute("process.command_args", value: .stringArray([shortened(command)]))
        span.setAttribute("hostscope.command.bytes", value: .int(Int64(command.utf8.count)))
    }

    /// The command line cut to ``maximumCommandBytes`` with a marker saying how much was left out.
    static func shortened(_ command: String) -> String {
        SpanLimits.truncate(command, toBytes: maximumCommandBytes)
    }

    /// Sets the outcome: exit code or signal, output sizes, and on failure error status and the stderr tail.
    static func record(_ outcome: Outcome, in span: any Span) {
        guard span.isRecording else { return }
        if let status = outcome.exitStatus { span.setAttribute("process.exit.code", value: .int(Int64(status))) }
        if let signal = outcome.exitSignal {
            span.setAttribute("hostscope.process.exit.signal", value: .string(signal))
        }
        span.setAttribute("hostscope.process.stdout.bytes", value: .int(Int64(outcome.stdoutBytes)))
        span.setAttribute("hostscope.process.stderr.bytes", value: .int(Int64(outcome.stderrBytes)))
        if outcome.truncated { span.setAttribute("hostscope.process.output.truncated", value: .bool(true)) }
        span.setAttribute("hostscope.process.duration_ms", value: .double(outcome.duration.inMilliseconds))

        let failure: String?
        if let signal = outcome.exitSignal {
            failure = "killed by signal \(signal)"
        } else if let status = outcome.exitStatus, status != 0 {
            failure = "exit status \(status)"
        } else {
            failure = nil
        }
        guard let failure else { return }
        let lines = stderrTail(outcome.stderr)
        if !lines.isEmpty {
            span.addEvent(
                "stderr", at: TraceClock.now(),
                attributes: [
                    Attribute("hostscope.process.stderr.lines", .stringArray(lines)),
                    Attribute("hostscope.process.stderr.bytes", .int(Int64(outcome.stderrBytes))),
                ])
        }
        span.setAttribute("error.type", value: outcome.exitSignal == nil ? "exit_status" : "signal")
        span.setStatus(SpanStatus(code: .error, message: failure))
    }

    /// The last lines of standard error (at most ``maximumStderrTailLines`` and
    /// ``maximumStderrTailBytes``), invalid UTF-8 replaced.
    static func stderrTail(_ stderr: [UInt8]) -> [String] {
        guard !stderr.isEmpty else { return [] }
        let tail = stderr.count > maximumStderrTailBytes ? Array(stderr.suffix(maximumStderrTailBytes)) : stderr
        var lines = String(decoding: tail, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: true)
            .map(String.init)
        if stderr.count > maximumStderrTailBytes, !lines.isEmpty { lines.removeFirst() }  // cut mid-line
        return Array(lines.suffix(maximumStderrTailLines))
    }
}
