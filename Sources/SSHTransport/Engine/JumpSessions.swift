import Synchronization
import ValueFormats

/// The jump host sessions of an engine: one per jump host (and way to it), shared by every target behind
/// it, each target's stream a `direct-tcpip` channel of it.
///
/// The first target to need a jump host connects it (with its own host key check and authentication);
/// targets that come meanwhile wait for that connect, and its failure is theirs. A jump session lives as
/// long as a target holds a lease on it, and a broken one is replaced by the next target that needs it.
final class JumpSessions: Sendable {
    private typealias Waiter = CheckedContinuation<(SessionLoop, SSHConnectionInfo, UInt64), any Error>

    /// The session new targets behind one jump host get: connecting (with the targets waiting for it) or up.
    private struct Entry {
        var id: UInt64
        var loop: SessionLoop?
        var info: SSHConnectionInfo?
        var waiters: [Waiter] = []
    }

    private struct State {
        var current: [String: Entry] = [:]
        /// Targets holding each jump session, also one that new targets no longer get.
        var leases: [UInt64: Int] = [:]
        /// Every jump session up, by id, until its last target lets go.
        var loops: [UInt64: SessionLoop] = [:]
        var nextID: UInt64 = 0
    }

    private let state = Lock(State())

    /// The jump sessions open now, and how many targets each carries.
    var status: [SSHJumpSessionStatus] {
        state.withLock { state in
            state.loops.sorted { $0.key < $1.key }.map { id, loop in
                SSHJumpSessionStatus(
                    displayName: loop.options.displayName, hostName: loop.options.hostName, port: loop.options.port,
                    targets: state.leases[id] ?? 0, isAlive: loop.isRunning, acceptsTargets: loop.acceptsTunnels)
            }
        }
    }

    /// A session to `hop`, connected if none is open, held until ``JumpLease/release()``.
    ///
    /// - Parameter keepalive: the target's keepalive interval, used when the hop sets none of its own: a
    ///   jump host that vanishes silently is noticed on the jump session's socket.
    /// - Throws: the hop's own connect error (``SSHError`` naming the hop).
    func lease(_ hop: SSHConnectionOptions, keepalive: Duration?, engine: SSHEngine) async throws -> JumpLease {
        var configured = hop
        if configured.keepaliveInterval == nil { configured.keepaliveInterval = keepalive }
        let hop = configured
        let key = hop.sharingKey
        let (loop, info, id) = try await withCheckedThrowingContinuation { (continuation: Waiter) in
            enum Plan {
                case ready(SessionLoop, SSHConnectionInfo, UInt64)
                case wait
                case connect(UInt64)
            }
            let plan = state.withLock { state -> Plan in
                if var entry = state.current[key] {
                    if let loop = entry.loop, let info = entry.info {
                        if loop.acceptsTunnels {
                            state.leases[entry.id, default: 0] += 1
                            return .ready(loop, info, entry.id)
                        }
                        // Broken, closing, or stuck opening a channel: a new session takes the new targets,
                        // and the old one lives on for the targets it carries.
                        state.current[key] = nil
                    } else {
                        state.leases[entry.id, default: 0] += 1
                        entry.waiters.append(continuation)
                        state.current[key] = entry
                        return .wait
                    }
                }
                state.nextID += 1
                state.current[key] = Entry(id: state.nextID, waiters: [continuation])
                state.leases[state.nextID] = 1
                return .connect(state.nextID)
            }
            switch plan {
            case .ready(let loop, let info, let id):
                continuation.resume(returning: (loop, info, id))
            case .wait:
                break
            case .connect(let id):
                Task { await self.connect(hop, key: key, id: id, engine: engine) }
            }
        }
        return JumpLease(sessions: self, key: key, id: id, loop: loop, info: info)
    }

    /// Connects the jump session of entry `id` and tells every target waiting for it.
    private func connect(_ hop: SSHConnectionOptions, key: String, id: UInt64, engine: SSHEngine) async {
        do {
            let (loop, info) = try await SessionLoop.connect(hop, maxChannels: 10, engine: engine)
            let waiters = state.withLock { state -> [Waiter] in
                guard var entry = state.current[key], entry.id == id else {
                    state.leases[id] = nil
                    return []
                }
                let waiters = entry.waiters
                entry.waiters = []
                entry.loop = loop
                entry.info = info
                state.current[key] = entry
                state.loops[id] = loop
                return waiters
            }
            // Nobody is waiting for it any more (its entry was replaced meanwhile): nobody needs it.
            if waiters.isEmpty { loop.requestShutdown() }
            waiters.forEach { $0.resume(returning: (loop, info, id)) }
        } catch {
            let waiters = state.withLock { state -> [Waiter] in
                guard let entry = state.current[key], entry.id == id else { return [] }
                state.current[key] = nil
                state.leases[id] = nil
                return entry.waiters
            }
            waiters.forEach { $0.resume(throwing: error) }
        }
    }

    /// A target let go of its lease; the last one closes the jump session.
    fileprivate func release(key: String, id: UInt64) {
        let closing = state.withLock { state -> SessionLoop? in
            guard let count = state.leases[id] else { return nil }
            guard count <= 1 else {
                state.leases[id] = count - 1
                return nil
            }
            state.leases[id] = nil
            if state.current[key]?.id == id { state.current[key] = nil }
            return state.loops.removeValue(forKey: id)
        }
        closing?.requestShutdown()
    }
}

/// A target's hold on a jump session; released once, when the target's session ends.
final class JumpLease: Sendable {
    let loop: SessionLoop
    let info: SSHConnectionInfo
    private let sessions: JumpSessions
    private let key: String
    private let id: UInt64
    private let released = Atomic<Bool>(false)

    fileprivate init(sessions: JumpSessions, key: String, id: UInt64, loop: SessionLoop, info: SSHConnectionInfo) {
        self.sessions = sessions
        self.key = key
        self.id = id
        self.loop = loop
        self.info = info
    }

    /// The jump host as messages name it: `bastion (127.0.0.1:2201)`.
    var hopDescription: String { loop.options.hopDescription }

    func release() {
        guard !released.exchange(true, ordering: .acquiringAndReleasing) else { return }
        sessions.release(key: key, id: id)
    }

    deinit {
        release()
    }
}

/// A jump session of an ``SSHEngine``, for status displays and tests.
public struct SSHJumpSessionStatus: Sendable, Equatable {
    /// The jump host as written in `ProxyJump` or `-J`.
    public var displayName: String
    public var hostName: String
    public var port: Int
    /// Targets holding it (connected, or connecting through it).
    public var targets: Int
    /// False once its connection broke or it is closing.
    public var isAlive: Bool
    /// False once new targets go to another session: this one broke, or a channel open on it hung past a
    /// target's connect timeout (libssh2 opens one channel at a time per session).
    public var acceptsTargets: Bool
}

extension SSHConnectionOptions {
    /// What decides whether two targets may share a jump session to these options: the same host, user,
    /// credentials, host key checks and way there.
    var sharingKey: String {
        var parts = [
            user, hostName, String(port), identityFiles.joined(separator: "\u{1}"), String(identitiesOnly),
            agentSocket ?? "", knownHostsFiles.joined(separator: "\u{1}"),
            revokedHostKeysFiles.joined(separator: "\u{1}"), hostKeyPolicy == .strict ? "strict" : "accept-new",
            String(allowPassword), String(describing: connectTimeout),
        ]
        parts += SSHAlgorithmKind.allCases.map { algorithms[$0] ?? "" }
        switch route {
        case .direct: parts.append("direct")
        case .command(let command): parts.append("command \(command.command)")
        case .jump(let hop): parts.append("jump \(hop.sharingKey)")
        case .unusable(let error): parts.append("unusable \(error.message)")
        }
        return parts.joined(separator: "\u{0}")
    }

    /// The host as messages name a jump host: `bastion (127.0.0.1:2201)`, or `10.0.0.5:2201` alone when that is
    /// how it was written.
    var hopDescription: String {
        let address = (hostName.contains(":") ? "[\(hostName)]" : hostName) + ":\(port)"
        let written = displayName.split(separator: "@").last.map(String.init) ?? displayName
        if written == address || (port == 22 && written == hostName) { return displayName }
        return "\(displayName) (\(address))"
    }
}
