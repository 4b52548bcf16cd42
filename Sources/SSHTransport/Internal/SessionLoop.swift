import CLibSSH2
import Digests
import Foundation
import Synchronization
import ValueFormats

#if canImport(Glibc)
    import Glibc
#endif

/// One SSH session, driven by the engine's I/O thread it was placed on (``IOReactor``).
///
/// Everything that touches libssh2 for the session runs in ``step(_:reactor:)`` on that thread:
/// the non-blocking TCP connect, the handshake, the host key check, authentication, then the
/// operations (exec channels, the probe shell, SFTP requests), each advanced until all wait on
/// the socket, and at the end a polite close. Other threads hand over work through `inbox` and
/// wake the session; Swift's cooperative pool never blocks on SSH, and neither does the I/O
/// thread: a secret that needs asking (a passphrase, a password) is asked for on a thread of its
/// own while the session waits.
///
/// The session's socket is a TCP connection, or one end of a socketpair: carried by a jump host's
/// session (``TunnelOperation``, on whatever I/O thread that session lives) or by a `ProxyCommand`
/// (``ProxyCommandProcess``). libssh2 sees a socket either way.
// @unchecked Sendable: everything but `inbox` (a Lock), `wakeClaimed` and `tunnelsRetired` (Atomics) is touched
// only by the reactor thread once the session is attached (the reactor's inbox lock orders the
// hand-over).
final class SessionLoop: @unchecked Sendable {
    struct Inbox {
        var incoming: [any LoopOperation] = []
        var shutdownRequested = false
        var shutdownWaiters: [CheckedContinuation<Void, Never>] = []
        /// Set once the session has ended; later submissions fail at once with this error.
        var stoppedError: SSHError?
        /// A secret provider's answer, waiting for the I/O thread.
        var secretAnswer: Secret??
        /// What the jump session carrying this one reported: its channel opened, or failed or broke.
        var tunnel: TunnelEvent?
    }

    private enum Phase {
        case connecting(TCPConnector.Attempt)
        /// Waiting for the jump session to open the channel that carries this session.
        case awaitingTunnel
        /// The socket is connected (a socketpair from the start): the SSH session is set up next.
        case starting
        case handshaking
        /// The handshake over a `ProxyCommand` failed: its exit status and last words are awaited
        /// briefly, to say what went wrong.
        case reportingProxyFailure(SSHError, until: ContinuousClock.Instant)
        case authenticating(Authenticator)
        /// Authentication waits for a secret asked for on another thread.
        case awaitingSecret(Authenticator, since: ContinuousClock.Instant)
        case running
        case closing(ClosingStep)
        case ended
    }

    /// What the jump session carrying this one reports.
    enum TunnelEvent {
        case opened
        case failed(SSHError)
    }

    /// What carries the session's bytes.
    enum Carrier {
        case tcp
        case tunnel(JumpLease)
        case command(ProxyCommandProcess)
    }

    /// The polite end of a session, one non-blocking call at a time.
    private enum ClosingStep {
        case sftpHandles
        case sftpShutdown
        case disconnect
    }

    let options: SSHConnectionOptions
    /// Upper bound on channels open at once; sshd's `MaxSessions` defaults to 10.
    let maxChannels: Int
    /// The session's key in its reactor's tables.
    let token: UInt64
    let reactor: IOReactor
    let carrier: Carrier
    let inbox = Lock(Inbox())
    private let wakeClaimed = Atomic<Bool>(false)
    /// Set (from a target's thread) when this session, as a jump host, must take no new targets.
    let tunnelsRetired = Atomic<Bool>(false)

    private static let nextToken = Atomic<UInt64>(0)

    // I/O-thread state.
    private var phase: Phase
    private(set) var connectDeadline: ContinuousClock.Instant
    private var connected: CheckedContinuation<SSHConnectionInfo, any Error>?
    private var connectStarted = ContinuousClock.now
    private var tcpDuration: Duration = .zero
    private var handshakeStarted = ContinuousClock.now
    private var handshakeDuration: Duration = .zero
    private var authStarted = ContinuousClock.now
    private var remoteAddress = ""
    private var banner: String?
    private var verifiedKey: KnownHostsVerifier.Verified?
    private(set) var session: OpaquePointer?
    private(set) var socket: Int32 = -1
    private var socketGeneration = 0
    private var operations: [any LoopOperation] = []
    private var capacityLimit: Int
    private var nextKeepalive: ContinuousClock.Instant?
    private var closeDeadline: ContinuousClock.Instant?
    private var endError: SSHError?
    /// The SFTP subsystem, started by the first SFTP request and kept for the session.
    private var sftp: SFTPContext?
    private var sftpFailure: SSHError?
    private var sftpStarting = false
    /// The SFTP operation allowed to call libssh2 (see ``SFTPOperation``).
    private var activeSFTP: ObjectIdentifier?
    /// The tunnel whose channel is being opened: libssh2 has one channel-open in progress per session.
    private var channelOpener: ObjectIdentifier?
    /// Set by the first channel read of an advancing round, which also reads the socket for every other
    /// channel: the rest of the round reads only what libssh2 already holds.
    var transportDrained = false
    /// The first bytes the server sent, peeked at during the handshake to say what answered when it fails.
    var firstBytes: [UInt8]?
    /// A `ProxyCommand`'s standard error, watched so it is read as it comes.
    var errorWatch: DescriptorWatch?
    /// What the jump session reported about this session's channel after it opened (it broke).
    var tunnelFailure: SSHError?

    /// Linux's TCP_QUICKACK socket option (netinet/tcp.h).
    private static let tcpQuickAck: Int32 = 12

    /// How long a timed-out or cancelled channel may take to close before the session is
    /// considered hung.
    private static let windDownGrace: Duration = .seconds(5)
    /// How long a polite close may take before the connection is simply dropped.
    private static let closeGrace: Duration = .seconds(2)
    /// Rounds of advancing the operations in one step before the session yields to the others
    /// on its I/O thread.
    private static let roundsPerStep = 64

    private init(
        options: SSHConnectionOptions, maxChannels: Int, reactor: IOReactor, addresses: [TCPConnector.Address],
        deadline: ContinuousClock.Instant
    ) {
        self.options = options
        self.maxChannels = max(1, maxChannels)
        self.capacityLimit = max(1, maxChannels)
        self.reactor = reactor
        self.carrier = .tcp
        self.token = Self.nextToken.add(1, ordering: .relaxed).newValue
        self.connectDeadline = deadline
        self.phase = .connecting(
            TCPConnector.Attempt(addresses: addresses, port: options.port, displayName: options.displayName))
    }

    /// A session whose socket is one end of a socketpair, carried by a jump session or a proxy command.
    private init(
        options: SSHConnectionOptions, maxChannels: Int, reactor: IOReactor, carrier: Carrier, socket: Int32,
        deadline: ContinuousClock.Instant
    ) {
        self.options = options
        self.maxChannels = max(1, maxChannels)
        self.capacityLimit = max(1, maxChannels)
        self.reactor = reactor
        self.carrier = carrier
        self.token = Self.nextToken.add(1, ordering: .relaxed).newValue
        self.connectDeadline = deadline
        self.socket = socket
        self.socketGeneration = 1
        if case .tunnel = carrier {
            self.phase = .awaitingTunnel
        } else {
            self.phase = .starting
        }
    }

    var isRunning: Bool { inbox.withLock { $0.stoppedError == nil && !$0.shutdownRequested } }

    /// Connects, checks the host key and authenticates on one of `engine`'s I/O threads; returns
    /// once the session is ready.
    ///
    /// The connect waits for a slot of the engine's ``HandshakeGate`` first; its timeout counts
    /// from then.
    static func connect(_ options: SSHConnectionOptions, maxChannels: Int, engine: SSHEngine) async throws
        -> (SessionLoop, SSHConnectionInfo)
    {
        _ = LibSSH2.initialized
        _ = cryptoWarmUp
        switch options.route {
        case .unusable(let error):
            throw error
        case .jump(let hop):
            return try await connect(options, through: hop, maxChannels: maxChannels, engine: engine)
        case .command(let command):
            return try await connect(options, command: command, maxChannels: maxChannels, engine: engine)
        case .direct:
            break
        }
        // The name is resolved before a handshake slot is taken: a slow resolver holds up this host
        // alone, not the connects waiting behind it.
        let addresses: [TCPConnector.Address]
        if let numeric = TCPConnector.numericAddresses(host: options.hostName, port: options.port) {
            addresses = numeric
        } else {
            addresses = try await resolveOffThread(options)
        }
        if let verbose = options.verbose {
            let listed = addresses.map(\.text).filter { $0 != options.hostName }
            let resolved = listed.isEmpty ? "" : " (\(listed.joined(separator: ", ")))"
            verbose("\(options.displayName): connecting to \(options.hostName)\(resolved) port \(options.port)")
        }
        try await engine.handshakes.enter()
        defer { engine.handshakes.leave() }
        let deadline = ContinuousClock.now + options.connectTimeout
        let loop = SessionLoop(
            options: options, maxChannels: maxChannels, reactor: engine.placeSession(), addresses: addresses,
            deadline: deadline)
        let info = try await withCheckedThrowingContinuation {
            (continuation: CheckedContinuation<SSHConnectionInfo, any Error>) in
            loop.connected = continuation
            loop.reactor.attach(loop)
        }
        return (loop, info)
    }

    /// Connects through a session to the jump host `hop`, shared with every other target behind it.
    ///
    /// The jump session is obtained (connected if need be) before this session waits for a handshake
    /// slot: a target holding a slot while its jump host waits for one could leave no slot for it.
    private static func connect(
        _ options: SSHConnectionOptions, through hop: SSHConnectionOptions, maxChannels: Int, engine: SSHEngine
    ) async throws -> (SessionLoop, SSHConnectionInfo) {
        options.verbose?("\(options.displayName): going through jump host \(hop.hopDescription)")
        let lease: JumpLease
        do {
            lease = try await engine.jumps.lease(hop, keepalive: options.keepaliveInterval, engine: engine)
        } catch let error as SSHError {
            throw jumpFailure(error, hop: hop, target: options)
        }
        do {
            try await engine.handshakes.enter()
        } catch {
            lease.release()
            throw error
        }
        defer { engine.handshakes.leave() }
        var pair: [Int32] = [-1, -1]
        let flags = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        guard socketpair(AF_UNIX, flags, 0, &pair) == 0 else {
            lease.release()
            throw SSHError(
                .connect, "\(options.displayName): cannot create a socket pair (\(String(cString: strerror(errno))))")
        }
        let loop = SessionLoop(
            options: options, maxChannels: maxChannels, reactor: engine.placeSession(), carrier: .tunnel(lease),
            socket: pair[0], deadline: .now + options.connectTimeout)
        let tunnel = TunnelOperation(
            jump: lease.loop, target: loop, host: options.hostName, port: options.port, descriptor: pair[1])
        let info = try await withCheckedThrowingContinuation {
            (continuation: CheckedContinuation<SSHConnectionInfo, any Error>) in
            loop.connected = continuation
            loop.reactor.attach(loop)
            lease.loop.submit(tunnel)
        }
        return (loop, info)
    }

    /// Connects over the standard input and output of a `ProxyCommand`.
    private static func connect(
        _ options: SSHConnectionOptions, command: SSHProxyCommand, maxChannels: Int, engine: SSHEngine
    ) async throws -> (SessionLoop, SSHConnectionInfo) {
        try await engine.handshakes.enter()
        defer { engine.handshakes.leave() }
        options.verbose?("\(options.displayName): running ProxyCommand \(command.command)")
        let (process, socket) = try ProxyCommandProcess.spawn(command, displayName: options.displayName)
        let loop = SessionLoop(
            options: options, maxChannels: maxChannels, reactor: engine.placeSession(), carrier: .command(process),
            socket: socket, deadline: .now + options.connectTimeout)
        let info = try await withCheckedThrowingContinuation {
            (continuation: CheckedContinuation<SSHConnectionInfo, any Error>) in
            loop.connected = continuation
            loop.reactor.attach(loop)
        }
        return (loop, info)
    }

    /// `getaddrinfo` can wait seconds for a resolver: it runs on a thread of its own.
    private static func resolveOffThread(_ options: SSHConnectionOptions) async throws -> [TCPConnector.Address] {
        try await withCheckedThrowingContinuation {
            (continuation: CheckedContinuation<[TCPConnector.Address], any Error>) in
            Thread.detachNewThread {
                nameCurrentThread("ssh resolve")
                do {
                    continuation.resume(
                        returning: try TCPConnector.resolve(
                            host: options.hostName, port: options.port, displayName: options.displayName,
                            origin: options.hostNameOrigin, configFile: options.userConfigFile))
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }

    /// libcrypto's set-up, started with the process's first session on a thread of its own, so that it
    /// runs while that session connects (``CryptoWarmUp``).
    private static let cryptoWarmUp: Void = Thread.detachNewThread { CryptoWarmUp.run() }

    /// Names the thread as `top -H`, `ps -L` and `perf` show it. Linux keeps 15 bytes of a name and
    /// refuses a longer one outright, so it is cut (at a character boundary) rather than lost.
    static func nameCurrentThread(_ name: String) {
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

    // MARK: - Any thread

    /// Hands an operation to the session; fails it at once when the session has ended.
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

    /// Has the session stepped soon, so it notices cancellations and new work.
    func wake() {
        reactor.wake(self)
    }

    /// True when this call is the one that puts the session on its reactor's list.
    func claimWake() -> Bool {
        wakeClaimed.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
    }

    /// Called by the reactor just before it steps a woken session.
    func releaseWake() {
        wakeClaimed.store(false, ordering: .releasing)
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

    /// Asks the session to end without waiting for it (used from `deinit` of the owner).
    func requestShutdown() {
        inbox.withLock { $0.shutdownRequested = true }
        wake()
    }

    // MARK: - I/O thread

    /// Does everything the session can do now without blocking, and says what it waits for next.
    func step(_ readiness: IOReactor.Readiness, reactor: IOReactor) -> IOReactor.Interest {
        while true {
            switch phase {
            case .connecting(var attempt):
                if ContinuousClock.now >= connectDeadline { return fail(attempt.timedOut()) }
                switch attempt.step() {
                case .waiting(let fd):
                    phase = .connecting(attempt)
                    socketGeneration += 1
                    var interest = IOReactor.Interest(descriptor: fd, descriptorGeneration: socketGeneration)
                    interest.writable = true
                    interest.deadline = connectDeadline
                    return interest
                case .failed(let error):
                    return fail(error)
                case .connected(let fd, let address):
                    socket = fd
                    socketGeneration += 1
                    remoteAddress = address
                    if let interval = options.keepaliveInterval {
                        TCPConnector.enableKeepalive(fd, interval: interval, count: options.keepaliveCountMax)
                    }
                    phase = .starting
                }

            case .awaitingTunnel:
                let event = inbox.withLock { state -> TunnelEvent? in
                    defer { state.tunnel = nil }
                    return state.tunnel
                }
                switch event {
                case .opened?:
                    if case .tunnel(let lease) = carrier {
                        remoteAddress = "\(options.hostName) via \(lease.hopDescription)"
                    }
                    phase = .starting
                case .failed(let error)?:
                    return fail(error)
                case nil:
                    if ContinuousClock.now >= connectDeadline {
                        return fail(tunnelTimeout())
                    }
                    var interest = IOReactor.Interest()
                    interest.deadline = connectDeadline
                    return interest
                }

            case .starting:
                tcpDuration = connectStarted.duration(to: .now)
                sayConnected()
                if case .command(let process) = carrier, errorWatch == nil, process.errorDescriptor >= 0 {
                    let watch = reactor.watch(process.errorDescriptor, for: self)
                    reactor.update(watch, readable: true, writable: false)
                    errorWatch = watch
                }
                do {
                    try startSession()
                } catch {
                    return fail(error)
                }
                handshakeStarted = .now
                phase = .handshaking

            case .handshaking:
                guard let session else { return fail(SSHError(.handshake, "\(options.displayName): no session")) }
                drainProxyErrors()
                if ContinuousClock.now >= connectDeadline {
                    return handshakeFailed(code: Int32(LIBSSH2_ERROR_TIMEOUT), message: "timed out")
                }
                if firstBytes == nil { peekFirstBytes() }
                let result = libssh2_session_handshake(session, libssh2_socket_t(socket))
                if result == LibSSH2.eagain { return waitOnSocket(deadline: connectDeadline) }
                if result != 0 {
                    return handshakeFailed(code: result, message: LibSSH2.lastError(session).message)
                }
                banner = libssh2_session_banner_get(session).map { String(cString: $0) }
                do {
                    verifiedKey = try KnownHostsVerifier(options: options).verify(session)
                } catch {
                    return fail(error)
                }
                handshakeDuration = handshakeStarted.duration(to: .now)
                sayHandshake()
                authStarted = .now
                phase = .authenticating(Authenticator(options: options, serverBanner: banner))

            case .authenticating(let authenticator):
                guard let session else { return fail(SSHError(.auth, "\(options.displayName): no session")) }
                if ContinuousClock.now >= connectDeadline {
                    return fail(
                        SSHError(
                            .timeout,
                            "\(options.displayName): timed out during authentication; the host may be overloaded"))
                }
                switch authenticator.advance(session) {
                case .blocked:
                    return waitOnSocket(deadline: connectDeadline)
                case .needsSecret(let request):
                    phase = .awaitingSecret(authenticator, since: .now)
                    askForSecret(request)
                    return IOReactor.Interest(descriptor: socket, descriptorGeneration: socketGeneration)
                case .failed(let error):
                    return fail(error)
                case .authenticated(let method):
                    finishConnecting(session, method: method)
                }

            case .awaitingSecret(let authenticator, let since):
                guard
                    let answer = inbox.withLock({ state -> Secret?? in
                        defer { state.secretAnswer = nil }
                        return state.secretAnswer
                    })
                else {
                    return IOReactor.Interest(descriptor: socket, descriptorGeneration: socketGeneration)
                }
                // A person may take a while to type: that time does not count against the connect.
                connectDeadline = connectDeadline + since.duration(to: .now)
                authenticator.supply(answer)
                phase = .authenticating(authenticator)

            case .reportingProxyFailure(let error, let until):
                guard case .command(let process) = carrier else { return fail(error) }
                drainProxyErrors()
                if process.reap() == nil && ContinuousClock.now < until {
                    var interest = IOReactor.Interest()
                    interest.deadline = .now + .milliseconds(10)
                    return interest
                }
                return fail(proxyCommandFailure(error, process))

            case .running:
                return stepRunning(readiness)

            case .closing(let closingStep):
                return stepClosing(closingStep)

            case .ended:
                var interest = IOReactor.Interest()
                interest.ended = true
                return interest
            }
        }
    }

    private func startSession() throws(SSHError) {
        guard let session = libssh2_session_init_ex(nil, nil, nil, nil) else {
            throw SSHError(.handshake, "\(options.displayName): cannot allocate an SSH session")
        }
        self.session = session
        libssh2_session_set_blocking(session, 0)
        try LibSSH2.applyAlgorithmPreferences(session, options.algorithms, host: options.displayName)
    }

    /// What a session blocked in libssh2 waits for: the directions libssh2 names.
    private func waitOnSocket(deadline: ContinuousClock.Instant?) -> IOReactor.Interest {
        var interest = IOReactor.Interest(descriptor: socket, descriptorGeneration: socketGeneration)
        if let session {
            let directions = libssh2_session_block_directions(session)
            interest.readable = directions & Int32(LIBSSH2_SESSION_BLOCK_INBOUND) != 0
            interest.writable = directions & Int32(LIBSSH2_SESSION_BLOCK_OUTBOUND) != 0
        }
        interest.deadline = deadline
        return interest
    }

    /// Asks the secret provider on a thread of its own (it may prompt on the terminal) and wakes
    /// the session with the answer.
    private func askForSecret(_ request: SecretRequest) {
        let provider = options.secrets
        Thread.detachNewThread { [self] in
            // A new thread inherits its creator's name; this one is not an I/O thread.
            Self.nameCurrentThread("ssh secret")
            let answer = provider?(request)
            inbox.withLock { $0.secretAnswer = .some(answer) }
            wake()
        }
    }

    private func finishConnecting(_ session: OpaquePointer, method: String) {
        if let interval = options.keepaliveInterval {
            // No reply asked for: libssh2 keeps every reply to a global request in the session's packet
            // queue for good (a leak per keepalive, and a queue that `libssh2_poll_channel_read` reports
            // as an error from then on). The reply told nothing anyway: libssh2 does not track it, and a
            // dead peer is found by the socket's TCP keepalives and the commands' deadlines.
            libssh2_keepalive_config(session, 0, UInt32(max(1, interval.components.seconds)))
            nextKeepalive = .now + interval
        }
        var info = SSHConnectionInfo(
            remoteAddress: remoteAddress, serverBanner: banner, hostKeyType: verifiedKey?.keyType ?? "unknown",
            hostKeyFingerprint: verifiedKey?.fingerprint ?? "", hostKeyStatus: verifiedKey?.status ?? .known(file: ""),
            authMethod: method, tcpConnectDuration: tcpDuration, handshakeDuration: handshakeDuration,
            authDuration: authStarted.duration(to: .now))
        info.cipher = libssh2_session_methods(session, LIBSSH2_METHOD_CRYPT_SC).map { String(cString: $0) } ?? ""
        info.mac = libssh2_session_methods(session, LIBSSH2_METHOD_MAC_SC).map { String(cString: $0) } ?? ""
        options.verbose?(
            "\(options.displayName): authenticated as \(options.user) with \(method) in "
                + "\(Self.milliseconds(info.authDuration)); cipher \(info.cipher), MAC \(info.mac)")
        phase = .running
        let continuation = connected
        connected = nil
        continuation?.resume(returning: info)
    }

    // MARK: - -v

    private func sayConnected() {
        guard let verbose = options.verbose else { return }
        let took = Self.milliseconds(tcpDuration)
        switch carrier {
        case .tcp:
            verbose("\(options.displayName): connected to \(remoteAddress) port \(options.port) in \(took)")
        case .tunnel(let lease):
            verbose(
                "\(options.displayName): reached \(options.hostName) port \(options.port) through "
                    + "\(lease.hopDescription) in \(took)")
        case .command:
            verbose("\(options.displayName): ProxyCommand started; talking SSH over its standard input and output")
        }
    }

    private func sayHandshake() {
        guard let verbose = options.verbose else { return }
        verbose(
            "\(options.displayName): server \(banner ?? "(no banner)"), handshake in \(Self.milliseconds(handshakeDuration))"
        )
        guard let verifiedKey else { return }
        let key = "\(verifiedKey.keyType) \(verifiedKey.fingerprint)"
        switch verifiedKey.status {
        case .known(let file):
            verbose("\(options.displayName): host key \(key) found in \(file) for \(options.knownHostsName)")
        case .accepted(let file):
            verbose("\(options.displayName): host key \(key) was not known; recorded in \(file)")
        }
    }

    static func milliseconds(_ duration: Duration) -> String {
        "\(Int(duration.inMilliseconds.rounded())) ms"
    }

    /// The handshake failed or timed out: over a `ProxyCommand`, its exit status and last words are
    /// gathered first (its end is what a failed handshake usually means).
    private func handshakeFailed(code: Int32, message: String) -> IOReactor.Interest {
        let error = handshakeError(code: code, message: message)
        guard case .command = carrier else { return fail(error) }
        let timedOut = code == Int32(LIBSSH2_ERROR_TIMEOUT)
        phase = .reportingProxyFailure(error, until: timedOut ? .now : .now + .milliseconds(500))
        var interest = IOReactor.Interest()
        interest.runAgain = true
        return interest
    }

    /// The connect failed: nothing to say goodbye to.
    private func fail(_ error: SSHError) -> IOReactor.Interest {
        endError = routeAnnotated(error)
        releaseConnection()
        return finish()
    }

    // MARK: - Running

    private func stepRunning(_ readiness: IOReactor.Readiness) -> IOReactor.Interest {
        guard let session else {
            return end(SSHError(.sessionClosed, "\(options.displayName): no session"), graceful: false)
        }
        if readiness.readable, case .tcp = carrier {
            // sshd leaves Nagle on for sessions without a terminal, so its small replies wait
            // for our ACK, which Linux delays by up to 40 ms: ask for immediate ACKs again
            // (the kernel drops quick-ACK mode on its own after a while).
            var one: Int32 = 1
            setsockopt(socket, Int32(IPPROTO_TCP), Self.tcpQuickAck, &one, socklen_t(MemoryLayout<Int32>.size))
        }
        let (incoming, shutdown, tunnelEvent) = inbox.withLock { state in
            defer {
                state.incoming = []
                state.tunnel = nil
            }
            return (state.incoming, state.shutdownRequested, state.tunnel)
        }
        for operation in incoming { operation.attach(to: reactor) }
        operations.append(contentsOf: incoming)
        if case .failed(let error)? = tunnelEvent {
            // The jump session broke: what is left of the stream ends with it.
            tunnelFailure = error
            return end(error, graceful: false)
        }
        drainProxyErrors()
        if shutdown {
            return end(SSHError(.sessionClosed, "\(options.displayName): the session was closed"), graceful: true)
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

        var (error, yielded) = advanceAll(session)
        if let error { return end(error, graceful: false) }
        let killers = operations.compactMap { operation -> ExecOperation? in
            guard let pid = operation.takeKillRequest() else { return nil }
            return ExecOperation.killer(pid: pid, displayName: options.displayName)
        }
        if !killers.isEmpty {
            for killer in killers { killer.attach(to: reactor) }
            operations.append(contentsOf: killers)
            (error, yielded) = advanceAll(session)
            if let error { return end(error, graceful: false) }
        }

        if let due = nextKeepalive, due <= .now {
            var seconds: Int32 = 0
            let result = libssh2_keepalive_send(session, &seconds)
            if result != 0 && result != LibSSH2.eagain && LibSSH2.isFatalTransportError(result) {
                let error = LibSSH2.lastError(session)
                return end(
                    SSHError(
                        .sessionClosed, "\(options.displayName): the connection broke (\(error.message))",
                        libssh2Code: result), graceful: false)
            }
            nextKeepalive = .now + .seconds(max(1, Int(seconds)))
        }

        let idle = operations.allSatisfy(\.isWaitingForConsumer)
        if idle && readiness.hangUp {
            return end(
                SSHError(.sessionClosed, "\(options.displayName): the server closed the connection"), graceful: false)
        }
        var interest: IOReactor.Interest
        if idle {
            // Idle (or only waiting for consumers to catch up): watch only for the peer closing.
            // Unread data (a keepalive reply) stays in the socket until the next operation lets
            // libssh2 read it.
            interest = IOReactor.Interest(descriptor: socket, descriptorGeneration: socketGeneration)
            interest.hangUpOnly = true
        } else {
            interest = waitOnSocket(deadline: nil)
            interest.busy = true
        }
        interest.runAgain = yielded
        var wakeAt = nextKeepalive
        for operation in operations {
            guard let deadline = operation.deadline else { continue }
            let due = deadline <= .now ? deadline + Self.windDownGrace : deadline
            wakeAt = wakeAt.map { min($0, due) } ?? due
        }
        interest.deadline = wakeAt
        return interest
    }

    /// Advances the operations until none makes progress, or until the step's share of the
    /// thread is used up (then `yielded` is true and the reactor steps the session again after
    /// the others); returns an error when the session broke.
    private func advanceAll(_ session: OpaquePointer) -> (error: SSHError?, yielded: Bool) {
        for _ in 0..<Self.roundsPerStep {
            transportDrained = false
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
                    return (error, false)
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
            if !progressed && !operations.contains(where: { $0.hasQueuedData() }) { return (nil, false) }
        }
        return (nil, true)
    }

    // MARK: - Ending

    /// Ends the session with `error` for every pending and later operation; a graceful end first
    /// closes SFTP and says goodbye to the server, without blocking.
    private func end(_ error: SSHError, graceful: Bool) -> IOReactor.Interest {
        endError = routeAnnotated(error)
        guard graceful, session != nil else {
            // The session is marked ended before its operations hear of it: a caller that sees
            // the failure and asks whether the session lives must get "no".
            releaseConnection()
            return finish()
        }
        // Closing on request: new work is refused already (see `submit`).
        let leftovers = operations
        operations = []
        for operation in leftovers { operation.abandon(error) }
        closeDeadline = .now + Self.closeGrace
        closingHandles = sftp?.openHandles
        return stepClosing(.sftpHandles)
    }

    /// SFTP handles still to close once a polite close has begun (nil before).
    private var closingHandles: [OpaquePointer]?

    private func stepClosing(_ start: ClosingStep) -> IOReactor.Interest {
        guard let session, let closeDeadline, closeDeadline > .now else {
            releaseConnection()
            return finish()
        }
        var current = start
        while true {
            switch current {
            case .sftpHandles:
                if let handle = closingHandles?.first {
                    if libssh2_sftp_close_handle(handle) == LibSSH2.eagain {
                        phase = .closing(current)
                        return waitOnSocket(deadline: closeDeadline)
                    }
                    closingHandles?.removeFirst()
                } else {
                    current = .sftpShutdown
                }
            case .sftpShutdown:
                if let sftp {
                    if libssh2_sftp_shutdown(sftp.sftp) == LibSSH2.eagain {
                        phase = .closing(current)
                        return waitOnSocket(deadline: closeDeadline)
                    }
                    self.sftp = nil
                }
                current = .disconnect
            case .disconnect:
                let result = "closed by hostscope".withCString { reason in
                    "".withCString { language in
                        libssh2_session_disconnect_ex(session, Int32(SSH_DISCONNECT_BY_APPLICATION), reason, language)
                    }
                }
                if result == LibSSH2.eagain {
                    phase = .closing(current)
                    return waitOnSocket(deadline: closeDeadline)
                }
                releaseConnection()
                return finish()
            }
        }
    }

    /// Frees libssh2's session and closes the socket, without waiting for the server: the socket
    /// is shut down first, so every call libssh2 still makes (closing channels and SFTP handles)
    /// fails at once instead of waiting on a host that may not answer.
    private func releaseConnection() {
        if socket >= 0 { Glibc.shutdown(socket, Int32(SHUT_RDWR)) }
        if let session {
            libssh2_session_set_blocking(session, 1)
            libssh2_session_set_timeout(session, 1000)
            if let sftp {
                // Frees libssh2's SFTP memory, which the session does not own.
                for handle in closingHandles ?? sftp.openHandles {
                    libssh2_sftp_close_handle(handle)
                }
                libssh2_sftp_shutdown(sftp.sftp)
                self.sftp = nil
            }
            closingHandles = nil
            libssh2_session_free(session)
            self.session = nil
        }
        if socket >= 0 {
            close(socket)
            socket = -1
        }
        if let errorWatch {
            reactor.unwatch(errorWatch)
            self.errorWatch = nil
        }
        if case .command(let process) = carrier {
            process.terminate()
        }
    }

    /// The session has ended: everyone waiting hears why.
    private func finish() -> IOReactor.Interest {
        phase = .ended
        if case .tunnel(let lease) = carrier {
            lease.release()
        }
        let error = endError ?? SSHError(.sessionClosed, "\(options.displayName): the session ended")
        if let continuation = connected {
            connected = nil
            continuation.resume(throwing: error)
        }
        let (incoming, waiters) = inbox.withLock { state in
            state.stoppedError = error
            defer {
                state.incoming = []
                state.shutdownWaiters = []
            }
            return (state.incoming, state.shutdownWaiters)
        }
        let leftovers = operations
        operations = []
        for operation in leftovers + incoming { operation.abandon(error) }
        waiters.forEach { $0.resume() }
        var interest = IOReactor.Interest()
        interest.ended = true
        return interest
    }

    func handshakeError(code: Int32, message: String) -> SSHError {
        let name = options.displayName
        if let evidence = nonSSHEvidence {
            return SSHError(
                .handshake,
                "\(name): the server at \(options.hostName) port \(options.port) sent \(ForeignText.quoted(evidence)) "
                    + "where an SSH banner (SSH-2.0-…) was expected; is an SSH server listening there?",
                libssh2Code: code)
        }
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

    // MARK: - SFTP (I/O thread only)

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

    /// Whether `tunnel` may open its channel now (no other tunnel's open is in progress).
    func claimChannelOpen(_ tunnel: AnyObject) -> Bool {
        let id = ObjectIdentifier(tunnel)
        if channelOpener == nil { channelOpener = id }
        return channelOpener == id
    }

    func releaseChannelOpen(_ tunnel: AnyObject) {
        if channelOpener == ObjectIdentifier(tunnel) { channelOpener = nil }
    }

    func sftpHasQueuedData() -> Bool {
        guard let sftp, let channel = libssh2_sftp_get_channel(sftp.sftp) else { return false }
        return LibSSH2.hasQueuedData(channel, stream: 0)
    }

    private func retryRefusedChannels() {
        for case let exec as ExecOperation in operations where exec.refusedForCapacity {
            exec.retryChannel()
        }
    }
}
