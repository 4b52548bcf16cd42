import AgentTracing
import HostStats
import SSHTransport
import Tracing

/// Spans of the SSH layer. They live here, in the composition root, because `SSHTransport` stays free
/// of tracing: it reports what happened (``SSHConnectionInfo``, ``SSHExecResult``) and this file turns
/// that into spans with OpenTelemetry attribute names.
///
/// - `ssh connect {host}` (client): `server.address`, `server.port`, `network.peer.address`,
///   `user.name`, the host key (`hostscope.ssh.host_key.type`, `.fingerprint`, `.status`, `.file`), the
///   method that authenticated (`hostscope.ssh.auth.method`) and the server banner; three children,
///   `ssh tcp connect`, `ssh handshake` (host key check included) and `ssh auth`, spanning the measured
///   phase durations, laid back to back so that they end when the connect does.
/// - `ssh exec` (client): see ``CommandTracing``; `hostscope.ssh.exec.channel` says whether the command had
///   a channel of its own (`exec`) or ran in the session's long-lived probe shell (`shell`).
enum SSHTracing {
    /// Opens a session in an `ssh connect {host}` span (a child of the current context).
    static func connect(_ options: SSHConnectionOptions, maxChannels: Int) async throws -> SSHSession {
        try await withSpan("ssh connect \(options.displayName)", ofKind: .client) { span in
            span.setAttribute("hostscope.host", value: .string(options.displayName))
            span.setAttribute("server.address", value: .string(options.hostName))
            span.setAttribute("server.port", value: .int(Int64(options.port)))
            span.setAttribute("user.name", value: .string(options.user))
            do {
                let session = try await SSHSession.connect(options, maxChannels: maxChannels)
                record(session.info, in: span, end: TraceClock.now())
                return session
            } catch {
                recordFailure(error, in: span)
                throw error
            }
        }
    }

    /// Runs a command in an `ssh exec` span.
    static func exec(_ session: SSHSession, _ command: String, timeout: Duration) async throws -> SSHExecResult {
        try await traced(command, options: session.options, via: "exec") {
            try await session.exec(command, timeout: timeout)
        }
    }

    /// Runs a script in a session's long-lived shell, in an `ssh exec` span like a command's, with
    /// `hostscope.ssh.exec.channel` = `shell`.
    static func run(
        _ shell: SSHShell, on session: SSHSession, _ script: String, timeout: Duration
    ) async throws -> SSHExecResult {
        try await traced(script, options: session.options, via: "shell") {
            try await shell.run(script, timeout: timeout)
        }
    }

    private static func traced(
        _ command: String, options: SSHConnectionOptions, via channel: String,
        _ body: () async throws -> SSHExecResult
    ) async throws -> SSHExecResult {
        try await withSpan("ssh exec", ofKind: .client) { span in
            CommandTracing.describe(command, host: options.displayName, in: span)
            span.setAttribute("server.address", value: .string(options.hostName))
            span.setAttribute("server.port", value: .int(Int64(options.port)))
            span.setAttribute("hostscope.ssh.exec.channel", value: .string(channel))
            do {
                let result = try await body()
                if let verbose = options.verbose {
                    verbose(CommandTracing.debugLine(command, options.displayName, result))
                }
                CommandTracing.record(
                    CommandTracing.Outcome(
                        exitStatus: result.exitStatus, exitSignal: result.exitSignal, stdoutBytes: result.stdoutBytes,
                        stderrBytes: result.stderrBytes, stderr: result.stderr, truncated: result.truncated,
                        duration: result.duration), in: span)
                return result
            } catch {
                recordFailure(error, in: span)
                throw error
            }
        }
    }

    static func record(_ info: SSHConnectionInfo, in span: any Span, end: UInt64) {
        span.setAttribute("network.peer.address", value: .string(info.remoteAddress))
        if let banner = info.serverBanner { span.setAttribute("hostscope.ssh.server_banner", value: .string(banner)) }
        span.setAttribute("hostscope.ssh.host_key.type", value: .string(info.hostKeyType))
        span.setAttribute("hostscope.ssh.host_key.fingerprint", value: .string(info.hostKeyFingerprint))
        switch info.hostKeyStatus {
        case .known(let file):
            span.setAttribute("hostscope.ssh.host_key.status", value: "known")
            span.setAttribute("hostscope.ssh.host_key.file", value: .string(file))
        case .accepted(let file):
            span.setAttribute("hostscope.ssh.host_key.status", value: "accepted")
            span.setAttribute("hostscope.ssh.host_key.file", value: .string(file))
        }
        span.setAttribute("hostscope.ssh.auth.method", value: .string(info.authMethod))

        // The transport measures each phase's duration; place them back to back, ending now. Never
        // before the connect span's own start, should a clock step have moved things.
        let floor = (span as? RecordingSpan)?.startNanoseconds ?? 0
        let auth = TraceClock.nanoseconds(info.authDuration)
        let handshake = TraceClock.nanoseconds(info.handshakeDuration)
        let tcp = TraceClock.nanoseconds(info.tcpConnectDuration)
        let authStart = max(floor, end &- min(end, auth))
        let handshakeStart = max(floor, authStart &- min(authStart, handshake))
        let tcpStart = max(floor, handshakeStart &- min(handshakeStart, tcp))
        phase("ssh tcp connect", parent: span, from: tcpStart, to: handshakeStart) { child in
            child.setAttribute("network.peer.address", value: .string(info.remoteAddress))
        }
        phase("ssh handshake", parent: span, from: handshakeStart, to: authStart) { child in
            child.setAttribute("hostscope.ssh.host_key.type", value: .string(info.hostKeyType))
            child.setAttribute("hostscope.ssh.host_key.fingerprint", value: .string(info.hostKeyFingerprint))
            if !info.cipher.isEmpty { child.setAttribute("hostscope.ssh.cipher", value: .string(info.cipher)) }
            if !info.mac.isEmpty { child.setAttribute("hostscope.ssh.mac", value: .string(info.mac)) }
        }
        phase("ssh auth", parent: span, from: authStart, to: end) { child in
            child.setAttribute("hostscope.ssh.auth.method", value: .string(info.authMethod))
        }
    }

    private static func phase(
        _ name: String, parent: any Span, from start: UInt64, to end: UInt64, _ describe: (any Span) -> Void
    ) {
        let child = startSpan(
            name, context: parent.context, ofKind: .internal, at: TraceInstant(nanosecondsSinceEpoch: start))
        if let host = (parent as? RecordingSpan)?.orderedAttributes["hostscope.host"] {
            child.setAttribute("hostscope.host", value: host)
        }
        describe(child)
        child.end(atNanoseconds: max(start, end))
    }

    /// Error status with the failure's message, and `error.type` / `hostscope.error.kind` naming its class.
    static func recordFailure(_ error: any Error, in span: any Span) {
        if let ssh = error as? SSHError {
            span.setAttribute("error.type", value: .string("ssh.\(ssh.code)"))
            if case .collection(let kind) = HostConnection.classify(ssh).failureKind {
                span.setAttribute("hostscope.error.kind", value: .string(kind.rawValue))
            }
            span.setStatus(SpanStatus(code: .error, message: ssh.message))
        } else if error is CancellationError {
            span.setAttribute("error.type", value: "cancelled")
            span.setStatus(SpanStatus(code: .error, message: "cancelled"))
        } else {
            span.setAttribute("error.type", value: .string(String(describing: type(of: error))))
            span.setStatus(SpanStatus(code: .error, message: String(describing: error)))
        }
    }
}

extension Error {
    /// The failure kind of an already classified collection error.
    fileprivate var failureKind: ClassifiedFailure {
        (self as? CollectionError).map { .collection($0.kind) } ?? .other
    }
}

private enum ClassifiedFailure {
    case collection(FailureKind)
    case other
}
