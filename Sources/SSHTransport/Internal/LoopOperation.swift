import Synchronization
import ValueFormats

/// How far one call to ``LoopOperation/advance(_:)`` got.
enum Advance {
    /// Something changed; the loop should try every operation again before polling.
    case progressed
    /// Waiting for the socket.
    case blocked
    /// Done; its caller has been resumed.
    case finished
    /// The transport is unusable; every operation of the session must fail.
    case sessionBroken(SSHError)
}

/// Work that a session's I/O thread drives with non-blocking libssh2 calls.
///
/// Everything but ``requestCancel()`` runs on the session's I/O thread only.
protocol LoopOperation: AnyObject, Sendable {
    var deadline: ContinuousClock.Instant? { get }
    /// True while the operation waits for a channel to be opened for it, so the loop can keep
    /// the number of open channels within the server's `MaxSessions`.
    var wantsChannel: Bool { get }
    /// True while the operation holds an open channel.
    var holdsChannel: Bool { get }
    /// Does as much as possible without blocking.
    func advance(_ session: OpaquePointer) -> Advance
    /// Whether libssh2 already holds data for this operation that a read would return; the
    /// loop must not sleep in poll while it does.
    func hasQueuedData() -> Bool
    /// The deadline passed.
    func expire()
    /// Fails the operation without touching libssh2: the session is gone or shutting down.
    func abandon(_ error: SSHError)
    /// Asks for cancellation; may be called from any thread.
    func requestCancel()
    /// True while the operation waits for its consumer, not for the socket: the loop then
    /// sleeps until woken instead of polling the socket on its behalf.
    var isWaitingForConsumer: Bool { get }
    /// The pid of a process group to end on the host (a command past its deadline), handed
    /// out once.
    func takeKillRequest() -> Int?
    /// Called on the I/O thread when the session takes the operation on, before its first step: the
    /// thread's ``IOReactor/readBuffer`` serves the operation's reads.
    func attach(to reactor: IOReactor)
}

extension LoopOperation {
    var isWaitingForConsumer: Bool { false }
    func takeKillRequest() -> Int? { nil }
    func attach(to reactor: IOReactor) {}
}

/// A cancellation flag set from any thread and read by the session's I/O thread.
final class CancellationFlag: Sendable {
    private let flag = Lock(false)

    func set() { flag.withLock { $0 = true } }
    var isSet: Bool { flag.withLock { $0 } }
}
