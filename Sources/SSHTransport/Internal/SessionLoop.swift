import CLibSSH2
import Digests
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// One SSH session and the dedicated thread that owns it.
///
/// libssh2 must not be used from two threads at once for a session, and its calls block; so
/// each session gets a thread of its own that connects and authenticates in blocking mode,
/// then switches to non-blocking mode and runs an event loop: it advances every operation
/// (exec channels, SFTP requests) until all wait on the socket, then sleeps in `poll` on the
/// socket and an eventfd that other threads write to when they hand over work. Swift's
/// cooperative pool never blocks on SSH.
// @unchecked Sendable: `session`, `socket` and `operations` are touched only by the loop
// thread; other threads reach the loop through `inbox` (a Mutex) and the eventfd.
final class SessionLoop: @unchecked Sendable {
    private struct Inbox {
        var incoming: [any LoopOperation] = []
        var shutdownRequested = false
        var shutdownWaiters: [CheckedContinuation<Void, Never>] = []
        /// Set once the loop has ended; later submissions fail at once with this error.
        var stoppedError: SSHError?
    }

    let options: SSHConnectionOptions
    /// Upper bound on channels open at once; sshd's `MaxSessions` defaults to 10.
    let maxChannels: Int
    private let inbox = Mutex(Inbox())
    /// A pipe whose read end the loop polls; other threads write a byte to wake it.
    private let wakeReader: Int32
    private let wakeWriter: Int32

    // Loop-thread state.
    private var session: OpaquePointer?
    private var socket: Int32 = -1
    private var operations: [any LoopOperation] = []
    private var capacityLimit: Int
    /// The SFTP subsystem, started by the first SFTP request and kept for the session.
    private var sftp: SFTPContext?
    private var sftpFailure: SSHError?
    private var sftpStarting = false
    /// The SFTP operation allowed to call libssh2 (see ``SFTPOperation``).
    private var activeSFTP: ObjectIdentifier?

    /// Linux's TCP_QUICKACK socket option (netinet/tcp.h).
    private static let tcpQuickAck: Int32 = 12

    /// Linux's POLLRDHUP (peer closed its writing side), which Glibc's module map hides
    /// behind _GNU_SOURCE.
    private static let pollReadHangUp: Int16 = 0x2000

    /// How long a timed-out or cancelled channel may take to close before the session is
    /// considered hung.
    private static let windDownGrace: Duration = .seconds(5)

    init(options: SSHConnectionOptions, maxChannels: Int) {
        _ = LibSSH2.initialized
        self.options = options
        self.maxChannels = max(1, maxChannels)
        self.capacityLimit = max(1, maxChannels)
        var ends: [Int32] = [-1, -1]
        if pipe(&ends) == 0 {
            for end in ends {
                _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
                _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            }
        }
        wakeReader = ends[0]
        wakeWriter = ends[1]
    }

    deinit {
        if wakeReader >= 0 { close(wakeReader) }
        if wakeWriter >= 0 { close(wakeWriter) }
    }

    var isRunning: Bool { inbox.withLock { $0.stoppedError == nil && !$0.shutdownRequested } }

    /// Starts the thread, which connects and authenticates; returns once the session is ready.
    func start() async throws -> SSHConnectionInfo {
        _ = Self.cryptoWarmUp
        return try await withCheckedThrowingContinuation {
            (continuation: CheckedContinuation<SSHConnectionInfo, any Error>) in
            let thread = Thread { [self] in
                self.threadMain(connected: continuation)
            }
            thread.start()
        }
    }

    /// libcrypto's set-up, started with the process's first session on a thread of its own, so that it
    /// runs while that session connects (``CryptoWarmUp``).
    private static let cryptoWarmUp: Void = Thread.detachNewThread { CryptoWarmUp.run() }

    /// Names the thread as `top -H`, `ps -L` and `perf` show it. Linux keeps 15 bytes of a name and
    /// refuses a longer one outright, so it is cut (at a character boundary) rather than lost.
    private static func nameCurrentThread(_ name: String) {
        var kept = ""
        for character in name {
            guard kept.utf8.count + character.utf8.count <= 15 else { break }
            kept.append(character)
        }
        _ = setThreadName?(pthread_self(), kept)
    }

    /// Glibc's `pthread_setname_np`, which its module map hides behind _GNU_SOURCE.
    private static let setThreadName: (@convention(c) (pthread_t, UnsafePointer<CChar>) -> Int32)? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "pthread_setname_np") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (pthread_t, UnsafePointer<CChar>) -> Int32).self)
    }()

    /// Hands an operation to the loop; fails it at once when the session has ended.
    func submit(_ operation: any LoopOperation) {
        let stopped: SSHError? = inbox.withLock { state in
            if let error = state.stoppedError { return error }
            if state.shutdownRequested {
                return SSHError(.sessionClosed, "\(options.displayName): the session is closing")
            }
            state.incoming.append(operation)
            return nil
        }
        if let stopped {
            operation.abandon(stopped)
        } else {
            wake()
        }
    }

    /// Wakes the loop so it notices cancellations and new work.
    func wake() {
        // A full pipe already guarantees a wake-up, so a failed write needs no handling.
        var byte: UInt8 = 1
        _ = write(wakeWriter, &byte, 1)
    }

    /// Closes the session: pending operations fail, the server is told goodbye.
    func shutdown() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let alreadyStopped = inbox.withLock { state in
                if state.stoppedError != nil { return true }
                state.shutdownRequested = true
                state.shutdownWaiters.append(continuation)
                return false
            }
            if alreadyStopped {
                continuation.resume()
            } else {
                wake()
            }
        }
    }

    /// Asks the loop to end without waiting for it (used from `deinit` of the owner).
    func requestShutdown() {
        inbox.withLock { $0.shutdownRequested = true }
        wake()
    }

    // MARK: - Loop thread

    private func threadMain(connected: CheckedContinuation<SSHConnectionInfo, any Error>) {
        Self.nameCurrentThread("ssh " + options.displayName)
        let info: SSHConnectionInfo
        do {
            info = try connectAndAuthenticate()
        } catch {
            tearDown(disconnect: false)
            let waiters = inbox.withLock { state -> [CheckedContinuation<Void, Never>] in
                state.stoppedError = error
                defer { state.shutdownWaiters = [] }
                return state.shutdownWaiters
            }
            waiters.forEach { $0.resume() }
            connected.resume(throwing: error)
            return
        }
        connected.resume(returning: info)
        let (endError, graceful) = runLoop()
        let leftovers = operations
        operations = []
        tearDown(disconnect: graceful)
        let (incoming, waiters) = inbox.withLock { state in
            state.stoppedError = endError
            defer {
                state.incoming = []
                state.shutdownWaiters = []
            }
            return (state.incoming, state.shutdownWaiters)
        }
        for operation in leftovers + incoming { operation.abandon(endError) }
        waiters.forEach { $0.resume() }
    }

    private func connectAndAuthenticate() throws(SSHError) -> SSHConnectionInfo {
        // This is where the route to the host is chosen. Connecting through a bastion belongs here; until
        // then a host configured to be reached through one is refused, never reached around it.
        if let proxy = options.proxy {
            throw Self.proxyRefusal(proxy, options: options)
        }
        let deadline = ContinuousClock.now + options.connectTimeout
        let tcpStart = ContinuousClock.now
        let connection = try TCPConnector.connect(
            host: options.hostName, port: options.port, displayName: options.displayName, deadline: deadline,
            keepalive: options.keepaliveInterval.map { ($0, options.keepaliveCountMax) })
        socket = connection.socket
        let tcpDuration = tcpStart.duration(to: .now)

        guard let session = libssh2_session_init_ex(nil, nil, nil, nil) else {
            throw SSHError(.handshake, "\(options.displayName): cannot allocate an SSH session")
        }
        self.session = session
        libssh2_session_set_blocking(session, 1)
        try LibSSH2.applyAlgorithmPreferences(session, options.algorithms, host: options.displayName)

        let handshakeStart = ContinuousClock.now
        libssh2_session_set_timeout(session, remainingMilliseconds(until: deadline))
        let handshake = libssh2_session_handshake(session, libssh2_socket_t(socket))
        if handshake != 0 {
            let error = LibSSH2.lastError(session)
            throw handshakeError(code: handshake, message: error.message)
        }
        let banner = libssh2_session_banner_get(session).map { String(cString: $0) }
        let verified = try KnownHostsVerifier(options: options).verify(session)
        let handshakeDuration = handshakeStart.duration(to: .now)

        let authStart = ContinuousClock.now
        libssh2_session_set_timeout(session, remainingMilliseconds(until: deadline))
        let method = try Authenticator(options: options, serverBanner: banner).authenticate(session)
        let authDuration = authStart.duration(to: .now)

        libssh2_session_set_timeout(session, 0)
        libssh2_session_set_blocking(session, 0)
        if let interval = options.keepaliveInterval {
            libssh2_keepalive_config(session, 1, UInt32(max(1, interval.components.seconds)))
        }
        var info = SSHConnectionInfo(
            remoteAddress: connection.address, serverBanner: banner, hostKeyType: verified.keyType,
            hostKeyFingerprint: verified.fingerprint, hostKeyStatus: verified.status, authMethod: method,
            tcpConnectDuration: tcpDuration, handshakeDuration: handshakeDuration, authDuration: authDuration)
        info.cipher = libssh2_session_methods(session, LIBSSH2_METHOD_CRYPT_SC).map { String(cString: $0) } ?? ""
        info.mac = libssh2_session_methods(session, LIBSSH2_METHOD_MAC_SC).map { String(cString: $0) } ?? ""
        return info
    }

    /// Why a host behind `ProxyJump` or `ProxyCommand` is not connected to.
    static func proxyRefusal(_ proxy: SSHProxy, options: SSHConnectionOptions) -> SSHError {
        let place = proxy.origin.map { "\($0) sets" } ?? "the configuration sets"
        let through = proxy.kind == .jump ? "a jump host" : "a proxy command"
        return SSHError(
            .config,
            "\(options.displayName): \(place) \(proxy.keyword) \(proxy.value), and hostscope cannot connect through "
                + "\(through) yet, so it does not connect to \(options.hostName) at all rather than around it; "
                + "use ssh for this host, or set \(proxy.keyword) none for it in an earlier block if a direct "
                + "connection is allowed")
    }

    private func remainingMilliseconds(until deadline: ContinuousClock.Instant) -> Int {
        max(1, ContinuousClock.now.duration(to: deadline).roundedUpMilliseconds)
    }

    private func handshakeError(code: Int32, message: String) -> SSHError {
        let name = options.displayName
        switch code {
        case Int32(LIBSSH2_ERROR_TIMEOUT), Int32(LIBSSH2_ERROR_SOCKET_TIMEOUT):
            return SSHError(
                .timeout,
                "\(name): no SSH handshake within \(ExecOperation.describe(options.connectTimeout)) from \(options.hostName) port \(options.port); is an SSH server listening there?",
                libssh2Code: code)
        case Int32(LIBSSH2_ERROR_BANNER_RECV), Int32(LIBSSH2_ERROR_SOCKET_DISCONNECT), Int32(LIBSSH2_ERROR_SOCKET_RECV):
            return SSHError(
                .handshake,
                "\(name): the server at \(options.hostName) port \(options.port) closed the connection during the SSH handshake (\(message)); is it an SSH server, and does it allow this client's address?",
                libssh2Code: code)
        case Int32(LIBSSH2_ERROR_KEX_FAILURE), Int32(LIBSSH2_ERROR_METHOD_NONE):
            let configured = SSHAlgorithmKind.allCases.compactMap { kind in
                options.algorithms[kind].map {
                    "\(kind.keyword) \($0)" + (options.algorithms.sources[kind].map { " (\($0))" } ?? "")
                }
            }
            let hint =
                configured.isEmpty
                ? "" : "; ssh_config narrows the choice with " + configured.joined(separator: ", ") + ": widen it"
            return SSHError(
                .handshake,
                "\(name): no key exchange, cipher, MAC or host key algorithm in common with the server (\(message))\(hint)",
                libssh2Code: code)
        default:
            return SSHError(.handshake, "\(name): SSH handshake failed: \(message)", libssh2Code: code)
        }
    }

    /// Runs until shutdown is requested or the transport breaks; returns the error that
    /// pending and later operations fail with, and whether the transport is still fit for a
    /// polite disconnect.
    private func runLoop() -> (SSHError, graceful: Bool) {
        guard let session else { return (SSHError(.sessionClosed, "\(options.displayName): no session"), false) }
        let broken = { (error: SSHError) in (error, graceful: false) }
        var nextKeepalive: ContinuousClock.Instant? = options.keepaliveInterval.map { .now + $0 }
        var descriptors = [
            pollfd(fd: socket, events: 0, revents: 0), pollfd(fd: wakeReader, events: Int16(POLLIN), revents: 0),
        ]
        while true {
            let (incoming, shutdown) = inbox.withLock { state in
                defer { state.incoming = [] }
                return (state.incoming, state.shutdownRequested)
            }
            operations.append(contentsOf: incoming)
            if shutdown {
                return (SSHError(.sessionClosed, "\(options.displayName): the session was closed"), true)
            }

            let now = ContinuousClock.now
            operations.removeAll { operation in
                guard let deadline = operation.deadline, deadline <= now else { return false }
                if deadline + Self.windDownGrace <= now {
                    // The channel would not close (its process ignores signals, or the server
                    // is stuck): leave it to libssh2 and report the command's own outcome.
                    operation.abandon(
                        SSHError(.timeout, "\(options.displayName): the command did not finish before its deadline"))
                    return true
                }
                operation.expire()
                return false
            }

            if let error = advanceAll(session) { return broken(error) }
            let killers = operations.compactMap { operation -> ExecOperation? in
                guard let pid = operation.takeKillRequest() else { return nil }
                return ExecOperation.killer(pid: pid, displayName: options.displayName)
            }
            if !killers.isEmpty {
                operations.append(contentsOf: killers)
                if let error = advanceAll(session) { return broken(error) }
            }

            if let due = nextKeepalive, due <= .now {
                var seconds: Int32 = 0
                let result = libssh2_keepalive_send(session, &seconds)
                if result != 0 && result != LibSSH2.eagain && LibSSH2.isFatalTransportError(result) {
                    let error = LibSSH2.lastError(session)
                    return broken(
                        SSHError(
                            .sessionClosed, "\(options.displayName): the connection broke (\(error.message))",
                            libssh2Code: result))
                }
                nextKeepalive = .now + .seconds(max(1, Int(seconds)))
            }

            // Sleep until the socket is ready, work arrives, or the nearest deadline.
            var wakeAt = nextKeepalive
            for operation in operations {
                guard let deadline = operation.deadline else { continue }
                let due = deadline <= .now ? deadline + Self.windDownGrace : deadline
                wakeAt = wakeAt.map { min($0, due) } ?? due
            }
            var timeout: Int32 = -1
            if let wakeAt {
                timeout = Int32(max(0, ContinuousClock.now.duration(to: wakeAt).roundedUpMilliseconds))
            }
            if operations.allSatisfy(\.isWaitingForConsumer) {
                // Idle (or only waiting for consumers to catch up): watch only for the peer closing. Unread data (a keepalive reply) stays
                // in the socket until the next operation lets libssh2 read it.
                descriptors[0].events = Self.pollReadHangUp
            } else {
                let directions = libssh2_session_block_directions(session)
                var events: Int16 = 0
                if directions & Int32(LIBSSH2_SESSION_BLOCK_INBOUND) != 0 { events |= Int16(POLLIN) }
                if directions & Int32(LIBSSH2_SESSION_BLOCK_OUTBOUND) != 0 { events |= Int16(POLLOUT) }
                descriptors[0].events = events == 0 ? Int16(POLLIN) : events
                // A safety net: libssh2 can hold data for an operation that reported "blocked"
                // before another operation's read pulled it off the socket.
                timeout = timeout < 0 ? 250 : min(timeout, 250)
            }
            descriptors[0].revents = 0
            descriptors[1].revents = 0
            let ready = poll(&descriptors, 2, timeout)
            if ready < 0 && errno != EINTR {
                return broken(
                    SSHError(
                        .sessionClosed, "\(options.displayName): poll failed (\(String(cString: strerror(errno))))"))
            }
            if descriptors[0].revents & Int16(POLLIN) != 0 {
                // sshd leaves Nagle on for sessions without a terminal, so its small replies wait
                // for our ACK, which Linux delays by up to 40 ms: ask for immediate ACKs again
                // (the kernel drops quick-ACK mode on its own after a while).
                var one: Int32 = 1
                setsockopt(socket, Int32(IPPROTO_TCP), Self.tcpQuickAck, &one, socklen_t(MemoryLayout<Int32>.size))
            }
            if descriptors[1].revents != 0 {
                var drain = [UInt8](repeating: 0, count: 64)
                while read(wakeReader, &drain, drain.count) > 0 {}
            }
            if operations.allSatisfy(\.isWaitingForConsumer),
                descriptors[0].revents & (Self.pollReadHangUp | Int16(POLLHUP | POLLERR)) != 0
            {
                return broken(SSHError(.sessionClosed, "\(options.displayName): the server closed the connection"))
            }
        }
    }

    /// Advances every operation until none makes progress; returns an error when the session
    /// broke.
    private func advanceAll(_ session: OpaquePointer) -> SSHError? {
        for _ in 0..<1000 {
            var progressed = false
            var openChannels = operations.reduce(sftp != nil || sftpStarting ? 1 : 0) { $0 + ($1.holdsChannel ? 1 : 0) }
            var index = 0
            while index < operations.count {
                let operation = operations[index]
                if operation.wantsChannel && openChannels >= capacityLimit {
                    index += 1
                    continue
                }
                let held = operation.holdsChannel
                switch operation.advance(session) {
                case .progressed:
                    progressed = true
                    index += 1
                case .blocked:
                    index += 1
                case .finished:
                    progressed = true
                    operations.remove(at: index)
                    if capacityLimit < maxChannels { capacityLimit += 1 }
                    retryRefusedChannels()
                case .sessionBroken(let error):
                    return error
                }
                if !held && operation.holdsChannel { openChannels += 1 }
                if held && !operation.holdsChannel { openChannels -= 1 }
                if let exec = operation as? ExecOperation, exec.refusedForCapacity {
                    if openChannels == 0 {
                        exec.failChannelRefused()
                    } else {
                        // The server allows fewer channels than assumed: remember its limit.
                        capacityLimit = openChannels
                    }
                }
            }
            if !progressed && !operations.contains(where: { $0.hasQueuedData() }) { return nil }
        }
        return nil
    }

    // MARK: - SFTP (loop thread only)

    enum SFTPReadiness {
        case pending
        case ready(SFTPContext)
        case failed(SSHError)
    }

    /// The SFTP subsystem, starting it on first use.
    func sftpContext(_ session: OpaquePointer) -> SFTPReadiness {
        if let sftp { return .ready(sftp) }
        if let sftpFailure { return .failed(sftpFailure) }
        sftpStarting = true
        guard let handle = libssh2_sftp_init(session) else {
            let (code, message) = LibSSH2.lastError(session)
            if code == LibSSH2.eagain { return .pending }
            sftpStarting = false
            let error = SSHError(
                .sftp,
                "\(options.displayName): the server refused the SFTP subsystem (\(message)); check `Subsystem sftp` in its sshd_config",
                libssh2Code: code)
            // A refused subsystem stays refused; a broken transport ends the session anyway.
            sftpFailure = error
            return .failed(error)
        }
        sftpStarting = false
        let context = SFTPContext(session: session, sftp: handle, displayName: options.displayName)
        sftp = context
        return .ready(context)
    }

    func claimSFTP(_ operation: AnyObject) -> Bool {
        let id = ObjectIdentifier(operation)
        if activeSFTP == nil { activeSFTP = id }
        return activeSFTP == id
    }

    func releaseSFTP(_ operation: AnyObject) {
        if activeSFTP == ObjectIdentifier(operation) { activeSFTP = nil }
    }

    func sftpHasQueuedData() -> Bool {
        guard let sftp, let channel = libssh2_sftp_get_channel(sftp.sftp) else { return false }
        return libssh2_poll_channel_read(channel, 0) != 0
    }

    private func retryRefusedChannels() {
        for case let exec as ExecOperation in operations where exec.refusedForCapacity {
            exec.retryChannel()
        }
    }

    private func tearDown(disconnect: Bool) {
        if let session {
            libssh2_session_set_blocking(session, 1)
            libssh2_session_set_timeout(session, 1000)
            if let sftp {
                // Frees libssh2's SFTP memory, which the session does not own; on a dead
                // transport these calls fail at once.
                for handle in sftp.openHandles { libssh2_sftp_close_handle(handle) }
                libssh2_sftp_shutdown(sftp.sftp)
                self.sftp = nil
            }
            defer {
                // Channels left open (abandoned after a deadline) make libssh2_session_free
                // try to close them; a shut-down socket makes those attempts fail at once.
                if socket >= 0 { Glibc.shutdown(socket, Int32(SHUT_RDWR)) }
                libssh2_session_free(session)
                self.session = nil
            }
            if disconnect {
                _ = "closed by hostscope".withCString { reason in
                    "".withCString { language in
                        libssh2_session_disconnect_ex(session, Int32(SSH_DISCONNECT_BY_APPLICATION), reason, language)
                    }
                }
            }
        }
        if socket >= 0 {
            close(socket)
            socket = -1
        }
    }
}
