import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A running `ProxyCommand`: `/bin/sh -c 'exec COMMAND'` in a process group of its own, its standard input
/// and output one end of a socketpair whose other end is the session's socket, its standard error another
/// kept for messages.
///
/// The session ends it (``terminate()``): the group gets SIGTERM, then SIGKILL if it lingers, and is reaped
/// on a short-lived thread of its own, so no zombie and no I/O-thread wait is left behind.
// @unchecked Sendable: created on the connecting task and handed to the session before its first step;
// from then on touched only by the session's I/O thread, and the reaper thread gets only the pid.
final class ProxyCommandProcess: @unchecked Sendable {
    /// How the command ended.
    enum Termination: Equatable {
        case exited(Int32)
        case signalled(Int32)

        var description: String {
            switch self {
            case .exited(let status): "exited with status \(status)"
            case .signalled(let signal): "was killed by signal \(signal)"
            }
        }
    }

    let command: SSHProxyCommand
    let pid: pid_t
    /// The read end of the command's standard error, non-blocking; -1 once closed.
    private(set) var errorDescriptor: Int32
    private var errorTail: [UInt8] = []
    private(set) var termination: Termination?

    /// The most standard error kept: its end is what explains a failure.
    private static let errorTailLimit = 2048

    private init(command: SSHProxyCommand, pid: pid_t, errorDescriptor: Int32) {
        self.command = command
        self.pid = pid
        self.errorDescriptor = errorDescriptor
    }

    /// Starts the command; returns it with the session's end of the socketpair (non-blocking).
    static func spawn(_ command: SSHProxyCommand, displayName: String) throws(SSHError) -> (ProxyCommandProcess, Int32)
    {
        func failure(_ what: String) -> SSHError {
            SSHError(
                .connect,
                "\(displayName): cannot start the \(command.description): \(what) failed "
                    + "(\(String(cString: strerror(errno))))")
        }
        var pair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            throw failure("socketpair")
        }
        // Standard error is a socketpair too: Glibc hides pipe2, and a pipe made close-on-exec a moment
        // after its creation could leak into a process another thread starts meanwhile.
        var errorPipe: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &errorPipe) == 0
        else {
            close(pair[0])
            close(pair[1])
            throw failure("socketpair")
        }
        Glibc.shutdown(errorPipe[0], Int32(SHUT_WR))
        defer {
            // The child's ends: it has its copies.
            close(pair[1])
            close(errorPipe[1])
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, pair[1], 0)
        posix_spawn_file_actions_adddup2(&actions, pair[1], 1)
        posix_spawn_file_actions_adddup2(&actions, errorPipe[1], 2)
        // Descriptors some library opened without close-on-exec must not leak into the command.
        if let closeFrom = closeFromAction { _ = closeFrom(&actions, 3) }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // A group of its own: ending the session ends whatever the command started, and a Ctrl-C at the
        // terminal reaches hostscope alone, which then ends it.
        posix_spawnattr_setpgroup(&attributes, 0)
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGQUIT, SIGCHLD] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(
            &attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let arguments = ["/bin/sh", "-c", "exec " + command.command]
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, "/bin/sh", &actions, &attributes, &argv, environ)
        guard status == 0 else {
            errno = status
            close(pair[0])
            close(errorPipe[0])
            throw failure("posix_spawn")
        }
        _ = fcntl(pair[0], F_SETFL, fcntl(pair[0], F_GETFL) | O_NONBLOCK)
        _ = fcntl(errorPipe[0], F_SETFL, fcntl(errorPipe[0], F_GETFL) | O_NONBLOCK)
        return (ProxyCommandProcess(command: command, pid: pid, errorDescriptor: errorPipe[0]), pair[0])
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), which its module map hides.
    private static let closeFromAction:
        (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
            guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np")
            else { return nil }
            return unsafeBitCast(
                symbol,
                to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
        }()

    /// Reads what the command wrote to standard error so far, keeping the end; false once the pipe closed.
    @discardableResult
    func drainErrors() -> Bool {
        guard errorDescriptor >= 0 else { return false }
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(errorDescriptor, &buffer, buffer.count)
            if count > 0 {
                errorTail.append(contentsOf: buffer[0..<count])
                if errorTail.count > Self.errorTailLimit {
                    errorTail.removeFirst(errorTail.count - Self.errorTailLimit)
                }
                continue
            }
            if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return true }
            if count < 0 && errno == EINTR { continue }
            return false
        }
    }

    /// The command's last words on standard error, escaped to one line; nil when it said nothing.
    var errorExcerpt: String? {
        let text = ForeignText.quoted(errorTail, lastLines: 3)
        return text.isEmpty ? nil : text
    }

    /// Whether the command has ended, reaping it if so (never waits).
    func reap() -> Termination? {
        if let termination { return termination }
        var status: Int32 = 0
        guard waitpid(pid, &status, WNOHANG) == pid else { return nil }
        termination = status & 0x7F == 0 ? .exited((status >> 8) & 0xFF) : .signalled(status & 0x7F)
        return termination
    }

    /// Ends the command's process group and reaps it off the I/O thread.
    func terminate() {
        if errorDescriptor >= 0 {
            close(errorDescriptor)
            errorDescriptor = -1
        }
        // Once reaped, the group's number may belong to someone else: only a running command is signalled.
        guard reap() == nil else { return }
        kill(-pid, SIGTERM)
        let pid = self.pid
        Thread.detachNewThread {
            SessionLoop.nameCurrentThread("ssh proxy reap")
            var status: Int32 = 0
            for _ in 0..<100 {
                if waitpid(pid, &status, WNOHANG) == pid { return }
                usleep(20_000)
            }
            // Two seconds after SIGTERM: the command ignores it.
            kill(-pid, SIGKILL)
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        }
    }
}
