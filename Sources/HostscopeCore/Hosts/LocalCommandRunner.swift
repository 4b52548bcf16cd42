import ValueFormats
import Foundation
public import HostStats

#if canImport(Glibc)
    import Glibc
#endif

/// Runs commands on this machine with `/bin/sh -c`, for the `local` host: the same probes and
/// parsers as a remote host, without SSH.
///
/// Each command runs in its own process group, read by a dedicated thread (never Swift's
/// cooperative pool); at the deadline the whole group is killed, like a remote command.
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

    private func runUntraced(_ command: String, timeout: Duration) async throws -> CommandOutput {
        let limit = outputLimit
        return try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                continuation.resume(with: Result { try Self.runBlocking(command, timeout: timeout, limit: limit) })
            }
            thread.name = "local command"
            thread.start()
        }
    }

    private static func runBlocking(_ command: String, timeout: Duration, limit: Int) throws -> CommandOutput {
        let started = ContinuousClock.now
        var stdoutPipe: [Int32] = [-1, -1]
        var stderrPipe: [Int32] = [-1, -1]
        guard pipe(&stdoutPipe) == 0, pipe(&stderrPipe) == 0 else {
            throw CollectionError(.command, "local: cannot create pipes (\(String(cString: strerror(errno))))")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, stdoutPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, stderrPipe[1], 2)
        for descriptor in stdoutPipe + stderrPipe { posix_spawn_file_actions_addclose(&actions, descriptor) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))
        posix_spawnattr_setpgroup(&attributes, 0)

        var pid: pid_t = 0
        let arguments = ["/bin/sh", "-c", command]
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let status = posix_spawn(&pid, "/bin/sh", &actions, &attributes, &argv, environ)
        close(stdoutPipe[1])
        close(stderrPipe[1])
        defer {
            close(stdoutPipe[0])
            close(stderrPipe[0])
        }
        guard status == 0 else {
            throw CollectionError(.command, "local: cannot start /bin/sh (\(String(cString: strerror(status))))")
        }

        let deadline = started + timeout
        var stdout: [UInt8] = []
        var stderr: [UInt8] = []
        var truncated = false
        var timedOut = false
        var descriptors = [
            pollfd(fd: stdoutPipe[0], events: Int16(POLLIN), revents: 0),
            pollfd(fd: stderrPipe[0], events: Int16(POLLIN), revents: 0),
        ]
        var buffer = [UInt8](repeating: 0, count: 65536)
        var open = 2
        while open > 0 {
            let remaining = ContinuousClock.now.duration(to: deadline)
            if remaining <= .zero {
                timedOut = true
                break
            }
            let millis = Int32(min(remaining.roundedUpMilliseconds, 60_000))
            let ready = poll(&descriptors, 2, millis)
            if ready < 0 && errno != EINTR { break }
            for index in 0..<2 where descriptors[index].fd >= 0 && descriptors[index].revents != 0 {
                let count = read(descriptors[index].fd, &buffer, buffer.count)
                if count <= 0 {
                    descriptors[index].fd = -1
                    open -= 1
                    continue
                }
                let room = limit - stdout.count - stderr.count
                let kept = min(count, max(0, room))
                if index == 0 {
                    stdout.append(contentsOf: buffer[0..<kept])
                } else {
                    stderr.append(contentsOf: buffer[0..<kept])
                }
                if kept < count {
                    truncated = true
                    open = 0
                    break
                }
            }
        }
        if timedOut || truncated { kill(-pid, SIGKILL) }
        var waitStatus: Int32 = 0
        while waitpid(pid, &waitStatus, 0) < 0 && errno == EINTR {}
        if timedOut {
            throw CollectionError(.timeout, "local: the command did not finish within \(timeout); it was stopped")
        }
        let exited = waitStatus & 0x7F == 0
        let signalNumber = waitStatus & 0x7F
        return CommandOutput(
            stdout: stdout, stderr: stderr, exitStatus: exited ? (waitStatus >> 8) & 0xFF : nil,
            exitSignal: exited ? nil : signalName(signalNumber), truncated: truncated,
            durationSeconds: started.duration(to: .now).inSeconds)
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
