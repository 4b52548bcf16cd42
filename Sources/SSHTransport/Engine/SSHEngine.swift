import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The threads that run every SSH session of the process: a small fixed set of I/O threads
/// (one per core by default), each driving many non-blocking libssh2 sessions from one `epoll`
/// set, and a ``HandshakeGate`` that bounds how many sessions connect at once.
///
/// A session stays on the I/O thread it was placed on (the least loaded one) for its whole life,
/// so libssh2 is never used for it from two threads. Nothing blocking runs on these threads: name
/// resolution and secret prompts run on threads of their own before or beside a session's steps,
/// and Swift's cooperative pool never waits on SSH. Most programs use ``shared``.
public final class SSHEngine: Sendable {
    /// The process's engine: one I/O thread per core (at most 8), 8 connects at once per core.
    public static let shared = SSHEngine()

    /// Bounds connects under way at once.
    public let handshakes: HandshakeGate
    private let reactors: [IOReactor]
    /// Jump host sessions, each shared by every target behind it.
    let jumps = JumpSessions()

    /// - Parameters:
    ///   - threads: I/O threads; `nil` means one per core, at most 8.
    ///   - concurrentHandshakes: connects (TCP, key exchange, authentication) under way at once;
    ///     `nil` means 8 per I/O thread. More at once do not finish sooner when the hosts' side is
    ///     what limits them (sshd starting a process per connection): each takes longer, and past
    ///     its connect timeout it fails, where it would have succeeded waiting its turn.
    public init(threads: Int? = nil, concurrentHandshakes: Int? = nil) {
        let count = max(1, threads ?? min(8, ProcessInfo.processInfo.activeProcessorCount))
        reactors = (0..<count).map { IOReactor(index: $0) }
        handshakes = HandshakeGate(limit: concurrentHandshakes ?? 8 * count)
    }

    /// The number of I/O threads.
    public var threadCount: Int { reactors.count }

    /// Sessions (connecting, up or closing) on each I/O thread.
    public var sessionsPerThread: [Int] { reactors.map(\.load) }

    /// The jump host sessions open now (`ProxyJump`, `-J`), each carrying every target behind it.
    public var jumpSessions: [SSHJumpSessionStatus] { jumps.status }

    /// The I/O thread with the fewest sessions.
    func placeSession() -> IOReactor {
        reactors.min { $0.load < $1.load } ?? reactors[0]
    }
}
